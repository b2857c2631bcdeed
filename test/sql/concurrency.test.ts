/**
 * Concurrency proven by racing real connections: each client below is its own
 * PostgreSQL session, so the races are the database's, not the event loop's.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { serviceRole, useTestDatabase, as, type Sql, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

async function seed(kind: string, n: number): Promise<string[]> {
	const rows = await db.sql<{ id: string }[]>`
		insert into jobs (kind, params) select ${kind}, jsonb_build_object('n', g) from generate_series(1, ${n}) g returning id`;
	return rows.map((r) => r.id);
}

function workers(n: number): Sql[] {
	return Array.from({ length: n }, () => db.connect({ max: 1 }));
}

describe('claim is a conditional UPDATE: two workers racing for one id cannot both win', () => {
	it('8 connections racing claim over 2,000 jobs: every job claimed exactly once', async () => {
		const ids = await seed('race-claim', 2000);
		const conns = workers(8);
		const wins = new Map<string, number>();
		// Every connection tries every id, concurrently, each starting at a different
		// place. Batches are fixed, sorted slices (a batch locks rows in one global
		// order), so the race is real but never a deadlock of the test's own making.
		const sorted = [...ids].sort();
		const batches = Array.from({ length: sorted.length / 50 }, (_, i) => sorted.slice(i * 50, i * 50 + 50));
		await Promise.all(
			conns.map(async (sql, w) => {
				for (let k = 0; k < batches.length; k++) {
					const batch = batches[(k + w * 5) % batches.length]!;
					const rows = await as(
						sql,
						serviceRole,
						(tx) => tx<{ id: string }[]>`select c.id from unnest(${batch}::uuid[]) as u(id), lateral job_claim(u.id) c`,
					);
					for (const r of rows) wins.set(r.id, (wins.get(r.id) ?? 0) + 1);
				}
			}),
		);
		expect(wins.size).toBe(2000);
		expect([...wins.values()].every((n) => n === 1)).toBe(true);
		const [{ n }] =
			await db.sql`select count(*)::int as n from jobs where kind = 'race-claim' and status = 'running' and attempts = 1`;
		expect(n).toBe(2000);
	});

	it('8 connections racing claim_next over 2,000 jobs: every job claimed exactly once (SKIP LOCKED)', async () => {
		await seed('race-next', 2000);
		const conns = workers(8);
		const claimed: string[] = [];
		await Promise.all(
			conns.map(async (sql) => {
				for (;;) {
					const rows = await as(
						sql,
						serviceRole,
						(tx) => tx<{ id: string }[]>`select id from job_claim_next(${['race-next']}, 7)`,
					);
					if (rows.length === 0) return;
					claimed.push(...rows.map((r) => r.id));
				}
			}),
		);
		expect(claimed).toHaveLength(2000);
		expect(new Set(claimed).size).toBe(2000);
	});
});

describe('cancel racing succeed', () => {
	it('exactly one wins and the row is consistent', async () => {
		const ids = await seed('race-cancel', 200);
		await as(
			db.sql,
			serviceRole,
			(tx) => tx`select count(*) from unnest(${ids}::uuid[]) u(id), lateral job_claim(u.id)`,
		);
		const [a, b] = workers(2) as [Sql, Sql];
		const outcomes = await Promise.all(
			ids.map(async (id) => {
				const [cancel, succeed] = await Promise.allSettled([
					as(a, serviceRole, (tx) => tx`select id from job_cancel(${id}, 'stop')`),
					as(b, serviceRole, (tx) => tx`select id from job_succeed(${id})`),
				]);
				const cancelled = cancel.status === 'fulfilled' && cancel.value.length === 1;
				const succeeded = succeed.status === 'fulfilled';
				if (!succeeded) expect((succeed as PromiseRejectedResult).reason.code).toBe('PT410');
				return { id, cancelled, succeeded };
			}),
		);
		for (const o of outcomes) expect(o.cancelled !== o.succeeded, `job ${o.id}: exactly one wins`).toBe(true);
		const rows =
			await db.sql`select id, status, payload, finished_at, error_code from jobs where id = any(${ids}::uuid[])`;
		const byId = new Map(rows.map((r) => [r.id, r]));
		for (const o of outcomes) {
			const row = byId.get(o.id)!;
			expect(row.status).toBe(o.cancelled ? 'cancelled' : 'done');
			expect(row.payload).toBeNull();
			expect(row.finished_at).toBeInstanceOf(Date);
		}
	});
});

/**
 * Holds a transaction that has just written the job (so it holds the row lock),
 * starts a reclaim that must wait for that lock, and commits only once the
 * reclaim is really blocked on it: the reclaim's scan saw the row as stale, its
 * write comes after the other transaction committed.
 */
async function raceReclaimAgainst(id: string, write: (tx: any) => Promise<unknown>): Promise<string[]> {
	const [writer, reclaimer] = workers(2) as [Sql, Sql];
	let release!: () => void;
	const held = new Promise<void>((r) => (release = r));
	let reportLocked!: () => void;
	const locked = new Promise<void>((r) => (reportLocked = r));
	const writing = as(writer, serviceRole, async (tx) => {
		await write(tx);
		reportLocked();
		await held;
	});
	await locked;
	const reclaiming = as(reclaimer, serviceRole, (tx) => tx`select id from job_reclaim_stale(interval '5 minutes')`);
	for (;;) {
		const [{ waiting }] =
			await db.sql`select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and query like '%job_reclaim_stale%'`;
		if (waiting > 0) break;
		await new Promise((r) => setImmediate(r));
	}
	release();
	await writing;
	return (await reclaiming).map((r) => r.id as string);
}

async function staleRunningJob(kind: string): Promise<string> {
	const [id] = await seed(kind, 1);
	await as(db.sql, serviceRole, (tx) => tx`select * from job_claim(${id!})`);
	await db.sql`update jobs set heartbeat_at = now() - interval '1 hour' where id = ${id!}`;
	return id!;
}

describe('reclaim racing a late succeed', () => {
	it('the succeed wins: a job that finished after the scan is never overwritten', async () => {
		const id = await staleRunningJob('race-reclaim');
		const reclaimed = await raceReclaimAgainst(id, (tx) => tx`select * from job_succeed(${id})`);
		expect(reclaimed).not.toContain(id);
		const [row] = await db.sql`select status, attempts from jobs where id = ${id}`;
		expect(row!.status).toBe('done');
		expect(row!.attempts).toBe(1);
	});

	it('a tick that lands between scan and write keeps the job running', async () => {
		const id = await staleRunningJob('race-tick');
		const reclaimed = await raceReclaimAgainst(id, (tx) => tx`select job_tick(${id}, 20, 'table')`);
		expect(reclaimed).not.toContain(id);
		const [row] = await db.sql`select status from jobs where id = ${id}`;
		expect(row!.status).toBe('running');
	});
});

describe('updated_at follows commit order', () => {
	it('a cancel whose transaction began before a tick but wrote after it stamps a later updated_at', async () => {
		const [id] = await seed('race-stamp', 1);
		await as(db.sql, serviceRole, (tx) => tx`select * from job_claim(${id!})`);
		const [canceller, worker] = workers(2) as [Sql, Sql];
		// Microseconds since the epoch, as text: a JS Date keeps milliseconds only.
		const us = (column: string) => db.sql.unsafe(`(extract(epoch from ${column}) * 1e6)::bigint::text`);
		let ticked!: () => void;
		const tickDone = new Promise<void>((r) => (ticked = r));
		let began!: (us: bigint) => void;
		const beganAt = new Promise<bigint>((r) => (began = r));
		// The cancel's transaction takes its now() first, then waits for the tick to commit, then writes.
		const cancelling = as(canceller, serviceRole, async (tx) => {
			const [{ at }] = await tx<{ at: string }[]>`select ${us('now()')} as at`;
			began(BigInt(at));
			await tickDone;
			const [row] = await tx<
				{ at: string; status: string }[]
			>`select ${us('updated_at')} as at, status from job_cancel(${id!}, 'stop')`;
			return row!;
		});
		const txStart = await beganAt;
		const tickAt = await as(worker, serviceRole, async (tx) => {
			await tx`select job_tick(${id!}, 40::real)`;
			const [{ at }] = await tx<{ at: string }[]>`select ${us('updated_at')} as at from jobs where id = ${id!}`;
			return BigInt(at);
		});
		ticked();
		const cancelled = await cancelling;
		expect(txStart).toBeLessThan(tickAt);
		expect(cancelled.status).toBe('cancelled');
		expect(BigInt(cancelled.at)).toBeGreaterThan(tickAt);
		const [row] = await db.sql<
			{ at: string; status: string }[]
		>`select ${us('updated_at')} as at, status from jobs where id = ${id!}`;
		expect(row!.status).toBe('cancelled');
		expect(BigInt(row!.at)).toBe(BigInt(cancelled.at));
	});

	it('updated_at moves forward on every write, even when the clock does not', async () => {
		const [id] = await seed('race-stamp-burst', 1);
		const stamps = await as(db.sql, serviceRole, async (tx) => {
			await tx`select * from job_claim(${id!})`;
			const seen: number[] = [];
			for (let p = 1; p <= 20; p++) {
				// One transaction: now() stands still, the stamps must not.
				await tx`select job_tick(${id!}, ${p}::real)`;
				const [r] = await tx<{ us: string }[]>`
					select (extract(epoch from updated_at) * 1e6)::bigint::text as us from jobs where id = ${id!}`;
				seen.push(Number(r!.us));
			}
			return seen;
		});
		for (let i = 1; i < stamps.length; i++) expect(stamps[i]!).toBeGreaterThan(stamps[i - 1]!);
	});
});
