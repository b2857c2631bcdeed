/**
 * The seed's abstract BaseJobModel: a service ships its own job table under a
 * name it picks, and every job_* function serves it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
	await db.sql`select supabase_jobs.create_job_table('exports')`;
	await db.sql`create schema billing`;
	// A job table in its own schema needs that schema usable by the roles that call the functions.
	await db.sql`grant usage on schema billing to authenticated, service_role`;
	await db.sql`select supabase_jobs.create_job_table('invoices_jobs', 'billing')`;
});

describe('1. The table: subclass BaseJobModel and pick a name', () => {
	it('a created table has the same columns, checks, indexes, comments, RLS and triggers as jobs', async () => {
		const shape = async (t: string) =>
			(await db.sql`select attname, format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = ${t}::regclass and attnum > 0 and not attisdropped order by attnum`).map(
				(r) => `${r.attname}:${r.type}`,
			);
		expect(await shape('public.exports')).toEqual(await shape('public.jobs'));
		const [info] = await db.sql`
			select c.relrowsecurity as rls,
			       (select count(*)::int from pg_policy p where p.polrelid = c.oid) as policies,
			       (select count(*)::int from pg_trigger t where t.tgrelid = c.oid and not t.tgisinternal) as triggers,
			       (select count(*)::int from pg_index i where i.indrelid = c.oid) as indexes,
			       (select count(*)::int from pg_constraint k where k.conrelid = c.oid and k.contype = 'c') as checks,
			       (select count(*)::int from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and col_description(c.oid, a.attnum) is not null) as commented
			from pg_class c where c.oid = 'public.exports'::regclass`;
		const [ref] = await db.sql`
			select (select count(*)::int from pg_policy p where p.polrelid = 'public.jobs'::regclass) as policies,
			       (select count(*)::int from pg_index i where i.indrelid = 'public.jobs'::regclass) as indexes,
			       (select count(*)::int from pg_constraint k where k.conrelid = 'public.jobs'::regclass and k.contype = 'c') as checks,
			       (select count(*)::int from pg_trigger t where t.tgrelid = 'public.jobs'::regclass and not t.tgisinternal) as triggers`;
		// Later migrations add per-table triggers through supabase_jobs.attach: compare with jobs, not a number.
		expect(ref!.triggers).toBeGreaterThanOrEqual(1);
		expect(info).toMatchObject({ rls: true, policies: ref!.policies, indexes: ref!.indexes, checks: ref!.checks, triggers: ref!.triggers });
		expect(info!.commented).toBe((await shape('public.jobs')).length);
	});

	it('every job_* function serves the chosen table, and the tables stay apart', async () => {
		const user = await createUser(db.sql);
		const [job] = await as(db.sql, user, (tx) => tx`select * from job_enqueue('export-csv', job_table => 'exports')`);
		expect(await db.sql`select id from jobs where id = ${job!.id}`).toHaveLength(0);
		const [claimed] = await as(db.sql, serviceRole, (tx) => tx`select * from job_claim(${job!.id}, job_table => 'exports')`);
		expect(claimed!.status).toBe('running');
		await as(db.sql, serviceRole, (tx) => tx`select job_tick(${job!.id}, 50, 'rows', job_table => 'exports')`);
		await as(db.sql, serviceRole, (tx) => tx`select * from job_succeed(${job!.id}, job_table => 'exports')`);
		const [row] = await as(db.sql, user, (tx) => tx`select * from job_get(${job!.id}, job_table => 'exports')`);
		expect(row!.status).toBe('done');
		expect(await as(db.sql, user, (tx) => tx`select * from job_list_recent(job_table => 'billing.invoices_jobs')`)).toEqual([]);
	});

	it('the state machine guards every job table', async () => {
		const [{ id }] = await db.sql`insert into billing.invoices_jobs (kind) values ('invoice') returning id`;
		await expect(db.sql`update billing.invoices_jobs set status = 'done' where id = ${id}`).rejects.toMatchObject({ code: 'SJ001' });
	});

	it('refuses a name that exists, a hostile name, or a reserved schema', async () => {
		await expect(db.sql`select supabase_jobs.create_job_table('exports')`).rejects.toMatchObject({ code: '22023' });
		await expect(db.sql`select supabase_jobs.create_job_table('x; drop table jobs')`).rejects.toMatchObject({ code: '22023' });
		await expect(db.sql`select supabase_jobs.create_job_table('jobs2', 'auth')`).rejects.toMatchObject({ code: '22023' });
	});

	it('users cannot create job tables', async () => {
		const user = await createUser(db.sql);
		await expect(as(db.sql, user, (tx) => tx`select supabase_jobs.create_job_table('mine')`)).rejects.toMatchObject({ code: '42501' });
	});
});
