/**
 * The RLS matrix: anon, user A, user B and service_role against every function
 * and against the table directly, with role and claims set as PostgREST sets them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { anon, as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let userA: Caller & { sub: string };
let userB: Caller & { sub: string };
let jobA: string;

beforeAll(async () => {
	db = await useTestDatabase();
	userA = await createUser(db.sql);
	userB = await createUser(db.sql);
	const [row] = await as(
		db.sql,
		userA,
		(tx) => tx`select id from job_enqueue('extract', '{"secret":"A"}', '\\x41'::bytea)`,
	);
	jobA = row!.id;
});

async function outcome(caller: Caller, query: (tx: any) => Promise<any>): Promise<string> {
	try {
		const rows = await as(db.sql, caller, query);
		return Array.isArray(rows) ? `rows:${rows.length}` : 'ok';
	} catch (e) {
		return (e as { code: string }).code;
	}
}

const fresh = async () => (await as(db.sql, userA, (tx) => tx`select id from job_enqueue('extract')`))[0]!.id as string;

describe('RLS matrix over the functions', () => {
	const workerOnly = [
		['job_claim', (id: string) => (tx: any) => tx`select * from job_claim(${id})`],
		['job_claim_next', () => (tx: any) => tx`select * from job_claim_next()`],
		['job_tick', (id: string) => (tx: any) => tx`select job_tick(${id}, 1)`],
		['job_succeed', (id: string) => (tx: any) => tx`select * from job_succeed(${id})`],
		['job_fail', (id: string) => (tx: any) => tx`select * from job_fail(${id}, 'x')`],
		['job_retry', (id: string) => (tx: any) => tx`select * from job_retry(${id}, 'x')`],
		['job_release', (id: string) => (tx: any) => tx`select * from job_release(${id})`],
		['job_reclaim_stale', () => (tx: any) => tx`select * from job_reclaim_stale(interval '1 minute')`],
	] as const;

	for (const [name, call] of workerOnly) {
		it(`${name}: anon and users are refused (42501); only service_role may call it`, async () => {
			const id = await fresh();
			expect(await outcome(anon, call(id))).toBe('42501');
			expect(await outcome(userA, call(id))).toBe('42501');
			expect(await outcome(userB, call(id))).toBe('42501');
			expect(await outcome(serviceRole, call(id))).not.toBe('42501');
		});
	}

	it('job_enqueue: anon refused; a user enqueues as themselves; service_role may enqueue for a user', async () => {
		expect(await outcome(anon, (tx) => tx`select * from job_enqueue('extract')`)).toBe('42501');
		const [mine] = await as(db.sql, userB, (tx) => tx`select owner_id from job_enqueue('extract')`);
		expect(mine!.owner_id).toBe(userB.sub);
		expect(await outcome(userB, (tx) => tx`select * from job_enqueue('extract', owner_id => ${userA.sub})`)).toBe(
			'42501',
		);
		const [forA] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select owner_id from job_enqueue('extract', owner_id => ${userA.sub})`,
		);
		expect(forA!.owner_id).toBe(userA.sub);
	});

	it('job_get: the owner sees it, another user gets not-found, anon is refused', async () => {
		expect(await outcome(userA, (tx) => tx`select * from job_get(${jobA})`)).toBe('rows:1');
		expect(await outcome(userB, (tx) => tx`select * from job_get(${jobA})`)).toBe('PT404');
		expect(await outcome(anon, (tx) => tx`select * from job_get(${jobA})`)).toBe('42501');
		expect(await outcome(serviceRole, (tx) => tx`select * from job_get(${jobA})`)).toBe('rows:1');
	});

	it('job_list_recent: a user lists only their own jobs', async () => {
		const a = await as(db.sql, userA, (tx) => tx`select owner_id from job_list_recent("limit" => 1000)`);
		const b = await as(db.sql, userB, (tx) => tx`select owner_id from job_list_recent("limit" => 1000)`);
		expect(a.length).toBeGreaterThan(0);
		expect(a.every((r: any) => r.owner_id === userA.sub)).toBe(true);
		expect(b.every((r: any) => r.owner_id === userB.sub)).toBe(true);
		expect(await outcome(anon, (tx) => tx`select * from job_list_recent()`)).toBe('42501');
	});

	it('job_cancel: another user cancels nothing (no row back, the job keeps running)', async () => {
		const id = await fresh();
		expect(await outcome(userB, (tx) => tx`select * from job_cancel(${id})`)).toBe('rows:0');
		const [row] = await db.sql`select status from jobs where id = ${id}`;
		expect(row!.status).toBe('queued');
		expect(await outcome(anon, (tx) => tx`select * from job_cancel(${id})`)).toBe('42501');
		expect(await outcome(userA, (tx) => tx`select * from job_cancel(${id})`)).toBe('rows:1');
	});
});

describe('RLS matrix over the table itself', () => {
	it('anon can neither read nor write the table', async () => {
		expect(await outcome(anon, (tx) => tx`select * from jobs`)).toBe('42501');
		expect(await outcome(anon, (tx) => tx`insert into jobs (kind) values ('x')`)).toBe('42501');
	});

	it('a user reads only their own rows', async () => {
		const seenByB = await as(db.sql, userB, (tx) => tx`select id from jobs where id = ${jobA}`);
		expect(seenByB).toHaveLength(0);
		const seenByA = await as(db.sql, userA, (tx) => tx`select params, payload from jobs where id = ${jobA}`);
		expect(seenByA[0]!.params).toEqual({ secret: 'A' });
	});

	it('a user cannot insert a job for someone else, nor choose its status', async () => {
		expect(await outcome(userB, (tx) => tx`insert into jobs (kind, owner_id) values ('x', ${userA.sub})`)).toBe(
			'42501',
		);
		expect(await outcome(userB, (tx) => tx`insert into jobs (kind, status) values ('x', 'done')`)).toBe('42501');
	});

	it('a user cannot mark their own job done, nor touch its progress', async () => {
		const id = await fresh();
		expect(await outcome(userA, (tx) => tx`update jobs set status = 'done' where id = ${id}`)).toBe('42501');
		expect(await outcome(userA, (tx) => tx`update jobs set progress = 99 where id = ${id}`)).toBe('42501');
		expect(await outcome(userA, (tx) => tx`update jobs set error = 'x' where id = ${id}`)).toBe('42501');
	});

	it('a user may cancel their own job with plain SQL, and the guard derives the rest', async () => {
		const id = await fresh();
		await as(db.sql, userA, (tx) => tx`update jobs set status = 'cancelled' where id = ${id}`);
		const [row] = await db.sql`select status, payload, finished_at, error_code from jobs where id = ${id}`;
		expect(row).toMatchObject({ status: 'cancelled', payload: null, error_code: 'cancelled' });
	});

	it("another user's update touches nothing", async () => {
		const id = await fresh();
		const res = await as(db.sql, userB, (tx) => tx`update jobs set status = 'cancelled' where id = ${id} returning id`);
		expect(res).toHaveLength(0);
	});

	it('nobody but service_role deletes', async () => {
		const id = await fresh();
		expect(await outcome(userA, (tx) => tx`delete from jobs where id = ${id}`)).toBe('42501');
		expect(await outcome(serviceRole, (tx) => tx`delete from jobs where id = ${id} returning id`)).toBe('rows:1');
	});

	it('the internals schema is closed to anon', async () => {
		expect(await outcome(anon, (tx) => tx`select * from supabase_jobs.job_tables`)).toBe('42501');
	});
});
