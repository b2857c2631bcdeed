/**
 * Failed for good in SQL: job_fail(permanent => true) closes a job as failed
 * and records failed_for_good; try again refuses such a job (SJ002, the
 * message saying why) on every path, job_replay skips it, and nobody but
 * job_fail writes the column (users have no grant, the guard keeps it to
 * failed rows).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

/** The error a call ends with (code, message, detail, constraint), or null when it succeeds. */
async function refused(p: Promise<unknown>): Promise<Record<string, unknown> | null> {
	try {
		await p;
		return null;
	} catch (e) {
		const { code, message, detail, constraint_name } = e as Record<string, unknown>;
		return { code, message, detail, constraint_name };
	}
}

/** A running job of `owner` (attempt 1 of 3) of `kind`. */
async function running(owner: string | null, kind = 'work'): Promise<string> {
	const [{ id }] = await db.sql`select id from job_enqueue(${kind}, owner_id => ${owner})`;
	await db.sql`select job_claim(${id})`;
	return id as string;
}

/** A job of `owner` its worker failed for good with `code`. */
async function failedForGood(owner: string | null, kind = 'work', code = 'empty_file'): Promise<string> {
	const id = await running(owner, kind);
	await db.sql`select job_fail(${id}, 'The file is empty.', error_code => ${code}, permanent => true)`;
	return id;
}

const retries = async (id: string) =>
	(await db.sql`select count(*)::int as n from supabase_jobs.job where retry_of = ${id}`)[0]!.n as number;

describe('job_fail with permanent', () => {
	it('closes the job failed at once with attempts left, records failed_for_good, and queues nothing again', async () => {
		const id = await running(null, 'permanent.once');
		const [row] =
			await db.sql`select status, attempts, max_attempts, error_code, failed_for_good from job_fail(${id}, 'Empty.', error_code => 'empty_file', permanent => true)`;
		expect(row).toEqual({
			status: 'failed',
			attempts: 1,
			max_attempts: 3,
			error_code: 'empty_file',
			failed_for_good: true,
		});
		const [{ n }] = await db.sql`select count(*)::int as n from jobs where kind = 'permanent.once'`;
		expect(n).toBe(1);
	});

	it('without permanent the job fails as before, failed_for_good false, and can be tried again', async () => {
		const alice = await createUser(db.sql);
		const id = await running(alice.sub);
		const [row] = await db.sql`select status, failed_for_good from job_fail(${id}, 'Failed.')`;
		expect(row).toEqual({ status: 'failed', failed_for_good: false });
		const [again] = await as(db.sql, alice, (tx) => tx`select retry_of, failed_for_good from job_try_again(${id})`);
		expect(again).toEqual({ retry_of: id, failed_for_good: false });
	});

	it('refuses a null permanent naming the field (22023), the job still running', async () => {
		const id = await running(null);
		expect(await refused(db.sql`select job_fail(${id}, 'x', permanent => null)`)).toMatchObject({
			code: '22023',
			detail: 'field=permanent',
		});
		const [{ status }] = await db.sql`select status from jobs where id = ${id}`;
		expect(status).toBe('running');
	});

	it('a job retried after an unexpected error (job_retry) is queued with failed_for_good false', async () => {
		const id = await running(null);
		const [row] = await db.sql`select status, failed_for_good from job_retry(${id}, 'Unexpected.')`;
		expect(row).toEqual({ status: 'queued', failed_for_good: false });
	});
});

describe('try again of a job failed for good', () => {
	it('is refused for its owner, an admin and a worker (SJ002 saying it failed for good, with its code); nothing is written', async () => {
		const alice = await createUser(db.sql);
		const boss = { ...(await createUser(db.sql)), admin: true };
		const id = await failedForGood(alice.sub, 'work', 'unsupported_format');
		for (const caller of [alice, boss, serviceRole]) {
			const e = await refused(as(db.sql, caller, (tx) => tx`select job_try_again(${id})`));
			expect(e, caller.role).toMatchObject({ code: 'SJ002' });
			expect(e?.message).toBe(`job ${id} failed for good (unsupported_format): trying again would fail the same way`);
		}
		expect(await retries(id)).toBe(0);
	});

	it('is refused to an admin inserting the retry directly (policy admins_try_again), nothing written', async () => {
		const alice = await createUser(db.sql);
		const boss = { ...(await createUser(db.sql)), admin: true };
		const id = await failedForGood(alice.sub);
		const insert = as(
			db.sql,
			boss,
			(tx) =>
				tx`insert into supabase_jobs.job (job_table, kind, owner_id, retry_of) values ('jobs', 'work', ${alice.sub}, ${id})`,
		);
		expect(await refused(insert)).toMatchObject({ code: '42501' });
		expect(await retries(id)).toBe(0);
	});
});

describe('replay', () => {
	it('skips the jobs failed for good and tries the other failed jobs of the filter again', async () => {
		const boss = { ...(await createUser(db.sql)), admin: true };
		const forGood = await failedForGood(null, 'replay.mixed');
		const plain = await running(null, 'replay.mixed');
		await db.sql`select job_fail(${plain}, 'Failed.')`;
		const made = await as(db.sql, boss, (tx) => tx`select retry_of from job_replay('replay.mixed')`);
		expect(made).toEqual([{ retry_of: plain }]);
		expect(await retries(forGood)).toBe(0);
		// Only jobs failed for good match: nothing to replay, nothing refused.
		const second = await failedForGood(null, 'replay.only');
		expect(await db.sql`select id from job_replay('replay.only')`).toEqual([]);
		expect(await retries(second)).toBe(0);
	});
});

describe('who writes failed_for_good', () => {
	it('a user cannot set it: not when enqueueing, not on their own failed or running job (42501)', async () => {
		const alice = await createUser(db.sql);
		const mine = await running(alice.sub);
		const insert = as(
			db.sql,
			alice,
			(tx) => tx`insert into jobs (kind, owner_id, failed_for_good) values ('work', ${alice.sub}, true)`,
		);
		expect(await refused(insert)).toMatchObject({ code: '42501' });
		const update = as(db.sql, alice, (tx) => tx`update jobs set failed_for_good = true where id = ${mine}`);
		expect(await refused(update)).toMatchObject({ code: '42501' });
		const forGood = await failedForGood(alice.sub);
		const clear = as(db.sql, alice, (tx) => tx`update jobs set failed_for_good = false where id = ${forGood}`);
		expect(await refused(clear)).toMatchObject({ code: '42501' });
		const rows = await db.sql`select id, failed_for_good from jobs where id in (${mine}, ${forGood}) order by id`;
		expect(Object.fromEntries(rows.map((r) => [r.id as string, r.failed_for_good as boolean]))).toEqual({
			[mine]: false,
			[forGood]: true,
		});
	});

	it('the guard keeps it to failed rows: set on a running job it is refused (23514), and a failed row is frozen (SJ001)', async () => {
		const id = await running(null);
		expect(await refused(db.sql`update jobs set failed_for_good = true where id = ${id}`)).toMatchObject({
			code: '23514',
			constraint_name: 'job_failed_for_good_is_failed',
		});
		const forGood = await failedForGood(null);
		expect(await refused(db.sql`update jobs set failed_for_good = false where id = ${forGood}`)).toMatchObject({
			code: 'SJ001',
		});
	});
});
