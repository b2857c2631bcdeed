/**
 * Retention (settings.finished_retention, applied by supabase_jobs.cleanup):
 * under a steady stream of jobs enqueued, claimed and finished through the
 * job API, the hot table stays bounded, cleanup deletes in batches and never
 * waits on a row another transaction holds, and the phase timings
 * PhasePlan.fromHistory reads (job_phase_history) survive the deletes.
 *
 * Time is simulated: after each cycle every finished row is aged by one
 * cycle (finished_at moved back, triggers off, as the owner), so a one-hour
 * retention keeps exactly the cycles younger than an hour.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

const CYCLES = 20;
const PER_CYCLE = 100;
/** One cycle of simulated time; with 1 hour retention, 2 cycles (25 and 50 minutes old) are kept. */
const CYCLE = '25 minutes';
const BATCH = 40;

let db: TestDatabase;
let user: Caller & { sub: string };

beforeAll(async () => {
	db = await useTestDatabase();
	user = await createUser(db.sql);
	await db.sql`update supabase_jobs.settings set finished_retention = '1 hour', cleanup_batch_size = ${BATCH}`;
});

/** One cycle of load: PER_CYCLE jobs enqueued, claimed and closed done with timings naming their cycle. */
async function runCycle(cycle: number): Promise<void> {
	await as(db.sql, serviceRole, async (tx) => {
		const items = Array.from({ length: PER_CYCLE }, () => ({ owner_id: user.sub }));
		await tx`select id from job_enqueue_many('thumb', ${tx.json(items)})`;
		const claimed = await tx`select id, attempts from job_claim_next(array['thumb'], ${PER_CYCLE})`;
		expect(claimed).toHaveLength(PER_CYCLE);
		const closes = claimed.map((j, i) => ({
			id: j.id,
			attempt: j.attempts,
			timings: { render: { seconds: cycle + i / 1000, size: 1000 + i } },
		}));
		const closed = await tx`select id from job_succeed_many(${tx.json(closes)})`;
		expect(closed).toHaveLength(PER_CYCLE);
	});
}

/** Simulated time passes: every finished job is one cycle older. */
async function age(): Promise<void> {
	await db.sql.begin(async (tx) => {
		await tx`set local session_replication_role = replica`;
		await tx`update supabase_jobs.job set finished_at = finished_at - ${CYCLE}::interval where finished_at is not null`;
	});
}

/** One run of the cleanup schedule, as pg_cron runs it (as the owner). */
async function cleanup(): Promise<{ what: string; deleted: string }[]> {
	return (await db.sql`select what, deleted from supabase_jobs.cleanup()`) as unknown as {
		what: string;
		deleted: string;
	}[];
}

async function hotRows(): Promise<number> {
	return (await db.sql`select count(*)::int as n from supabase_jobs.job where job_table = 'jobs'`)[0]!.n as number;
}

describe('retention under a steady load', () => {
	it('keeps the hot table bounded over many cleanup cycles, never touching live jobs, and keeps the timings', async () => {
		// Live jobs that outlast every cycle: 2 queued and 3 running (of another kind).
		await as(db.sql, serviceRole, async (tx) => {
			await tx`select id from job_enqueue_many('slow', ${tx.json(Array.from({ length: 5 }, () => ({})))})`;
			await tx`select id from job_claim_next(array['slow'], 3)`;
		});
		const sizes: number[] = [];
		const deletedPerRun: number[] = [];
		for (let cycle = 1; cycle <= CYCLES; cycle++) {
			await runCycle(cycle);
			await age();
			const rows = await cleanup();
			deletedPerRun.push(Number(rows.find((r) => r.what === 'jobs')!.deleted));
			sizes.push(await hotRows());
		}
		console.log(
			`retention: ${CYCLES * PER_CYCLE} jobs through the table in ${CYCLES} cycles of ${CYCLE}; hot rows after each cleanup: ${sizes.join(', ')}; deleted per run: ${deletedPerRun.join(', ')}`,
		);
		// 1 hour retention, cycles of 25 minutes: the 2 youngest cycles stay, plus the 5 live jobs.
		expect(sizes.slice(0, 2)).toEqual([PER_CYCLE + 5, 2 * PER_CYCLE + 5]);
		expect(sizes.slice(2)).toEqual(Array(CYCLES - 2).fill(2 * PER_CYCLE + 5));
		expect(deletedPerRun).toEqual([0, 0, ...Array(CYCLES - 2).fill(PER_CYCLE)]);
		const live =
			await db.sql`select status, count(*)::int as n from supabase_jobs.job where kind = 'slow' group by status order by status`;
		expect(live.map((r) => [r.status, r.n])).toEqual([
			['queued', 2],
			['running', 3],
		]);

		// The timings of deleted jobs are kept, bounded to what a history call can ask for (1000 per kind).
		const [{ kept }] = await db.sql`select count(*)::int as kept from supabase_jobs.phase_timings`;
		expect(kept).toBe(1000);
		const history = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select timings, finished_at from job_phase_history('thumb', 1000)`,
		);
		expect(history).toHaveLength(1000);
		const cycles = history.map((h) => Math.floor(h.timings.render.seconds as number));
		// Newest first: the 2 cycles still in the table, then 8 cycles only phase_timings holds.
		expect([...new Set(cycles)]).toEqual([20, 19, 18, 17, 16, 15, 14, 13, 12, 11]);
		const times = history.map((h) => (h.finished_at as Date).getTime());
		expect(times).toEqual([...times].sort((a, b) => b - a));
		// The owner reads their own kept timings too, as they read their own jobs.
		const own = await as(db.sql, user, (tx) => tx`select timings from job_phase_history('thumb', 300)`);
		expect(own.map((h) => Math.floor(h.timings.render.seconds as number))).toEqual([
			...Array(100).fill(20),
			...Array(100).fill(19),
			...Array(100).fill(18),
		]);
		const stranger = await createUser(db.sql);
		expect(await as(db.sql, stranger, (tx) => tx`select timings from job_phase_history('thumb', 10)`)).toEqual([]);
	});

	it('deletes in batches of cleanup_batch_size, within cleanup_time_budget', async () => {
		await runCycle(100);
		await runCycle(101);
		await age();
		await age();
		await age();
		// 400 jobs past an hour: a run whose budget is spent after its first batch deletes exactly one batch.
		await db.sql`update supabase_jobs.settings set cleanup_time_budget = '1 microsecond'`;
		try {
			const before = await hotRows();
			const rows = await cleanup();
			const deleted = Number(rows.find((r) => r.what === 'jobs')!.deleted);
			expect(deleted).toBe(BATCH);
			expect(await hotRows()).toBe(before - deleted);
		} finally {
			await db.sql`update supabase_jobs.settings set cleanup_time_budget = default`;
		}
		const rows = await cleanup();
		expect(Number(rows.find((r) => r.what === 'jobs')!.deleted)).toBeGreaterThan(0);
		const [{ old }] = await db.sql`
			select count(*)::int as old from supabase_jobs.job where finished_at < now() - interval '1 hour'`;
		expect(old).toBe(0);
	});

	it('skips a finished row another transaction holds instead of waiting for it', async () => {
		await runCycle(200);
		await age();
		await age();
		await age();
		const [held] = await db.sql`select id from supabase_jobs.job where finished_at < now() - interval '1 hour' limit 1`;
		const holder = db.connect({ max: 1 });
		let release!: () => void;
		const released = new Promise<void>((r) => (release = r));
		let locked!: () => void;
		const isLocked = new Promise<void>((r) => (locked = r));
		const holding = holder.begin(async (tx) => {
			await tx`select id from supabase_jobs.job where job_table = 'jobs' and id = ${held!.id} for update`;
			locked();
			await released;
		});
		await isLocked;
		try {
			const rows = await db.sql.begin(async (tx) => {
				await tx`set local lock_timeout = '2s'`;
				return await tx`select what, deleted from supabase_jobs.cleanup()`;
			});
			expect(Number(rows.find((r) => r.what === 'jobs')!.deleted)).toBe(PER_CYCLE - 1);
			expect(await db.sql`select id from supabase_jobs.job where id = ${held!.id}`).toHaveLength(1);
		} finally {
			release();
			await holding;
		}
		const rows = await cleanup();
		expect(Number(rows.find((r) => r.what === 'jobs')!.deleted)).toBe(1);
	});

	it('keeps every finished job while finished_retention is null', async () => {
		await db.sql`update supabase_jobs.settings set finished_retention = null`;
		try {
			await runCycle(300);
			await age();
			await age();
			await age();
			const before = await hotRows();
			const rows = await cleanup();
			expect(rows.filter((r) => r.what === 'jobs')).toEqual([]);
			expect(await hotRows()).toBe(before);
		} finally {
			await db.sql`update supabase_jobs.settings set finished_retention = '1 hour'`;
		}
	});

	it('runs side by side with the load: neither waits for the other, and nothing past retention survives a run', async () => {
		const load = (async () => {
			for (let cycle = 400; cycle < 410; cycle++) await runCycle(cycle);
		})();
		const cleaning = (async () => {
			for (let run = 0; run < 10; run++) {
				await age();
				await db.sql.begin(async (tx) => {
					await tx`set local lock_timeout = '2s'`;
					await tx`select * from supabase_jobs.cleanup()`;
				});
			}
		})();
		await Promise.all([load, cleaning]);
		await cleanup();
		const [{ old }] = await db.sql`
			select count(*)::int as old from supabase_jobs.job where finished_at < now() - interval '1 hour'`;
		expect(old).toBe(0);
		const [{ kept }] = await db.sql`select count(*)::int as kept from supabase_jobs.phase_timings`;
		expect(kept).toBeLessThanOrEqual(1000);
		// Every cycle of the load closed all its jobs done (runCycle checks); the live jobs are untouched.
		const live =
			await db.sql`select status, count(*)::int as n from supabase_jobs.job where kind = 'slow' group by status order by status`;
		expect(live.map((r) => [r.status, r.n])).toEqual([
			['queued', 2],
			['running', 3],
		]);
	});
});
