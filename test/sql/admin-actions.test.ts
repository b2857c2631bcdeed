/**
 * The admin actions (supabase/schemas/17_admin_actions.sql) in SQL: who may
 * call them (admins and the service role; users and anon reach none, neither
 * through the functions nor the tables behind them), pause and rate limits
 * raced by 8 real connections, the bulk cancel through the one cancel path,
 * the bounded delete, the dashboard read, and every input refused by field.
 */
import type postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { RATE_PER_MS_MAX, RATE_PER_MS_MIN, RATE_STARTS_MAX, BATCH_MAX } from '../../src/lib/internal/limits.ts';
import {
	anon,
	as,
	claimsFor,
	createUser,
	serviceRole,
	useTestDatabase,
	type Caller,
	type Sql,
	type TestDatabase,
} from '../helpers/db.ts';
import { waitingJob } from '../kick/job-fixtures.ts';
import { clearRequestQueue, queuedRequests, setWorkerSecrets } from '../kick/worker-secrets.ts';

let db: TestDatabase;
let alice: Caller & { sub: string };
let boss: Caller & { sub: string };

beforeAll(async () => {
	db = await useTestDatabase();
	alice = await createUser(db.sql);
	boss = await createUser(db.sql);
});

/** As a user whose JWT says app_metadata.role = 'admin', as GoTrue writes it. */
async function asAdmin<T>(fn: (tx: postgres.TransactionSql) => Promise<T>, sql: Sql = db.sql): Promise<T> {
	const claims = { ...claimsFor(boss), app_metadata: { provider: 'email', role: 'admin' } };
	return (await sql.begin(async (tx) => {
		await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
		return await fn(tx);
	})) as T;
}

/** The SQLSTATE a call fails with, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
	try {
		await p;
		return 'ok';
	} catch (e) {
		return String((e as { code?: string }).code);
	}
}

async function failure(p: Promise<unknown>): Promise<{ code: string; detail: string }> {
	try {
		await p;
	} catch (e) {
		const err = e as { code?: string; detail?: string };
		return { code: String(err.code), detail: String(err.detail) };
	}
	throw new Error('expected the call to fail');
}

async function seed(kind: string, n: number, owner: string | null = null): Promise<string[]> {
	const rows = await db.sql<{ id: string }[]>`
		insert into jobs (kind, owner_id) select ${kind}, ${owner}::uuid from generate_series(1, ${n}) returning id`;
	return rows.map((r) => r.id);
}

const workers = (n: number): Sql[] => Array.from({ length: n }, () => db.connect({ max: 1 }));

const claimNext = (sql: Sql, kinds: string[] | null, limit = 1) =>
	as(
		sql,
		serviceRole,
		(tx) => tx<{ id: string; kind: string }[]>`select id, kind from job_claim_next(${kinds}, ${limit})`,
	);

const claimById = (sql: Sql, id: string) =>
	as(sql, serviceRole, (tx) => tx<{ id: string; kind: string }[]>`select id, kind from job_claim(${id})`);

const statusCounts = async (kind: string) =>
	Object.fromEntries(
		(
			await db.sql<{ status: string; n: number }[]>`
				select status::text, count(*)::int as n from jobs where kind = ${kind} group by 1`
		).map((r) => [r.status, r.n]),
	);

/** The calls of every admin action, each with arguments it would accept. */
const ACTIONS: [string, (tx: postgres.TransactionSql) => Promise<unknown>][] = [
	['job_cancel_many', (tx) => tx`select job_cancel_many(kind => 'attack')`],
	['job_pause_kind', (tx) => tx`select job_pause_kind('attack')`],
	['job_resume_kind', (tx) => tx`select job_resume_kind('attack')`],
	['job_set_rate_limit', (tx) => tx`select job_set_rate_limit('attack', 1, 1000)`],
	['job_delete_finished', (tx) => tx`select job_delete_finished(now())`],
	['job_admin_kinds', (tx) => tx`select * from job_admin_kinds()`],
];

describe('who may act', () => {
	it('a signed-in user and anon are refused every admin action (42501), and nothing changes', async () => {
		await seed('attack', 2);
		const [done] = await seed('attack', 1);
		await db.sql`select job_claim(${done})`;
		await db.sql`select job_succeed(${done})`;
		for (const [name, call] of ACTIONS) {
			expect([name, await outcome(as(db.sql, alice, call))]).toEqual([name, '42501']);
			expect([name, await outcome(as(db.sql, anon, call))]).toEqual([name, '42501']);
		}
		expect(await statusCounts('attack')).toEqual({ queued: 2, done: 1 });
		const [{ n }] = await db.sql<
			{ n: number }[]
		>`select count(*)::int as n from supabase_jobs.kind_limits where kind = 'attack'`;
		expect(n).toBe(0);
	});

	it('a user reaches nothing behind the actions by direct SQL either: limits, starts, finished jobs, kept timings', async () => {
		const [done] = await seed('attack-sql', 1);
		await db.sql`select job_claim(${done})`;
		await db.sql`select job_succeed(${done}, timings => ${db.sql.json({ total: 1 })})`;
		await db.sql`select job_set_concurrency('attack-sql', 3)`;
		const direct = (q: (tx: postgres.TransactionSql) => Promise<unknown>) => outcome(as(db.sql, alice, q));
		// RLS: a user's write of kind_limits is refused, an update or delete finds no row.
		expect(
			await direct(
				(tx) =>
					tx`insert into supabase_jobs.kind_limits (job_table, kind, paused_at) values ('jobs', 'attack-sql2', now())`,
			),
		).toBe('42501');
		expect(
			await as(db.sql, alice, (tx) => tx`update supabase_jobs.kind_limits set paused_at = now() returning kind`),
		).toHaveLength(0);
		expect(await as(db.sql, alice, (tx) => tx`delete from supabase_jobs.kind_limits returning kind`)).toHaveLength(0);
		expect(await as(db.sql, alice, (tx) => tx`select * from supabase_jobs.kind_limits`)).toHaveLength(0);
		expect(await direct((tx) => tx`select * from supabase_jobs.kind_starts`)).toBe('42501');
		expect(await as(db.sql, alice, (tx) => tx`delete from supabase_jobs.job returning id`)).toHaveLength(0);
		expect(await direct((tx) => tx`delete from jobs where id = ${done}`)).toBe('42501');
		expect(
			await direct(
				(tx) =>
					tx`insert into supabase_jobs.phase_timings (id, job_table, kind, finished_at, timings) values (gen_random_uuid(), 'jobs', 'x', now(), '{}')`,
			),
		).toBe('42501');
		expect(await direct((tx) => tx`select supabase_jobs.wake_resumed_kind()`)).toBe('42501');
		expect(await statusCounts('attack-sql')).toEqual({ done: 1 });
		const [limits] =
			await db.sql`select max_running, paused_at from supabase_jobs.kind_limits where kind = 'attack-sql'`;
		expect(limits).toEqual({ max_running: 3, paused_at: null });
		// anon has no privilege on any of it.
		for (const table of ['kind_limits', 'kind_starts', 'job', 'phase_timings'])
			expect(await outcome(as(db.sql, anon, (tx) => tx.unsafe(`select 1 from supabase_jobs.${table}`)))).toBe('42501');
	});

	it('an admin and the service role may act', async () => {
		for (const [name, call] of ACTIONS) {
			expect([name, await outcome(asAdmin(call))]).toEqual([name, 'ok']);
			expect([name, await outcome(as(db.sql, serviceRole, call))]).toEqual([name, 'ok']);
		}
		await asAdmin((tx) => tx`select job_resume_kind('attack'), job_set_rate_limit('attack', null, null)`);
	});
});

describe('pausing a kind', () => {
	it('8 connections racing claim_next (any kind, and the paused kind by name) and claim by id: no paused job starts, every other one does', async () => {
		const paused = await seed('pause-race-a', 200);
		await seed('pause-race-b', 200);
		expect((await asAdmin((tx) => tx`select job_pause_kind('pause-race-a') as p`))[0]!.p).toBe(true);
		const conns = workers(8);
		const claimed: { id: string; kind: string }[] = [];
		await Promise.all(
			conns.map(async (sql, w) => {
				for (let round = 0; ; round++) {
					const kinds = w % 2 === 0 ? null : ['pause-race-a', 'pause-race-b'];
					const rows = await claimNext(sql, kinds, 3);
					// A claim by id of a paused job, as the edge function makes one.
					const byId = await claimById(sql, paused[(w * 25 + round) % paused.length]!);
					claimed.push(...rows, ...byId);
					if (rows.length === 0) return;
				}
			}),
		);
		expect(claimed.filter((c) => c.kind === 'pause-race-a')).toEqual([]);
		expect(claimed.filter((c) => c.kind === 'pause-race-b')).toHaveLength(200);
		expect(await statusCounts('pause-race-a')).toEqual({ queued: 200 });
	});

	it('claims that begin after the pause returns take none of the kind, while 8 connections claim throughout', async () => {
		await seed('pause-mid-a', 400);
		await seed('pause-mid-b', 400);
		const conns = workers(8);
		let pausedAfter = false;
		const late: { kind: string }[] = [];
		let total = 0;
		const claimers = conns.map(async (sql) => {
			for (;;) {
				const after = pausedAfter;
				const rows = await claimNext(sql, ['pause-mid-a', 'pause-mid-b'], 1);
				total += rows.length;
				if (after) late.push(...rows);
				if (rows.length === 0) return;
			}
		});
		// Pause once the race is under way (some claims made), not at a guessed time.
		while (total < 40) await new Promise((r) => setImmediate(r));
		await asAdmin((tx) => tx`select job_pause_kind('pause-mid-a')`);
		pausedAfter = true;
		await Promise.all(claimers);
		expect(late.length).toBeGreaterThan(0);
		expect(late.filter((r) => r.kind === 'pause-mid-a')).toEqual([]);
		expect((await statusCounts('pause-mid-b')).running).toBe(400);
		expect((await statusCounts('pause-mid-a')).queued).toBeGreaterThan(0);
	});

	it('a paused kind hides no other kind: 500 older paused jobs do not keep a newer job of another kind from its claim', async () => {
		await seed('pause-front', 500);
		const [behind] = await seed('pause-behind', 1);
		await asAdmin((tx) => tx`select job_pause_kind('pause-front')`);
		const rows = await claimNext(db.sql, null, 1);
		expect(rows.map((r) => r.id)).toEqual([behind]);
		await asAdmin((tx) => tx`select job_resume_kind('pause-front')`);
		await db.sql`update jobs set status = 'cancelled' where kind = 'pause-front' and status = 'queued'`;
	});

	it("a queued job's hold reason says paused; resuming clears it, wakes the workers once and lets the kind be claimed", async () => {
		const [id] = await seed('pause-hold', 1, alice.sub);
		await asAdmin((tx) => tx`select job_pause_kind('pause-hold')`);
		expect(await asAdmin((tx) => tx`select job_pause_kind('pause-hold') as p`)).toEqual([{ p: false }]);
		expect(await as(db.sql, alice, (tx) => tx`select id, held_by from job_hold_reasons(${[id!]})`)).toEqual([
			{ id, held_by: 'paused' },
		]);
		expect(await claimById(db.sql, id!)).toEqual([]);

		const listener = db.connect({ max: 1 });
		const heard: Record<string, unknown>[] = [];
		let resolveHeard!: () => void;
		const woken = new Promise<void>((r) => (resolveHeard = r));
		await listener.listen('supabase_jobs', (text) => {
			const payload = JSON.parse(text) as Record<string, unknown>;
			if (payload.reason === 'resume') {
				heard.push(payload);
				resolveHeard();
			}
		});
		expect(await asAdmin((tx) => tx`select job_resume_kind('pause-hold') as r`)).toEqual([{ r: true }]);
		await woken;
		expect(heard).toEqual([
			expect.objectContaining({
				job_table: 'jobs',
				kind: 'pause-hold',
				kinds: ['pause-hold'],
				count: 1,
				reason: 'resume',
			}),
		]);
		expect(await as(db.sql, alice, (tx) => tx`select id from job_hold_reasons(${[id!]})`)).toEqual([]);
		expect(await asAdmin((tx) => tx`select job_resume_kind('pause-hold') as r`)).toEqual([{ r: false }]);
		// Nothing left set: the row is gone, and the table claims on the unlimited path again.
		expect(await db.sql`select 1 from supabase_jobs.kind_limits where kind = 'pause-hold'`).toHaveLength(0);
		expect((await claimById(db.sql, id!)).map((r) => r.id)).toEqual([id]);
	});

	it('clearing a concurrency limit keeps the pause, and clearing the pause keeps the limit', async () => {
		await asAdmin((tx) => tx`select job_pause_kind('pause-keep')`);
		await db.sql`select job_set_concurrency('pause-keep', 2)`;
		await db.sql`select job_set_concurrency('pause-keep', null, null)`;
		const [row] =
			await db.sql`select max_running, paused_at is not null as paused from supabase_jobs.kind_limits where kind = 'pause-keep'`;
		expect(row).toEqual({ max_running: null, paused: true });
		await db.sql`select job_set_concurrency('pause-keep', 2)`;
		await asAdmin((tx) => tx`select job_resume_kind('pause-keep')`);
		const [kept] = await db.sql`select max_running, paused_at from supabase_jobs.kind_limits where kind = 'pause-keep'`;
		expect(kept).toEqual({ max_running: 2, paused_at: null });
	});
});

describe('the worker function (pg_net) and a paused kind', () => {
	it('the backstop leaves a paused kind alone; its resume wakes the worker for it', async () => {
		await setWorkerSecrets(db.sql, 'http://127.0.0.1:9/worker');
		await waitingJob(db.sql, alice, 'kick-paused', '2 minutes');
		await waitingJob(db.sql, alice, 'kick-paused', '2 minutes');
		await waitingJob(db.sql, alice, 'kick-running', '2 minutes');
		await asAdmin((tx) => tx`select job_pause_kind('kick-paused')`);
		await clearRequestQueue(db.sql);
		const backstop = async () => {
			await db.sql`select supabase_jobs.backstop()`;
			return (await queuedRequests(db.sql)).map((r) => r.body).filter((b) => String(b.kind).startsWith('kick-'));
		};
		expect(await backstop()).toEqual([
			{ job_id: null, job_table: 'jobs', kind: 'kick-running', count: 1, reason: 'backstop' },
		]);
		await clearRequestQueue(db.sql);
		await asAdmin((tx) => tx`select job_resume_kind('kick-paused')`);
		expect((await queuedRequests(db.sql)).map((r) => r.body)).toEqual([
			{ job_table: 'jobs', kind: 'kick-paused', kinds: ['kick-paused'], count: 2, reason: 'resume' },
		]);
		await db.sql`update jobs set status = 'cancelled' where kind like 'kick-%' and status = 'queued'`;
	});
});

describe('rate limits', () => {
	it('8 connections racing claim_next and claim by id start exactly 5 jobs of a kind limited to 5 a minute, and every job of other kinds', async () => {
		const ids = await seed('rate-race', 100);
		await seed('rate-free', 50);
		await asAdmin((tx) => tx`select job_set_rate_limit('rate-race', 5, 60000)`);
		const conns = workers(8);
		const claimed: { id: string; kind: string }[] = [];
		await Promise.all(
			conns.map(async (sql, w) => {
				for (let round = 0; ; round++) {
					const rows = await claimNext(sql, w % 2 === 0 ? null : ['rate-race', 'rate-free'], 2);
					const byId = await claimById(sql, ids[(w * 12 + round) % ids.length]!);
					claimed.push(...rows, ...byId);
					if (rows.length === 0) return;
				}
			}),
		);
		expect(claimed.filter((c) => c.kind === 'rate-race')).toHaveLength(5);
		expect(claimed.filter((c) => c.kind === 'rate-free')).toHaveLength(50);
		expect(await statusCounts('rate-race')).toEqual({ queued: 95, running: 5 });
	});

	it('a sliding window: with 3 starts per second and 8 connections claiming, no second holds more than 3 starts', async () => {
		await seed('rate-window', 9);
		await asAdmin((tx) => tx`select job_set_rate_limit('rate-window', 3, 1000)`);
		const conns = workers(8);
		const starts: number[] = [];
		await Promise.all(
			conns.map(async (sql) => {
				while (starts.length < 9) {
					const rows = await claimNext(sql, ['rate-window'], 3);
					if (rows.length > 0) starts.push(...rows.map(() => Date.now()));
					// A poll interval, as a worker's: the window, not this pace, decides.
					else await new Promise((r) => setTimeout(r, 25));
				}
			}),
		);
		const started = (
			await db.sql<{ t: Date }[]>`select started_at as t from jobs where kind = 'rate-window' order by started_at`
		).map((r) => r.t.getTime());
		expect(started).toHaveLength(9);
		// Any 4 consecutive starts span at least the window (less the time a claim waits for its turn).
		for (let i = 0; i + 3 < started.length; i++) expect(started[i + 3]! - started[i]!).toBeGreaterThan(1000 - 150);
		// And the whole run took at least two windows: 9 starts at 3 per second.
		expect(started.at(-1)! - started[0]!).toBeGreaterThan(2000 - 150);
	});

	it('a claim held by a full window tells the runners when it frees a start (NOTIFY, reason rate, available_at)', async () => {
		await seed('rate-notify', 2);
		await asAdmin((tx) => tx`select job_set_rate_limit('rate-notify', 1, 5000)`);
		const listener = db.connect({ max: 1 });
		let resolveHeard!: (payload: Record<string, unknown>) => void;
		const heard = new Promise<Record<string, unknown>>((r) => (resolveHeard = r));
		await listener.listen('supabase_jobs', (text) => {
			const payload = JSON.parse(text) as Record<string, unknown>;
			if (payload.reason === 'rate' && payload.kind === 'rate-notify') resolveHeard(payload);
		});
		expect(await claimNext(db.sql, ['rate-notify'], 2)).toHaveLength(1);
		const payload = await heard;
		const [{ started }] = await db.sql<{ started: Date }[]>`
			select started_at as started from supabase_jobs.kind_starts where kind = 'rate-notify'`;
		expect(payload).toMatchObject({ job_table: 'jobs', kinds: ['rate-notify'], count: 1 });
		expect(Date.parse(String(payload.available_at))).toBe(started.getTime() + 5000);
	});

	it('the starts of a window add up from at most ~100 rows, however many jobs start in it', async () => {
		await seed('rate-rows', 300);
		await asAdmin((tx) => tx`select job_set_rate_limit('rate-rows', 100000, 60000)`);
		for (let i = 0; i < 300; i++) expect(await claimNext(db.sql, ['rate-rows'], 1)).toHaveLength(1);
		const [{ rows, starts }] = await db.sql<{ rows: number; starts: number }[]>`
			select count(*)::int as rows, sum(starts)::int as starts from supabase_jobs.kind_starts where kind = 'rate-rows'`;
		expect(starts).toBe(300);
		expect(rows).toBeLessThanOrEqual(101);
	});

	it("a queued job's hold reason says its rate limit is spent, with the starts in the window and the starts allowed", async () => {
		const ids = await seed('rate-hold', 3, alice.sub);
		await asAdmin((tx) => tx`select job_set_rate_limit('rate-hold', 2, 60000)`);
		expect(await claimNext(db.sql, ['rate-hold'], 3)).toHaveLength(2);
		const waiting = (
			await db.sql<{ id: string }[]>`select id from jobs where kind = 'rate-hold' and status = 'queued'`
		)[0]!.id;
		expect(ids).toContain(waiting);
		expect(
			await as(db.sql, alice, (tx) => tx`select id, held_by, running, max_running from job_hold_reasons(${ids})`),
		).toEqual([{ id: waiting, held_by: 'rate', running: 2, max_running: 2 }]);
		await asAdmin((tx) => tx`select job_set_rate_limit('rate-hold', null, null)`);
		expect(await as(db.sql, alice, (tx) => tx`select id from job_hold_reasons(${ids})`)).toEqual([]);
		expect(await claimNext(db.sql, ['rate-hold'], 3)).toHaveLength(1);
	});
});

describe('cancelling in bulk', () => {
	it('cancels the jobs every filter matches, oldest first up to limit, each with one Realtime message and its children cascading', async () => {
		const kind = 'bulk-cancel';
		// One statement each: distinct creation times, so "oldest first" is this order.
		const mine: string[] = [];
		for (let i = 0; i < 4; i++) mine.push(...(await seed(kind, 1, alice.sub)));
		const other = await seed(kind, 2, boss.sub);
		await seed(`${kind}-other`, 2, alice.sub);
		// A running parent with a child: cancelling the parent cancels the child too.
		await db.sql`select job_claim(${mine[0]!})`;
		const [{ id: child }] = await db.sql<
			{ id: string }[]
		>`select id from job_enqueue_child(${mine[0]!}, ${kind + '-part'})`;

		const n = await asAdmin(
			(tx) =>
				tx<
					{ n: number }[]
				>`select job_cancel_many(kind => ${kind}, owner_id => ${alice.sub}, reason => 'Stopped by support.', "limit" => 3) as n`,
		);
		expect(n).toEqual([{ n: 3 }]);
		const rows = await db.sql<{ id: string; status: string; error: string | null }[]>`
			select id, status::text, error from jobs where kind = ${kind} order by created_at, id`;
		const status = Object.fromEntries(rows.map((r) => [r.id, r.status]));
		expect(mine.map((id) => status[id])).toEqual(['cancelled', 'cancelled', 'cancelled', 'queued']);
		expect(await db.sql`select status::text, error from jobs where id = ${child}`).toEqual([
			{ status: 'cancelled', error: 'Stopped by support.' },
		]);
		expect(other.map((id) => status[id])).toEqual(['queued', 'queued']);
		expect(rows.find((r) => r.id === mine[1])!.error).toBe('Stopped by support.');
		for (const id of mine.slice(0, 3)) {
			const [{ m }] = await db.sql<{ m: number }[]>`
				select count(*)::int as m from realtime.messages
				 where topic = ${'jobs:' + alice.sub} and payload->>'id' = ${id} and payload->>'status' = 'cancelled'`;
			expect([id, m]).toEqual([id, 1]);
		}
	});

	it('filters by status and creation time; a job already ended is never touched', async () => {
		const kind = 'bulk-status';
		const [a, b, c] = await seed(kind, 3);
		await db.sql`select job_claim(${b!})`;
		await db.sql`select job_claim(${c!})`;
		await db.sql`select job_succeed(${c!})`;
		const [{ t }] = await db.sql<{ t: Date }[]>`select created_at as t from jobs where id = ${a!}`;
		expect(
			await asAdmin(
				(tx) => tx`select job_cancel_many(kind => ${kind}, statuses => '{running}', created_after => ${t}) as n`,
			),
		).toEqual([{ n: 1 }]);
		expect(await statusCounts(kind)).toEqual({ queued: 1, cancelled: 1, done: 1 });
		expect(await asAdmin((tx) => tx`select job_cancel_many(kind => ${kind}, created_before => ${t}) as n`)).toEqual([
			{ n: 0 },
		]);
	});
});

describe('deleting finished jobs', () => {
	it('deletes up to limit of the finished jobs ended before the time, of the statuses asked, keeping the timings of done ones', async () => {
		const kind = 'delete-finished';
		const ids = await seed(kind, 5);
		for (const id of ids.slice(0, 3)) {
			await db.sql`select job_claim(${id})`;
			await db.sql`select job_succeed(${id}, timings => ${db.sql.json({ total: 2 })})`;
		}
		await db.sql`select job_cancel(${ids[3]!})`;
		expect(
			await asAdmin((tx) => tx`select job_delete_finished(now() + interval '1 minute', ${kind}, '{done}', 2) as n`),
		).toEqual([{ n: 2 }]);
		expect(await statusCounts(kind)).toEqual({ done: 1, cancelled: 1, queued: 1 });
		const [{ kept }] = await db.sql<{ kept: number }[]>`
			select count(*)::int as kept from supabase_jobs.phase_timings where kind = ${kind}`;
		expect(kept).toBe(2);
		// Nothing ended before an hour ago.
		expect(await asAdmin((tx) => tx`select job_delete_finished(now() - interval '1 hour', ${kind}) as n`)).toEqual([
			{ n: 0 },
		]);
		expect(await asAdmin((tx) => tx`select job_delete_finished(now() + interval '1 minute', ${kind}) as n`)).toEqual([
			{ n: 2 },
		]);
		expect(await statusCounts(kind)).toEqual({ queued: 1 });
	});
});

describe('the dashboard read', () => {
	it('one row per kind: jobs by status, the last hour, pause, rate and concurrency limits', async () => {
		const kind = 'dash-kind';
		const ids = await seed(kind, 4);
		await db.sql`select job_claim(${ids[0]!})`;
		await db.sql`select job_claim(${ids[1]!})`;
		await db.sql`select job_succeed(${ids[1]!})`;
		await db.sql`select job_claim(${ids[2]!})`;
		await db.sql`select job_fail(${ids[2]!}, 'Broken.')`;
		await asAdmin((tx) => tx`select job_pause_kind(${kind}), job_set_rate_limit(${kind}, 10, 1000)`);
		await db.sql`select job_set_concurrency(${kind}, 4, 1)`;
		await db.sql`select supabase_jobs.register_job_kind('dash-registered')`;
		const rows = await asAdmin((tx) => tx`select * from job_admin_kinds() where kind in (${kind}, 'dash-registered')`);
		expect(rows).toEqual([
			expect.objectContaining({
				kind,
				queued: 1,
				running: 1,
				waiting: 0,
				done: 1,
				failed: 1,
				cancelled: 0,
				done_last_hour: 1,
				failed_last_hour: 1,
				rate_starts: 10,
				rate_per_ms: 1000,
				max_running: 4,
				max_running_per_key: 1,
			}),
			expect.objectContaining({ kind: 'dash-registered', queued: 0, paused_at: null, rate_starts: null }),
		]);
		expect(rows[0]!.paused_at).toBeInstanceOf(Date);
	});
});

describe('bad input', () => {
	const refusals: [string, string, (tx: postgres.TransactionSql) => Promise<unknown>][] = [
		['kind', 'job_pause_kind', (tx) => tx`select job_pause_kind('no spaces')`],
		['kind', 'job_resume_kind', (tx) => tx`select job_resume_kind(null)`],
		['kind', 'job_set_rate_limit', (tx) => tx`select job_set_rate_limit('', 1, 1000)`],
		['starts', 'job_set_rate_limit', (tx) => tx`select job_set_rate_limit('bad-input', 0, 1000)`],
		['starts', 'job_set_rate_limit', (tx) => tx`select job_set_rate_limit('bad-input', ${RATE_STARTS_MAX + 1}, 1000)`],
		['starts', 'job_set_rate_limit', (tx) => tx`select job_set_rate_limit('bad-input', null, 1000)`],
		['per_ms', 'job_set_rate_limit', (tx) => tx`select job_set_rate_limit('bad-input', 1, null)`],
		['per_ms', 'job_set_rate_limit', (tx) => tx`select job_set_rate_limit('bad-input', 1, ${RATE_PER_MS_MIN - 1})`],
		['per_ms', 'job_set_rate_limit', (tx) => tx`select job_set_rate_limit('bad-input', 1, ${RATE_PER_MS_MAX + 1})`],
		['kind', 'job_cancel_many', (tx) => tx`select job_cancel_many()`],
		['kind', 'job_cancel_many', (tx) => tx`select job_cancel_many(kind => 'a b')`],
		['statuses', 'job_cancel_many', (tx) => tx`select job_cancel_many(statuses => '{done}')`],
		['statuses', 'job_cancel_many', (tx) => tx`select job_cancel_many(statuses => '{}')`],
		[
			'created_before',
			'job_cancel_many',
			(tx) => tx`select job_cancel_many(created_after => now(), created_before => now() - interval '1 second')`,
		],
		['limit', 'job_cancel_many', (tx) => tx`select job_cancel_many(kind => 'bad-input', "limit" => 0)`],
		['limit', 'job_cancel_many', (tx) => tx`select job_cancel_many(kind => 'bad-input', "limit" => 1001)`],
		['ended_before', 'job_delete_finished', (tx) => tx`select job_delete_finished(null)`],
		['statuses', 'job_delete_finished', (tx) => tx`select job_delete_finished(now(), statuses => '{queued}')`],
		['kind', 'job_delete_finished', (tx) => tx`select job_delete_finished(now(), 'a b')`],
		['limit', 'job_delete_finished', (tx) => tx`select job_delete_finished(now(), "limit" => ${BATCH_MAX + 1})`],
		['job_table', 'job_admin_kinds', (tx) => tx`select * from job_admin_kinds('Not A Table')`],
	];
	it('every input is refused with 22023 naming its field, and nothing is written', async () => {
		await seed('bad-input', 1);
		for (const [field, name, call] of refusals) {
			const e = await failure(asAdmin(call));
			expect([name, field, e]).toEqual([name, field, { code: '22023', detail: `field=${field}` }]);
		}
		expect(await db.sql`select 1 from supabase_jobs.kind_limits where kind = 'bad-input'`).toHaveLength(0);
		expect(await statusCounts('bad-input')).toEqual({ queued: 1 });
	});

	it('the TypeScript mirrors of the bounds are the database’s', async () => {
		const [row] = await db.sql`
			select supabase_jobs.rate_starts_max() as starts_max, supabase_jobs.rate_per_ms_min() as per_min,
			       supabase_jobs.rate_per_ms_max() as per_max, supabase_jobs.batch_max() as batch_max`;
		expect(row).toEqual({
			starts_max: RATE_STARTS_MAX,
			per_min: RATE_PER_MS_MIN,
			per_max: RATE_PER_MS_MAX,
			batch_max: BATCH_MAX,
		});
	});
});
