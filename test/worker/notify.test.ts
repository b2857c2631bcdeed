/**
 * The notify triggers (supabase/schemas/13_kick.sql): one NOTIFY
 * 'supabase_jobs' per insert statement and kind, one per requeue, none for
 * ticks or closes, none for a rolled-back insert; the kick trigger still fires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { as, createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createJobTable } from '../store/harness.ts';

let db: TestDatabase;
let store: JobStore;
const received: Record<string, unknown>[] = [];
let waiters: { n: number; resolve: () => void }[] = [];
let unlisten: () => Promise<void>;

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
	const listener = db.connect({ max: 1 });
	const meta = await listener.listen('supabase_jobs', (payload) => {
		received.push(JSON.parse(payload) as Record<string, unknown>);
		waiters = waiters.filter((w) => (received.length >= w.n ? (w.resolve(), false) : true));
	});
	unlisten = meta.unlisten;
});

afterAll(async () => {
	await unlisten?.();
});

/** Resolves once `n` notifications in total arrived; then a marker round trip proves nothing else is in flight. */
function count(n: number): Promise<void> {
	if (received.length >= n) return Promise.resolve();
	return new Promise<void>((resolve) => waiters.push({ n, resolve }));
}

async function receivedUpTo(n: number): Promise<Record<string, unknown>[]> {
	await count(n);
	// A marker notification sent after the statement under test arrives after anything it caused.
	await db.sql`select pg_notify('supabase_jobs', '{"marker": true}')`;
	await count(n + 1);
	const got = received.splice(0);
	expect(got.at(-1)).toEqual({ marker: true });
	return got.slice(0, -1);
}

describe('NOTIFY supabase_jobs', () => {
	it('one per insert statement, whatever its kinds; job_id and kind only when there is one of each', async () => {
		await db.sql`insert into jobs (kind, params) select k, '{}' from unnest(array['a', 'a', 'a', 'b']) k`;
		expect(await receivedUpTo(1)).toEqual([
			{
				job_table: 'jobs',
				kind: null,
				kinds: ['a', 'b'],
				job_id: null,
				count: 4,
				available_at: expect.any(String),
				reason: 'enqueue',
			},
		]);
		await db.sql`insert into jobs (kind, params) values ('b', '{}')`;
		expect(await receivedUpTo(1)).toEqual([
			{
				job_table: 'jobs',
				kind: 'b',
				kinds: ['b'],
				job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
				count: 1,
				available_at: expect.any(String),
				reason: 'enqueue',
			},
		]);
	});

	it('a user enqueue through RLS notifies too; a rolled-back one does not', async () => {
		const user = await createUser(db.sql);
		await db.sql
			.begin(async (tx) => {
				await tx`select job_enqueue('rolled.back')`;
				throw new Error('roll back');
			})
			.catch(() => {});
		const [job] = await as(db.sql, user, (tx) => tx`select (job_enqueue('mine')).id`);
		const got = await receivedUpTo(1);
		expect(got).toEqual([expect.objectContaining({ kind: 'mine', job_id: job!.id, reason: 'enqueue' })]);
	});

	it('one per requeue (release, retry, reclaim); none for claim, tick, succeed or cancel', async () => {
		const job = await store.enqueue('r');
		await receivedUpTo(1);
		let claimed = (await store.claim(job.id))!;
		await store.tick(job.id, { progress: 10, stage: 'x', attempt: claimed.attempts });
		await store.release(job.id, { attempt: claimed.attempts });
		claimed = (await store.claim(job.id))!;
		await store.retry(job.id, 'again', { delaySeconds: 30, attempt: claimed.attempts });
		const got = await receivedUpTo(2);
		expect(got.map((g) => [g.kind, g.job_id, g.reason])).toEqual([
			['r', job.id, 'requeue'],
			['r', job.id, 'requeue'],
		]);
		// The retry's notification says when the job becomes claimable.
		expect(Date.parse(got[1]!.available_at as string) - Date.now()).toBeGreaterThan(20_000);

		const lost = await store.enqueue('q');
		await receivedUpTo(1);
		await store.claim(lost.id);
		await db.sql`update jobs set started_at = started_at - interval '1 hour', heartbeat_at = heartbeat_at - interval '1 hour' where id = ${lost.id}`;
		expect(
			(await new JobStore(postgresAdapter(db.sql), { staleAfterMs: 60_000 }).reclaimStale()).map((j) => j.id),
		).toEqual([lost.id]);
		expect((await receivedUpTo(1)).map((g) => [g.kind, g.job_id, g.reason])).toEqual([['q', lost.id, 'requeue']]);

		const other = await store.enqueue('s');
		await receivedUpTo(1);
		const c = (await store.claim(other.id))!;
		await store.succeed(other.id, { attempt: c.attempts });
		const cancelled = await store.enqueue('t');
		await store.cancel(cancelled.id);
		expect((await receivedUpTo(1)).map((g) => g.kind)).toEqual(['t']);
	});

	it('every job table has the notify triggers (on insert, and the update trigger that sends a requeue), and one created later too', async () => {
		await createJobTable(db.sql, 'app_exports'); // users invent kinds in it
		const triggers = await db.sql`
			select c.relname as table, array_agg(t.tgname::text order by t.tgname) as triggers
			from pg_trigger t join pg_class c on c.oid = t.tgrelid
			where not t.tgisinternal and c.relname in ('jobs', 'app_exports') group by c.relname order by c.relname`;
		const expected = ['after_jobs_inserted', 'guard_job_update', 'after_jobs_updated'];
		expect(triggers).toEqual([
			{ table: 'app_exports', triggers: expect.arrayContaining(expected) },
			{ table: 'jobs', triggers: expect.arrayContaining(expected) },
		]);
		await db.sql`insert into app_exports (kind) values ('x')`;
		expect(await receivedUpTo(1)).toEqual([expect.objectContaining({ job_table: 'app_exports', kind: 'x' })]);
	});
});
