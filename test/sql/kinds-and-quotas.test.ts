/**
 * What a signed-in user may queue (migration 20261201001000_kinds_and_quotas.sql):
 * only registered kinds (22023, field=kind), within per-owner quotas (PT429),
 * on every path (job_enqueue, job_enqueue_many, a direct PostgREST-style
 * insert), with one statement refused whole: no row, no wake-up.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clearRequestQueue, queuedRequests, setWorkerSecrets } from '../kick/worker-secrets.ts';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;

beforeAll(async () => {
	db = await useTestDatabase();
	// The template opens public.jobs to every kind for the other tests; here it is closed again.
	await db.sql`delete from supabase_jobs.job_kinds`;
	await db.sql`select supabase_jobs.register_job_kind('export.csv')`;
	await setWorkerSecrets(db.sql, 'http://127.0.0.1:9/functions/v1/jobs-worker');
});

beforeEach(async () => {
	await db.sql`update supabase_jobs.job_tables set max_active_per_owner = default, max_payload_bytes_per_owner = default`;
	await db.sql`update supabase_jobs.job_kinds set max_active_per_owner = null`;
	await clearRequestQueue(db.sql);
});

async function failure(p: Promise<unknown>): Promise<{ code: string; detail?: string; message: string }> {
	try {
		await p;
	} catch (e) {
		return e as { code: string; detail?: string; message: string };
	}
	throw new Error('expected the call to fail');
}

const countOf = async (owner: string) =>
	(await db.sql`select count(*)::int as n from public.jobs where owner_id = ${owner}`)[0]!.n as number;

describe('kinds registered: an unknown kind refused at enqueue with 22023', () => {
	it('job_enqueue of a kind nobody registered is refused, naming the kind, and nothing is written', async () => {
		const user = await createUser(db.sql);
		const e = await failure(as(db.sql, user, (tx) => tx`select * from job_enqueue('made.up')`));
		expect(e.code).toBe('22023');
		expect(e.detail).toBe('field=kind');
		expect(e.message).toMatch(/kind 'made\.up' is not registered for job table jobs/);
		expect(await countOf(user.sub)).toBe(0);
		expect((await as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv')`))[0]!.status).toBe('queued');
	});

	it('one PostgREST insert of 500 rows with 500 invented kinds is refused whole: no row, no wake-up', async () => {
		const user = await createUser(db.sql);
		const rows = Array.from({ length: 500 }, (_, i) => ({ kind: `spam.k${i}`, params: {} }));
		const e = await failure(as(db.sql, user, (tx) => tx`insert into public.jobs ${tx(rows, 'kind', 'params')}`));
		expect(e.code).toBe('22023');
		expect(await countOf(user.sub)).toBe(0);
		expect(await queuedRequests(db.sql)).toEqual([]);
	});

	it('the same insert of one registered kind queues 500 jobs with ONE wake-up', async () => {
		const user = await createUser(db.sql);
		const rows = Array.from({ length: 500 }, (_, i) => ({ kind: 'export.csv', params: { i } }));
		await as(db.sql, user, (tx) => tx`insert into public.jobs ${tx(rows, 'kind', 'params')}`);
		expect(await countOf(user.sub)).toBe(500);
		expect(await queuedRequests(db.sql)).toHaveLength(1);
	});

	it('job_enqueue_many of an unregistered kind is refused whole', async () => {
		const user = await createUser(db.sql);
		const e = await failure(
			as(db.sql, user, (tx) => tx`select * from job_enqueue_many('made.up', ${tx.json([{}, {}])})`),
		);
		expect(e.code).toBe('22023');
		expect(await countOf(user.sub)).toBe(0);
	});

	it('a worker (service role) is trusted server code and may queue any kind', async () => {
		const [row] = await as(db.sql, serviceRole, (tx) => tx`select * from job_enqueue('internal.reindex')`);
		expect(row!.status).toBe('queued');
	});

	it('a custom role inheriting authenticated is a user: its unknown kinds are refused too (decided by privilege, not by name)', async () => {
		await db.sql`create role kinds_member nologin inherit`;
		await db.sql`grant authenticated to kinds_member`;
		const user = await createUser(db.sql);
		const member: Caller = { role: 'kinds_member' as Caller['role'], sub: user.sub };
		const e = await failure(as(db.sql, member, (tx) => tx`select * from job_enqueue('made.up')`));
		expect(e.code).toBe('22023');
	});

	it("'*' opens a table to every kind, explicitly", async () => {
		await db.sql`select supabase_jobs.create_job_table('open_jobs')`;
		await db.sql`select supabase_jobs.register_job_kind('*', 'open_jobs')`;
		const user = await createUser(db.sql);
		const [row] = await as(db.sql, user, (tx) => tx`select * from job_enqueue('any.kind', job_table => 'open_jobs')`);
		expect(row!.kind).toBe('any.kind');
	});

	it("register_job_kind is the service role's, refuses a bad kind with 22023 and an unknown job table with 42P01", async () => {
		const user = await createUser(db.sql);
		expect((await failure(as(db.sql, user, (tx) => tx`select supabase_jobs.register_job_kind('x')`))).code).toBe(
			'42501',
		);
		expect((await failure(db.sql`select supabase_jobs.register_job_kind('bad kind!')`)).code).toBe('22023');
		expect((await failure(db.sql`select supabase_jobs.register_job_kind('x', 'no_such_table')`)).code).toBe('42P01');
	});
});

describe('per-owner quotas, configurable, with PT429', () => {
	it('past max_active_per_owner the statement is refused with PT429 (quota=max_active_per_owner) and nothing is written', async () => {
		await db.sql`update supabase_jobs.job_tables set max_active_per_owner = 3 where label = 'jobs'`;
		const user = await createUser(db.sql);
		const enqueue = () => as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv')`);
		for (let i = 0; i < 3; i++) await enqueue();
		const e = await failure(enqueue());
		expect(e.code).toBe('PT429');
		expect(e.detail).toBe('quota=max_active_per_owner');
		expect(await countOf(user.sub)).toBe(3);
		// Another owner has their own room.
		const other = await createUser(db.sql);
		await as(db.sql, other, (tx) => tx`select * from job_enqueue('export.csv')`);
	});

	it('finished jobs free their room: only queued and running count', async () => {
		await db.sql`update supabase_jobs.job_tables set max_active_per_owner = 1 where label = 'jobs'`;
		const user = await createUser(db.sql);
		const [first] = await as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv')`);
		expect((await failure(as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv')`))).code).toBe('PT429');
		await as(db.sql, user, (tx) => tx`select * from job_cancel(${first!.id})`);
		await as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv')`);
	});

	it('a batch that would pass the quota is refused whole', async () => {
		await db.sql`update supabase_jobs.job_tables set max_active_per_owner = 5 where label = 'jobs'`;
		const user = await createUser(db.sql);
		const items = Array.from({ length: 6 }, () => ({}));
		expect(
			(await failure(as(db.sql, user, (tx) => tx`select * from job_enqueue_many('export.csv', ${tx.json(items)})`)))
				.code,
		).toBe('PT429');
		expect(await countOf(user.sub)).toBe(0);
	});

	it("a kind's own max_active_per_owner (one export per user at a time)", async () => {
		await db.sql`select supabase_jobs.register_job_kind('export.pdf', 'jobs', 1)`;
		const user = await createUser(db.sql);
		await as(db.sql, user, (tx) => tx`select * from job_enqueue('export.pdf')`);
		const e = await failure(as(db.sql, user, (tx) => tx`select * from job_enqueue('export.pdf')`));
		expect(e.code).toBe('PT429');
		expect(e.message).toMatch(/kind export\.pdf/);
		// Other kinds are not held by it.
		await as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv')`);
	});

	it('max_payload_bytes_per_owner bounds the bytes one owner keeps waiting', async () => {
		await db.sql`update supabase_jobs.job_tables set max_payload_bytes_per_owner = 1000 where label = 'jobs'`;
		const user = await createUser(db.sql);
		const bytes = Buffer.alloc(600, 1);
		await as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv', '{}', ${bytes})`);
		const e = await failure(as(db.sql, user, (tx) => tx`select * from job_enqueue('export.csv', '{}', ${bytes})`));
		expect(e.code).toBe('PT429');
		expect(e.detail).toBe('quota=max_payload_bytes_per_owner');
		expect(await countOf(user.sub)).toBe(1);
	});

	it('a limit set to null means no limit; a nonsense limit is refused by its check', async () => {
		await db.sql`update supabase_jobs.job_tables set max_active_per_owner = null where label = 'jobs'`;
		const user = await createUser(db.sql);
		const items = Array.from({ length: 1200 }, () => ({}));
		await as(db.sql, user, (tx) => tx`select * from job_enqueue_many('export.csv', ${tx.json(items)})`);
		expect(await countOf(user.sub)).toBe(1200);
		expect(
			(await failure(db.sql`update supabase_jobs.job_tables set max_active_per_owner = 0 where label = 'jobs'`)).code,
		).toBe('23514');
	});

	it('8 connections racing to enqueue for one owner cannot slip past the limit together', async () => {
		await db.sql`update supabase_jobs.job_tables set max_active_per_owner = 5 where label = 'jobs'`;
		const user = await createUser(db.sql);
		const clients = Array.from({ length: 8 }, () => db.connect({ max: 1 }));
		try {
			const results = await Promise.allSettled(
				clients.flatMap((sql) => [0, 1].map(() => as(sql, user, (tx) => tx`select * from job_enqueue('export.csv')`))),
			);
			const ok = results.filter((r) => r.status === 'fulfilled').length;
			const refused = results.filter(
				(r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'PT429',
			).length;
			expect(ok).toBe(5);
			expect(refused).toBe(11);
			expect(await countOf(user.sub)).toBe(5);
		} finally {
			await Promise.all(clients.map((c) => c.end()));
		}
	});
});
