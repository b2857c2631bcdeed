/**
 * Job tables of a service's own: a service ships its own job table under a
 * name it picks, and every job_* function serves it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createJobTable } from '../store/harness.ts';
import { JOB_STATUSES } from '../../src/lib/state.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
	await createJobTable(db.sql, 'exports'); // users invent kinds in it
	await db.sql`create schema billing`;
	// A job table in its own schema needs that schema usable by the roles that call the functions.
	await db.sql`grant usage on schema billing to authenticated, service_role`;
	await db.sql`select supabase_jobs.create_job_table('invoices_jobs', 'billing')`;
	await db.sql`select supabase_jobs.register_job_kind('*', 'billing.invoices_jobs')`; // users invent kinds in these tests
});

describe('A job table of its own, under a name the service picks', () => {
	it('a created table has the same columns, checks, indexes, comments, RLS and triggers as jobs', async () => {
		const shape = async (t: string) =>
			(
				await db.sql`select attname, format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = ${t}::regclass and attnum > 0 and not attisdropped order by attnum`
			).map((r) => `${r.attname}:${r.type}`);
		expect(await shape('public.exports')).toEqual(await shape('public.jobs'));
		const [info] = await db.sql`
			select c.relrowsecurity as rls,
			       (select count(*)::int from pg_policy p where p.polrelid = c.oid) as policies,
			       (select count(*)::int from pg_trigger t where t.tgrelid = c.oid and not t.tgisinternal and t.tgfoid::regproc::text like 'supabase_jobs.%') as triggers,
			       (select count(*)::int from pg_index i where i.indrelid = c.oid) as indexes,
			       (select count(*)::int from pg_constraint k where k.conrelid = c.oid and k.contype = 'c') as checks,
			       (select count(*)::int from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and col_description(c.oid, a.attnum) is not null) as commented
			from pg_class c where c.oid = 'public.exports'::regclass`;
		const [ref] = await db.sql`
			select (select count(*)::int from pg_policy p where p.polrelid = 'public.jobs'::regclass) as policies,
			       (select count(*)::int from pg_index i where i.indrelid = 'public.jobs'::regclass) as indexes,
			       (select count(*)::int from pg_constraint k where k.conrelid = 'public.jobs'::regclass and k.contype = 'c') as checks,
			       (select count(*)::int from pg_trigger t where t.tgrelid = 'public.jobs'::regclass and not t.tgisinternal and t.tgfoid::regproc::text like 'supabase_jobs.%') as triggers`;
		// Later migrations add per-table triggers through supabase_jobs.attach: compare with jobs, not a number.
		// The package's own triggers only: the demo adds one of its own to public.jobs (src/demo/sql).
		expect(ref!.triggers).toBeGreaterThanOrEqual(1);
		expect(info).toMatchObject({
			rls: true,
			policies: ref!.policies,
			indexes: ref!.indexes,
			checks: ref!.checks,
			triggers: ref!.triggers,
		});
		expect(info!.commented).toBe((await shape('public.jobs')).length);
	});

	it('every job_* function serves the chosen table, and the tables stay apart', async () => {
		const user = await createUser(db.sql);
		const [job] = await as(db.sql, user, (tx) => tx`select * from job_enqueue('export-csv', job_table => 'exports')`);
		expect(await db.sql`select id from jobs where id = ${job!.id}`).toHaveLength(0);
		const [claimed] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select * from job_claim(${job!.id}, job_table => 'exports')`,
		);
		expect(claimed!.status).toBe('running');
		await as(db.sql, serviceRole, (tx) => tx`select job_tick(${job!.id}, 50, 'rows', job_table => 'exports')`);
		await as(db.sql, serviceRole, (tx) => tx`select * from job_succeed(${job!.id}, job_table => 'exports')`);
		const [row] = await as(db.sql, user, (tx) => tx`select * from job_get(${job!.id}, job_table => 'exports')`);
		expect(row!.status).toBe('done');
		expect(
			await as(db.sql, user, (tx) => tx`select * from job_list_recent(job_table => 'billing.invoices_jobs')`),
		).toEqual([]);
	});

	it('the state machine guards every job table', async () => {
		const [{ id }] = await db.sql`insert into billing.invoices_jobs (kind) values ('invoice') returning id`;
		await expect(db.sql`update billing.invoices_jobs set status = 'done' where id = ${id}`).rejects.toMatchObject({
			code: 'SJ001',
		});
	});

	it('refuses a name that exists, a hostile name, or a reserved schema', async () => {
		await expect(db.sql`select supabase_jobs.create_job_table('exports')`).rejects.toMatchObject({ code: '22023' });
		await expect(db.sql`select supabase_jobs.create_job_table('x; drop table jobs')`).rejects.toMatchObject({
			code: '22023',
		});
		await expect(db.sql`select supabase_jobs.create_job_table('jobs2', 'auth')`).rejects.toMatchObject({
			code: '22023',
		});
	});

	it('users cannot create job tables', async () => {
		const user = await createUser(db.sql);
		await expect(as(db.sql, user, (tx) => tx`select supabase_jobs.create_job_table('mine')`)).rejects.toMatchObject({
			code: '42501',
		});
	});
});

describe('One shape, written once on supabase_jobs.job', () => {
	it('a column added to the job base reaches every job table and every function returns it', async () => {
		const user = await createUser(db.sql);
		await db.sql`alter table supabase_jobs.job add column document_id uuid`;
		// A fresh session: statements prepared before the ALTER describe the old row.
		const sql = db.connect({ max: 1 });
		try {
			const [job] = await as(sql, user, (tx) => tx`select * from job_enqueue('export-csv', job_table => 'exports')`);
			expect(job).toHaveProperty('document_id', null);
			await as(sql, serviceRole, (tx) => tx`select id from job_claim(${job!.id}, job_table => 'exports')`);
			await db.sql`update supabase_jobs.job set document_id = ${user.sub} where id = ${job!.id}`;
			const [row] = await as(sql, user, (tx) => tx`select * from job_get(${job!.id}, job_table => 'exports')`);
			expect(row!.document_id).toBe(user.sub);
			// The other tables keep working and carry the column too.
			const [other] = await as(
				sql,
				user,
				(tx) => tx`select * from job_enqueue('x', job_table => 'billing.invoices_jobs')`,
			);
			expect(other).toHaveProperty('document_id', null);
		} finally {
			await sql.end();
			await db.sql`alter table supabase_jobs.job drop column document_id`;
		}
	});

	it('a job table cannot grow columns of its own: PostgreSQL refuses, nothing is silently left out', async () => {
		await expect(db.sql`alter table public.exports add column mine text`).rejects.toThrow(/partition/);
	});

	it('the state machine expression agrees with the transitions table, pair by pair', async () => {
		const rows = await db.sql`
			select f::text as f, t::text as t, supabase_jobs.can_transition(f, t) as fn,
			       exists (select 1 from supabase_jobs.transitions x where x.from_status = f and x.to_status = t) as tbl
			from unnest(enum_range(null::job_status)) f, unnest(enum_range(null::job_status)) t`;
		expect(rows).toHaveLength(JOB_STATUSES.length ** 2);
		for (const r of rows) expect([`${r.f}->${r.t}`, r.fn]).toEqual([`${r.f}->${r.t}`, r.tbl]);
	});

	it('the limits are written once: the checks and limits() read job_limits()', async () => {
		const [l] = await db.sql`select * from supabase_jobs.limits()`;
		const [j] = await db.sql`select (supabase_jobs.job_limits()).*`;
		expect(l).toEqual({
			kind_max: j!.kind_max,
			params_max_bytes: j!.params_max_bytes,
			payload_max_bytes: j!.payload_max_bytes,
			error_max: j!.error_max,
			stage_max: j!.stage_max,
			max_attempts_max: j!.max_attempts_max,
			list_max: j!.list_max,
			duration_max_ms: j!.duration_max_ms,
			priority_min: j!.priority_min,
			priority_max: j!.priority_max,
		});
		// The row rules carry the limits as constants (a function call per row would cost every write):
		// the migrations wrote them from job_limits(), so they agree with it.
		const [{ def }] = await db.sql`select pg_get_functiondef('supabase_jobs.job_row_rules'::regproc) as def`;
		expect(def).toContain(`(char_length(kind) <= ${j!.kind_max})`);
		expect(def).toContain(`(octet_length((params)::text) <= ${j!.params_max_bytes})`);
		expect(def).toContain(`(octet_length(payload) <= ${j!.payload_max_bytes})`);
		expect(def).toContain(`(char_length(error) <= ${j!.error_max})`);
		expect(def).toContain(`(char_length(stage) <= ${j!.stage_max})`);
		expect(def).toContain(`(max_attempts <= ${j!.max_attempts_max})`);
	});
});
