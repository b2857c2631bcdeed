/**
 * The worker toolkit over a real job through JobStore (postgres.js, embedded
 * database): ProgressTracker's ticks are one UPDATE each and learn of a
 * cancellation on the next one; PhasePlan.fromHistory fits from the timings
 * JobStore recorded.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { isJobError, type StageInterruptedError } from '../../src/lib/errors.ts';
import type { JobAdapter } from '../../src/lib/store/adapter.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { ProgressTracker } from '../../src/lib/toolkit/progress-tracker.ts';
import { claimsFor, serviceRole, useTestDatabase } from '../helpers/db.ts';
import { counting, Signal } from './harness.ts';

const db = await useTestDatabase();
const sql = db.connect({ prepare: false, max: 4 });
const service = () => postgresAdapter(sql, { claims: claimsFor(serviceRole) });
const worker = new JobStore(service());
const uniqueKind = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

interface Version {
	progress: number;
	stage: string | null;
	status: string;
}

/** Every row version an UPDATE wrote for the job, in order (an AFTER UPDATE trigger in this test database). */
async function versions(id: string): Promise<Version[]> {
	return await db.sql<
		Version[]
	>`select progress, stage, status::text as status from public.test_job_updates where job_id = ${id} order by n`;
}

beforeAll(async () => {
	await db.sql.unsafe(`
		create table public.test_job_updates (n bigserial primary key, job_id uuid, progress real, stage text, status public.job_status);
		create function public.test_log_job_update() returns trigger language plpgsql security definer set search_path = '' as $$
		begin
		  insert into public.test_job_updates (job_id, progress, stage, status) values (new.id, new.progress, new.stage, new.status);
		  return null;
		end $$;
		create trigger test_log_job_update after update on public.jobs for each row execute function public.test_log_job_update();
	`);
});

describe('ProgressTracker over a real job', () => {
	test('every tick writes progress and stage on the row: one UPDATE per tick, never backwards', async () => {
		const job = (await worker.claim((await worker.enqueue(uniqueKind('extract'))).id))!;
		const counted = counting(service());
		const store = new JobStore(counted.adapter);
		const plan = PhasePlan.fromSeconds({ pdf: 1, table: 3 });
		const tracker = new ProgressTracker(store, job.id, { plan, attempt: job.attempts, intervalMs: 10, heartbeatMs: 0 });
		const before = (await versions(job.id)).length; // the claim's own update

		expect(await tracker.run('pdf', async () => 12)).toBe(12);
		const ticksBeforeTable = counted.count('job_tick');
		const table = await tracker.run('table', () =>
			counted.signal.until(() => counted.count('job_tick') >= ticksBeforeTable + 6).then(() => 'rows'),
		);
		expect(table).toBe('rows');

		// A tick may still be in flight after run() resolves (the interval timer can fire during the
		// final tick); count only once every call has settled.
		await counted.signal.until(() => counted.settled() === counted.calls.length);
		const ticks = counted.count('job_tick');
		expect(counted.calls.every((c) => c === 'job_tick')).toBe(true);
		const written = (await versions(job.id)).slice(before);
		expect(written).toHaveLength(ticks); // one UPDATE per tick, no read-then-write
		const progresses = written.map((v) => v.progress);
		expect(progresses).toEqual([...progresses].sort((a, b) => a - b));
		expect(written.at(-1)).toMatchObject({ progress: 100, stage: 'table', status: 'running' });
		expect(await worker.get(job.id)).toMatchObject({ progress: tracker.progress, stage: 'table' });

		const done = await worker.succeed(job.id, { attempt: job.attempts, timings: tracker.timings() });
		expect(Object.keys(done.timings ?? {})).toEqual(['pdf', 'table']);
	});

	test('the tick that writes progress is the one that learns the user cancelled: the next tick stops the phase', async () => {
		const job = (await worker.claim((await worker.enqueue(uniqueKind('extract'))).id))!;
		let cancelled = false;
		const ticks: { afterCancel: boolean; status?: string }[] = [];
		const afterTick = new Signal();
		const inner = service();
		const adapter: JobAdapter = {
			name: 'recording',
			async call(fn, args) {
				const entry: { afterCancel: boolean; status?: string } = { afterCancel: cancelled };
				if (fn === 'job_tick') ticks.push(entry);
				const result = await inner.call(fn, args);
				if (fn === 'job_tick') entry.status = String(result);
				afterTick.notify();
				return result;
			},
		};
		const tracker = new ProgressTracker(new JobStore(adapter), job.id, {
			plan: PhasePlan.fromSeconds({ reading: 60 }),
			attempt: job.attempts,
			intervalMs: 10,
			heartbeatMs: 0,
		});
		let workAborted = false;
		const reading = tracker.run(
			'reading',
			(signal) =>
				new Promise<never>((_, reject) =>
					signal.addEventListener('abort', () => ((workAborted = true), reject(signal.reason))),
				),
		);
		await afterTick.until(() => ticks.filter((t) => t.status === 'running').length >= 3);
		await worker.cancel(job.id, { reason: 'cancelled by the user' });
		cancelled = true;

		const e = await reading.then(
			() => null,
			(err: unknown) => err,
		);
		expect(isJobError(e, 'stage_interrupted')).toBe(true);
		expect((e as StageInterruptedError).status).toBe('cancelled');
		expect(workAborted).toBe(true);
		// Every tick before it said running; the first tick to reach the database after the
		// cancel said cancelled, and the tracker sent none after it.
		const statuses = ticks.map((t) => t.status);
		expect(statuses.at(-1)).toBe('cancelled');
		expect(statuses.slice(0, -1).every((s) => s === 'running')).toBe(true);
		expect(ticks.filter((t) => t.afterCancel).length).toBeLessThanOrEqual(1);
		// The cancelled row took no progress write: the cancel is the last change it saw.
		const all = await versions(job.id);
		expect(all.at(-1)?.status).toBe('cancelled');
		expect(all.filter((v) => v.status === 'cancelled')).toHaveLength(1);
	});
});

describe('one tick is progress and the cancellation check, on the same interval', () => {
	test('a phase parked at its 95% cap notices a cancel within one interval plus one round trip, without an UPDATE per interval', async () => {
		const job = (await worker.claim((await worker.enqueue(uniqueKind('parked'))).id))!;
		const counted = counting(service());
		const intervalMs = 20;
		// A 1 ms plan: the estimate reaches the cap on the first interval and stays there.
		const tracker = new ProgressTracker(new JobStore(counted.adapter), job.id, {
			plan: PhasePlan.fromSeconds({ reading: 0.001 }),
			attempt: job.attempts,
			intervalMs,
			heartbeatMs: 5000,
		});
		const reading = tracker.run(
			'reading',
			(signal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
		);
		reading.catch(() => {});
		// Parked: the cap was written once, and the intervals since only read.
		await counted.signal.until(() => counted.count('job_get_status') >= 10);
		const parked = await versions(job.id);
		expect(parked.at(-1)).toMatchObject({ progress: 95, stage: 'reading', status: 'running' });
		const ticksWhileParked = counted.count('job_tick');
		await counted.signal.until(() => counted.count('job_get_status') >= 20);
		expect(counted.count('job_tick')).toBe(ticksWhileParked);
		expect(await versions(job.id)).toHaveLength(parked.length);

		// One round trip, measured on this machine now.
		const t0 = performance.now();
		await worker.get(job.id);
		const roundTripMs = performance.now() - t0;

		await worker.cancel(job.id, { reason: 'cancelled by the user' });
		const cancelledAt = performance.now();
		await new Promise((resolve) => tracker.signal.addEventListener('abort', resolve, { once: true }));
		const noticedAfterMs = performance.now() - cancelledAt;
		// Before, the parked bar skipped ticks until the 5 s heartbeat. A loaded machine
		// stretches timers, so allow a few round trips, still far from 5 s.
		expect(noticedAfterMs).toBeLessThan(intervalMs + 5 * roundTripMs + 1000);
		await expect(reading).rejects.toMatchObject({ code: 'stage_interrupted', status: 'cancelled' });
		expect((await versions(job.id)).at(-1)?.status).toBe('cancelled');
	});
});

describe('PhasePlan.fromHistory(store, kind)', () => {
	test('fits medians and per-kilochar slopes from the timings the store recorded', async () => {
		const kind = uniqueKind('measured');
		for (const size of [1000, 2000, 3000, 4000, 5000]) {
			const job = (await worker.claim((await worker.enqueue(kind)).id))!;
			await worker.succeed(job.id, {
				timings: {
					pdf: { seconds: 1, size: null, start: 0 },
					table: { seconds: 10 + (0.5 * size) / 1000, size, start: 1 },
					reading: { seconds: 5, size: null, start: 20 },
				},
			});
		}
		const plan = await PhasePlan.fromHistory(worker, kind);
		expect(plan).not.toBeNull();
		expect(plan!.phases).toEqual(['pdf', 'table', 'reading']);
		expect(plan!.toJSON().medians).toEqual({ pdf: 1, table: 10, reading: 5 });
		expect(plan!.toJSON().perKilochar.table).toBeCloseTo(0.5, 9);
		expect(plan!.expectedSeconds('table', 40_000)).toBeCloseTo(30, 9);
	});

	test('with no history yet, the declared plan stands', async () => {
		const declared = PhasePlan.fromSeconds({ table: 30, reading: 19 });
		expect(await PhasePlan.fromHistory(worker, uniqueKind('new'), { fallback: declared })).toBe(declared);
		expect(await PhasePlan.fromHistory(worker, uniqueKind('new'))).toBeNull();
	});

	test("a tracker's recorded run is history the next plan is fitted from", async () => {
		const kind = uniqueKind('loop');
		const declared = PhasePlan.fromSeconds({ pdf: 1, table: 30 });
		for (let i = 0; i < 3; i++) {
			const job = (await worker.claim((await worker.enqueue(kind)).id))!;
			const tracker = new ProgressTracker(worker, job.id, { plan: declared, attempt: job.attempts, intervalMs: 1000 });
			await tracker.run('pdf', async () => null);
			await tracker.run('table', async () => null, { size: 1000 * (i + 1) });
			await worker.succeed(job.id, { attempt: job.attempts, timings: tracker.timings() });
		}
		const history = await worker.phaseHistory(kind);
		expect(history).toHaveLength(3);
		expect(history.map((t) => t.table?.size)).toEqual([3000, 2000, 1000]);
		const fitted = await PhasePlan.fromHistory(worker, kind, { fallback: declared });
		expect(fitted.phases).toEqual(['pdf', 'table']);
		// Measured runs took milliseconds, not the declared 30 s.
		expect(fitted.expectedSeconds('table')).toBeLessThan(5);
	});
});
