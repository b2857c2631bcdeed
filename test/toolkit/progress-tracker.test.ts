import { describe, expect, it } from 'vitest';
import { ProgressTracker, type ProgressTrackerOptions } from '../../src/lib/toolkit/progress-tracker.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { StageInterruptedError } from '../../src/lib/errors.ts';
import { ManualClock } from './support/manual-clock.ts';
import { FakeTicker } from './support/fake-ticker.ts';
import { deferred } from './support/deferred.ts';

// pdf takes a quarter of the bar (0..25), table the rest (25..100).
const PLAN = PhasePlan.fromSeconds({ pdf: 10, table: 30 });

function setup(options: Partial<ProgressTrackerOptions> = {}) {
	const clock = new ManualClock();
	const ticker = new FakeTicker(clock.now);
	const tracker = new ProgressTracker(ticker, 'job-1', {
		plan: PLAN,
		intervalMs: 1000,
		heartbeatMs: 5000,
		now: clock.now,
		timers: clock,
		...options,
	});
	/** One interval: fire the tick timer, then wait until the tracker has decided and scheduled the next. */
	const step = async () => {
		await clock.fireNext();
		await clock.nextTimer();
	};
	return { clock, ticker, tracker, step };
}

const isMonotone = (xs: number[]) => xs.every((x, i) => i === 0 || x >= xs[i - 1]!);

describe('ProgressTracker: the bar that does not lie', () => {
	it('every tick writes progress and stage: one tick = one call, the first at once, then one per interval', async () => {
		const { clock, ticker, tracker, step } = setup();
		const work = deferred<string>();
		const run = tracker.run('table', () => work.promise);
		await ticker.waitForCalls(1);
		expect(ticker.calls).toEqual([{ id: 'job-1', at: 0, progress: 25, stage: 'table', etaSeconds: 30 }]);
		await step();
		await step();
		expect(ticker.calls.map((c) => [c.at, c.progress])).toEqual([
			[0, 25],
			[1000, 27.5], // 25 + 75 * 1/30
			[2000, 30],
		]);
		work.resolve('the table');
		expect(await run).toBe('the table');
		expect(clock.pendingTimers).toBe(0);
	});

	it('a phase never fills: the interpolation stops at 95% of its span', async () => {
		const { ticker, tracker, step } = setup();
		const work = deferred();
		const run = tracker.run('table', () => work.promise);
		for (let i = 0; i < 60; i++) await step(); // twice the expected 30 s
		const ceiling = 25 + 0.95 * 75;
		expect(Math.max(...ticker.progresses)).toBe(96.2); // 96.25 floored to the 0.1 step, never rounded up
		expect(ticker.progresses.every((p) => p <= ceiling && p < 100)).toBe(true);
		work.resolve();
		await run;
	});

	it('"the table call is done" is something only the table call finishing can say: then progress moves to the span end', async () => {
		const { ticker, tracker, step } = setup();
		const work = deferred();
		const run = tracker.run('pdf', () => work.promise);
		await step();
		expect(ticker.progresses.at(-1)).toBe(2.5); // 25 * 1/10
		work.resolve();
		await run;
		expect(ticker.calls.at(-1)).toMatchObject({ progress: 25, stage: 'pdf' });
		expect(tracker.progress).toBe(25);
	});

	it('a real count beats the interpolation, and only it may reach the phase ceiling', async () => {
		const { ticker, tracker, step } = setup();
		await tracker.report('pdf', { done: 0.5 });
		expect(ticker.calls.at(-1)).toMatchObject({ progress: 12.5, stage: 'pdf' });
		await tracker.report('pdf', { done: 1 });
		expect(ticker.calls.at(-1)).toMatchObject({ progress: 25, stage: 'pdf' }); // the ceiling, reached by a count

		const work = deferred();
		const run = tracker.run('table', () => work.promise);
		await step(); // interpolating: 27.5
		await tracker.report('table', { done: 1 }); // inside a run: carried by the next tick
		expect(ticker.progresses.at(-1)).toBe(27.5);
		await step();
		expect(ticker.progresses.at(-1)).toBe(100);
		work.resolve();
		await run;
	});

	it('progress never decreases: not with a smaller count, nor when a later size reshapes the spans', async () => {
		const plan = PhasePlan.fromSeconds({ pdf: 10, table: 30 }, { perKilochar: { table: 1 } });
		const { ticker, tracker, step } = setup({ plan });
		await tracker.report('pdf', { done: 0.8 }); // 20
		await tracker.report('pdf', { done: 0.2 }); // a smaller count: ignored
		expect(tracker.progress).toBe(20);
		const pdf = tracker.run('pdf', async () => 'pages');
		await pdf; // pdf ends at 25
		// A 300,000-character table: pdf's share shrinks to 10/340, the table starts at 2.9.
		const work = deferred();
		const run = tracker.run('table', () => work.promise, { size: 300_000 });
		await step();
		work.resolve();
		await run;
		expect(isMonotone(ticker.progresses)).toBe(true);
		// The table's span now starts at 2.9, below what the bar already shows: it holds at 25 until the estimate passes it.
		expect(ticker.calls.map((c) => [c.stage, c.progress])).toEqual([
			['pdf', 20],
			['pdf', 25],
			['table', 25],
			['table', 100],
		]);
	});

	it('coalesced: no write when nothing visible changed, except the heartbeat when due', async () => {
		const { ticker, tracker, step } = setup({ heartbeatMs: 5000 });
		const work = deferred();
		const run = tracker.run('table', () => work.promise);
		for (let i = 0; i < 40; i++) await step();
		const atCeiling = ticker.calls.filter((c) => c.progress === 96.2).map((c) => c.at);
		// 96.2 is reached at 29 s; after that only the heartbeat writes, every 5 s.
		expect(atCeiling).toEqual([29_000, 34_000, 39_000]);
		expect(ticker.calls).toHaveLength(1 + 29 + 2);
		work.resolve();
		await run;
	});

	it('coalesced: a report that changes nothing visible is not a write', async () => {
		const { ticker, tracker } = setup();
		await tracker.report('pdf', { done: 0.5 });
		await tracker.report('pdf', { done: 0.501 }); // 12.525 -> 12.5: the same pixel
		await tracker.report('pdf', { done: 0.5 });
		expect(ticker.calls).toHaveLength(1);
	});

	it('one poll answers both questions: a tick returning cancelled aborts the work’s signal, observed on the next tick', async () => {
		const { clock, ticker, tracker } = setup();
		let seen!: AbortSignal;
		const started = deferred();
		const run = tracker.run('table', (signal) => {
			seen = signal;
			started.resolve();
			return new Promise(() => {}); // work that never ends by itself
		});
		await started.promise;
		ticker.status = 'cancelled'; // the user clicks cancel
		expect(seen.aborted).toBe(false);
		await clock.fireNext();
		const e = await run.catch((x: unknown) => x);
		expect(e).toBeInstanceOf(StageInterruptedError);
		expect(e).toMatchObject({ stage: 'table', status: 'cancelled' });
		expect(ticker.calls).toHaveLength(2);
		expect(seen.aborted).toBe(true);
		expect(seen.reason).toBe(e);
		expect(tracker.signal.aborted).toBe(true);
		expect(clock.pendingTimers).toBe(0);
	});

	it('after a cancellation, later phases and reports refuse at once, without another round trip', async () => {
		const { ticker, tracker } = setup();
		ticker.status = 'cancelled';
		await expect(tracker.report('pdf', { done: 0.1 })).rejects.toBeInstanceOf(StageInterruptedError);
		let started = false;
		await expect(tracker.run('table', async () => void (started = true))).rejects.toMatchObject({
			code: 'stage_interrupted',
			status: 'cancelled',
		});
		await expect(tracker.report('table', { done: 0.1 })).rejects.toBeInstanceOf(StageInterruptedError);
		expect(started).toBe(false);
		expect(ticker.calls).toHaveLength(1);
	});

	it.each(['failed', 'done', 'queued'] as const)('any non-running status (%s) interrupts too', async (status) => {
		const { ticker, tracker } = setup();
		ticker.status = status;
		await expect(tracker.run('pdf', () => new Promise(() => {}))).rejects.toMatchObject({ status });
	});

	it('succeed is not reached on top of a cancellation: a tick in flight when the work resolves still counts', async () => {
		const { clock, ticker, tracker } = setup();
		const work = deferred<string>();
		const run = tracker.run('table', () => work.promise);
		await ticker.waitForCalls(1);
		const slow = deferred();
		ticker.hold = slow.promise;
		ticker.status = 'cancelled';
		await clock.fireNext(); // a tick is now in flight
		await ticker.waitForCalls(2);
		work.resolve('a result nobody wants');
		slow.resolve();
		await expect(run).rejects.toBeInstanceOf(StageInterruptedError);
		expect(tracker.timings()).toEqual({});
	});

	it('ticks never overlap: a slow round trip delays the next tick instead', async () => {
		const { clock, ticker, tracker } = setup();
		const work = deferred();
		const run = tracker.run('table', () => work.promise);
		await ticker.waitForCalls(1);
		const slow = deferred();
		ticker.hold = slow.promise;
		await clock.fireNext();
		await ticker.waitForCalls(2);
		clock.advance(10_000); // ten intervals pass while the tick is stuck
		expect(ticker.calls).toHaveLength(2);
		expect(clock.pendingTimers).toBe(0);
		ticker.hold = null;
		slow.resolve();
		await clock.nextTimer(); // scheduled only once the slow tick answered
		work.resolve();
		await run;
	});

	it('the work’s own error propagates, and its phase is not timed', async () => {
		const { tracker } = setup();
		const boom = new Error('unsupported format');
		let seen!: AbortSignal;
		await expect(tracker.run('pdf', (signal) => ((seen = signal), Promise.reject(boom)))).rejects.toBe(boom);
		expect(seen.aborted).toBe(true); // anything the work left running is told to stop
		expect(tracker.timings()).toEqual({});
		expect(tracker.signal.aborted).toBe(false); // the job was not cancelled
	});

	it('a tick that fails (database unreachable) aborts the work and rejects with that error', async () => {
		const { clock, ticker, tracker } = setup();
		let seen!: AbortSignal;
		const run = tracker.run('table', (signal) => ((seen = signal), new Promise(() => {})));
		await ticker.waitForCalls(1);
		const down = new Error('connection refused');
		ticker.failWith = down;
		await clock.fireNext();
		await expect(run).rejects.toBe(down);
		expect(seen.aborted).toBe(true);
	});

	it('records each completed phase’s seconds and size for job_succeed(timings)', async () => {
		const { clock, ticker, tracker, step } = setup();
		const pdf = deferred();
		const first = tracker.run('pdf', () => pdf.promise, { size: 1200 });
		await step();
		await step();
		clock.advance(500);
		pdf.resolve();
		await first;
		await tracker.run('table', async () => 'ok');
		expect(tracker.timings()).toEqual({
			pdf: { seconds: 2.5, size: 1200, start: 0 },
			table: { seconds: 0, size: null, start: 2.5 },
		});
		expect(ticker.calls.every((c) => c.attempt === undefined)).toBe(true);
	});

	it('the job-level size paces phases whose run gives none', async () => {
		const plan = PhasePlan.fromSeconds({ pdf: 10, table: 30 }, { perKilochar: { table: 1 } });
		const { ticker, tracker } = setup({ plan, size: 10_000 });
		const run = tracker.run('table', async () => 'ok');
		await run;
		expect(ticker.calls[0]!.progress).toBe(20); // 10 / (10 + 30 + 10)
		expect(tracker.timings().table!.size).toBe(10_000);
	});

	it('sends the claimed attempt with every tick', async () => {
		const { ticker, tracker } = setup({ attempt: 3 });
		await tracker.run('pdf', async () => 1);
		expect(ticker.calls.length).toBeGreaterThan(0);
		expect(ticker.calls.every((c) => c.attempt === 3)).toBe(true);
	});

	it('an outside signal (worker shutdown) interrupts the running phase', async () => {
		const shutdown = new AbortController();
		const { ticker, tracker } = setup({ signal: shutdown.signal });
		let seen!: AbortSignal;
		const started = deferred();
		const run = tracker.run('table', (signal) => ((seen = signal), started.resolve(), new Promise(() => {})));
		await started.promise;
		expect(ticker.calls).toHaveLength(1);
		shutdown.abort(new Error('SIGTERM'));
		const e = await run.catch((x: unknown) => x);
		expect(e).toMatchObject({ code: 'stage_interrupted', status: null });
		expect(seen.aborted).toBe(true);
		await expect(tracker.run('pdf', async () => 1)).rejects.toBeInstanceOf(StageInterruptedError);
	});

	it('a per-phase signal stops only that phase', async () => {
		const { ticker, tracker } = setup();
		const phase = new AbortController();
		const run = tracker.run('pdf', () => new Promise(() => {}), { signal: phase.signal });
		await ticker.waitForCalls(1);
		phase.abort();
		await expect(run).rejects.toBeInstanceOf(StageInterruptedError);
		expect(await tracker.run('table', async () => 'next phase runs')).toBe('next phase runs');
	});

	it('accepts a promise already started (it can be abandoned, not stopped)', async () => {
		const { tracker } = setup();
		expect(await tracker.run('pdf', Promise.resolve(42))).toBe(42);
	});

	it('phases run one at a time, and only the plan’s phases', async () => {
		const { tracker } = setup();
		const work = deferred();
		const run = tracker.run('pdf', () => work.promise);
		await expect(tracker.run('table', async () => 1)).rejects.toThrow(/"pdf" is still running/);
		await expect(tracker.report('table', { done: 0.5 })).rejects.toThrow(RangeError);
		work.resolve();
		await run;
		await expect(tracker.run('ocr', async () => 1)).rejects.toThrow(/unknown phase "ocr"/);
		await expect(tracker.report('pdf', { done: Number.NaN })).rejects.toThrow(RangeError);
	});

	it('refuses a non-positive interval', () => {
		expect(() => setup({ intervalMs: 0 })).toThrow(RangeError);
	});
});

describe('ProgressTracker: no tick after the phase settles', () => {
	it('an interval tick in flight when the work resolves does not re-arm the timer, so nothing lands after run() returns', async () => {
		const { clock, ticker, tracker } = setup();
		const work = deferred<string>();
		const run = tracker.run('table', () => work.promise);
		await ticker.waitForCalls(1);
		// A slow round trip: the interval tick is still in flight when the work resolves.
		const slow = deferred();
		ticker.hold = slow.promise;
		await clock.fireNext();
		await ticker.waitForCalls(2);
		work.resolve('the table');
		const finalTick = deferred();
		ticker.hold = finalTick.promise;
		slow.resolve();
		await ticker.waitForCalls(3); // run()'s own closing tick, the bar at the phase's end
		expect(ticker.calls.at(-1)!.progress).toBe(100);
		expect(clock.pendingTimers, 'no interval timer is armed while the closing tick is in flight').toBe(0);
		finalTick.resolve();
		expect(await run).toBe('the table');
		expect(ticker.calls).toHaveLength(3);
	});

	it('each tick carries the expected seconds left from the plan: the rest of this phase plus every later one', async () => {
		const { ticker, tracker, step } = setup();
		const pdf = deferred<void>();
		const run = tracker.run('pdf', () => pdf.promise);
		await ticker.waitForCalls(1);
		await step();
		await step();
		// pdf expects 10 s and table 30 s: 40 s at the start, 38 s two seconds in.
		expect(ticker.calls.map((c) => [c.at, c.etaSeconds])).toEqual([
			[0, 40],
			[1000, 39],
			[2000, 38],
		]);
		pdf.resolve();
		await run;
		// The phase is done: only the table's 30 s are left.
		expect(ticker.calls.at(-1)!.etaSeconds).toBe(30);
	});

	it('with a real count, the rest of the phase follows the run’s own pace: a run half as fast as the plan is seen within the first tenths', async () => {
		const { ticker, tracker, step } = setup();
		const table = deferred<void>();
		const run = tracker.run('table', () => table.promise);
		await ticker.waitForCalls(1);
		// The table is planned at 30 s but counts 1% every 0.6 s: 60 s in all.
		const etas: number[] = [];
		for (let s = 1; s <= 24; s++) {
			await tracker.report('table', { done: s / 60 });
			await step();
			etas.push(ticker.calls.at(-1)!.etaSeconds!);
		}
		const left = (s: number) => 60 - s; // the truth, s seconds in
		// 6 s in (10% done): the pace weighs twice the plan, 50 s in all, 45 s left (the plan alone said 27).
		expect(etas[5]).toBeCloseTo(45, 5);
		expect(Math.abs(etas[5]! - left(6)) / left(6)).toBeLessThan(0.25);
		// 24 s in (40%): the pace weighs eight times the plan, within 8% of the truth.
		expect(Math.abs(etas[23]! - left(24)) / left(24)).toBeLessThan(0.08);
		table.resolve();
		await run;
	});

	it('a phase past its measured time says so: the estimate turns negative by the overrun, never a made-up number', async () => {
		const { ticker, tracker, step } = setup({ heartbeatMs: 1000 });
		const pdf = deferred<void>();
		const run = tracker.run('pdf', () => pdf.promise);
		await ticker.waitForCalls(1);
		for (let i = 0; i < 13; i++) await step();
		const last = ticker.calls.at(-1)!;
		expect(last.at).toBe(13_000);
		expect(last.etaSeconds).toBe(-3); // 13 s into a phase measured at 10 s
		pdf.resolve();
		await run;
	});
});
