/**
 * Every duration and time a job takes has a range (supabase_jobs.duration_max_ms():
 * delays, expiries and key TTLs at most 3650 days, run_at finite and within
 * that of now), checked once for job_enqueue, job_enqueue_once and each item
 * of job_enqueue_many; and the priority a user may give is bounded by the
 * kind (job_kinds.user_priority_min / user_priority_max), while the service
 * role chooses freely. Each refusal is 22023 naming the field, and writes nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DURATION_MAX_MS, PRIORITY_MAX, PRIORITY_MIN } from '../../src/lib/internal/limits.ts';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let user: Caller & { sub: string };
beforeAll(async () => {
	db = await useTestDatabase();
	user = await createUser(db.sql);
});

const jobCount = async () => (await db.sql`select count(*)::int as n from supabase_jobs.job`)[0]!.n as number;

async function refused(caller: Caller, query: (tx: any) => Promise<unknown>) {
	const before = await jobCount();
	const error = await as(db.sql, caller, query).then(
		() => new Error('accepted'),
		(e: unknown) => e,
	);
	expect(await jobCount(), 'nothing was written').toBe(before);
	return error as { code?: string; message: string; detail?: string };
}

const DAY_MS = 86_400_000;
const MAX_MS = 3650 * DAY_MS;

describe('a time or duration out of its range is refused with 22023 naming the field', () => {
	it('limits() reports the range: 3650 days in milliseconds, and the smallint range of priority', async () => {
		const [l] = await db.sql`select duration_max_ms::text, priority_min, priority_max from supabase_jobs.limits()`;
		expect(l).toEqual({ duration_max_ms: String(MAX_MS), priority_min: -32768, priority_max: 32767 });
		// The TypeScript checks mirror them.
		expect([DURATION_MAX_MS, PRIORITY_MIN, PRIORITY_MAX]).toEqual([MAX_MS, l!.priority_min, l!.priority_max]);
	});

	const ONE: { name: string; args: string; field: string }[] = [
		{ name: 'a delay past 3650 days', args: `delay => '3651 days'`, field: 'delay' },
		{ name: 'a delay of 9e15 ms (year 287225)', args: `delay => '9000000000000 seconds'`, field: 'delay' },
		{ name: 'run_at infinity', args: `run_at => 'infinity'`, field: 'run_at' },
		{ name: 'run_at -infinity', args: `run_at => '-infinity'`, field: 'run_at' },
		{ name: 'run_at 3651 days ahead', args: `run_at => now() + interval '3651 days'`, field: 'run_at' },
		{ name: 'run_at 3651 days ago', args: `run_at => now() - interval '3651 days'`, field: 'run_at' },
		{ name: 'run_at with delay', args: `run_at => now(), delay => '1 second'`, field: 'run_at' },
		{ name: 'expire_after past 3650 days', args: `expire_after => '3651 days'`, field: 'expire_after' },
	];

	it.each(ONE)('job_enqueue and job_enqueue_once: $name', async ({ args, field }) => {
		const one = await refused(user, (tx) => tx.unsafe(`select * from job_enqueue(kind => 'extract', ${args})`));
		expect(one).toMatchObject({ code: '22023', detail: `field=${field}` });
		const once = await refused(user, (tx) =>
			tx.unsafe(`select * from job_enqueue_once(kind => 'extract', idempotency_key => 'k', ${args})`),
		);
		expect(once).toMatchObject({ code: '22023', detail: `field=${field}` });
	});

	it('job_reschedule refuses the same start times, naming delay and run_at, and the job keeps its start', async () => {
		const [job] = await as(db.sql, user, (tx) => tx`select id, available_at from job_enqueue(kind => 'extract')`);
		for (const [args, field] of [
			[`delay => '3651 days'`, 'delay'],
			[`run_at => 'infinity'`, 'run_at'],
		] as const) {
			const e = await refused(user, (tx) => tx.unsafe(`select * from job_reschedule(id => $1, ${args})`, [job!.id]));
			expect(e).toMatchObject({ code: '22023', detail: `field=${field}` });
		}
		const [after] = await db.sql`select available_at from supabase_jobs.job where id = ${job!.id as string}`;
		expect(after!.available_at).toEqual(job!.available_at);
	});

	it('job_enqueue_once refuses a key_ttl past 3650 days, even when the key already names a job', async () => {
		await as(db.sql, user, (tx) => tx`select * from job_enqueue_once(kind => 'extract', idempotency_key => 'ttl')`);
		const e = await refused(
			user,
			(tx) => tx`select * from job_enqueue_once(kind => 'extract', idempotency_key => 'ttl', key_ttl => '3651 days')`,
		);
		expect(e).toMatchObject({ code: '22023', detail: 'field=key_ttl' });
	});

	const MANY: { name: string; item: Record<string, unknown>; field: string }[] = [
		{ name: 'run_at infinity', item: { run_at: 'infinity' }, field: 'run_at' },
		{ name: 'run_at with delay_ms', item: { run_at: new Date().toISOString(), delay_ms: 1000 }, field: 'run_at' },
		{ name: 'run_at 3651 days ahead', item: { run_at: new Date(Date.now() + 3651 * DAY_MS) }, field: 'run_at' },
		{ name: 'delay_ms 9e15', item: { delay_ms: 9e15 }, field: 'delay_ms' },
		{ name: 'delay_ms 1e300', item: { delay_ms: 1e300 }, field: 'delay_ms' },
		{ name: 'delay_ms 1.5', item: { delay_ms: 1.5 }, field: 'delay_ms' },
		{ name: 'expire_after_ms 1e300', item: { expire_after_ms: 1e300 }, field: 'expire_after_ms' },
		{ name: 'expire_after_ms past 3650 days', item: { expire_after_ms: MAX_MS + 1 }, field: 'expire_after_ms' },
		{ name: 'max_attempts a word', item: { max_attempts: 'many' }, field: 'max_attempts' },
		{ name: 'owner_id no uuid', item: { owner_id: 'me' }, field: 'owner_id' },
		{ name: 'payload a number that reads as base64', item: { payload: 4242 }, field: 'payload' },
		{ name: 'payload an object', item: { payload: {} }, field: 'payload' },
	];

	it.each(MANY)('job_enqueue_many names the item and its field: $name', async ({ item, field }) => {
		const e = await refused(user, (tx) => tx`select * from job_enqueue_many('extract', ${tx.json([{}, item])})`);
		expect(e).toMatchObject({ code: '22023', detail: `field=items[1].${field}` });
		expect(e.message).toMatch(new RegExp(`^${field.replace(/_/g, '_')}|${field}`));
	});

	it('the longest delay and the farthest run_at are accepted, and read back as times', async () => {
		const [row] = await as(
			db.sql,
			user,
			(tx) => tx`select available_at from job_enqueue(kind => 'extract', delay => ${`${MAX_MS / 1000} seconds`})`,
		);
		expect(new Date(row!.available_at as Date).getTime()).toBeGreaterThan(Date.now() + MAX_MS - DAY_MS);
		const ids = await as(
			db.sql,
			user,
			(tx) =>
				tx`select * from job_enqueue_many('extract', ${tx.json([{ delay_ms: MAX_MS }, { expire_after_ms: MAX_MS }])})`,
		);
		expect(ids).toHaveLength(2);
	});
});

describe('a user may choose only the priorities the kind declares; the service role any', () => {
	const kind = 'ranked';
	beforeAll(async () => {
		await db.sql`select supabase_jobs.register_job_kind(${kind}, 'jobs', null, -5, 10)`;
	});

	it('a user priority of 32767 is refused naming priority on enqueue, once and each item of many', async () => {
		const one = await refused(user, (tx) => tx`select * from job_enqueue(kind => 'extract', priority => 32767)`);
		expect(one).toMatchObject({ code: '22023', detail: 'field=priority' });
		const once = await refused(
			user,
			(tx) => tx`select * from job_enqueue_once(kind => 'extract', idempotency_key => 'p', priority => 32767)`,
		);
		expect(once).toMatchObject({ code: '22023', detail: 'field=priority' });
		const many = await refused(
			user,
			(tx) => tx`select * from job_enqueue_many('extract', ${tx.json([{}, { priority: 32767 }])})`,
		);
		expect(many).toMatchObject({ code: '22023', detail: 'field=items[1].priority' });
		const direct = await refused(
			user,
			(tx) =>
				tx`insert into supabase_jobs.job (job_table, kind, owner_id, priority) values ('jobs', 'extract', ${user.sub}, 11)`,
		);
		expect(direct).toMatchObject({ code: '22023', detail: 'field=priority' });
	});

	it('by default a user may lower a priority but not raise it above the default, 0', async () => {
		await db.sql`select supabase_jobs.register_job_kind('plain')`;
		const [low] = await as(db.sql, user, (tx) => tx`select priority from job_enqueue(kind => 'plain', priority => -3)`);
		expect(low!.priority).toBe(-3);
		const e = await refused(user, (tx) => tx`select * from job_enqueue(kind => 'plain', priority => 1)`);
		expect(e.message).toMatch(/from -32768 to 0 for a user; got 1/);
	});

	it('a kind registered with a range lets a user choose within it, and refuses past it', async () => {
		const [top] = await as(db.sql, user, (tx) => tx`select priority from job_enqueue(kind => ${kind}, priority => 10)`);
		expect(top!.priority).toBe(10);
		const ids = await as(
			db.sql,
			user,
			(tx) => tx`select * from job_enqueue_many(${kind}, ${tx.json([{ priority: -5 }])})`,
		);
		expect(ids).toHaveLength(1);
		for (const priority of [11, -6]) {
			const e = await refused(user, (tx) => tx`select * from job_enqueue(kind => ${kind}, priority => ${priority})`);
			expect(e).toMatchObject({ code: '22023', detail: 'field=priority' });
		}
	});

	it('the service role chooses any priority in the smallint range', async () => {
		const [row] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select priority from job_enqueue(kind => 'extract', priority => 32767)`,
		);
		expect(row!.priority).toBe(32767);
		const ids = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select * from job_enqueue_many('extract', ${tx.json([{ priority: 32767 }])})`,
		);
		expect(ids).toHaveLength(1);
	});

	it('register_job_kind refuses a user range that leaves out the default 0', async () => {
		for (const [lo, hi, field] of [
			[1, 10, 'user_priority_min'],
			[-10, -1, 'user_priority_max'],
		] as const) {
			const e = await db.sql`select supabase_jobs.register_job_kind('other', 'jobs', null, ${lo}, ${hi})`.catch(
				(x: unknown) => x as { code: string; detail: string },
			);
			expect(e).toMatchObject({ code: '22023', detail: `field=${field}` });
		}
	});
});
