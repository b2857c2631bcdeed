import { afterEach, describe, expect, it } from 'vitest';
import { ProgressTracker } from '../../src/lib/toolkit/progress-tracker.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { StageInterruptedError } from '../../src/lib/errors.ts';
import { FakeTicker } from './support/fake-ticker.ts';
import { deferred } from './support/deferred.ts';
import { startSlowServer, type SlowServer } from './support/slow-server.ts';

// Real timers and a real clock, short intervals. Nothing here sleeps: each
// step waits for the event it needs (a number of ticks, a request arriving).
const PLAN = PhasePlan.fromSeconds({ pdf: 0.2, table: 0.6 }); // pdf 0..25, table 25..100

let server: SlowServer | null = null;
afterEach(async () => {
	await server?.close();
	server = null;
});

describe('ProgressTracker with real timers', () => {
	it('ticks on its interval while the work runs, stays under the ceiling, and ends the phase at its span end', async () => {
		const ticker = new FakeTicker();
		const tracker = new ProgressTracker(ticker, 'job-1', { plan: PLAN, intervalMs: 10 });
		const work = deferred<string>();
		const run = tracker.run('table', () => work.promise, { size: 5000 });
		await ticker.waitForCalls(5); // the stage write, then interpolated ticks
		const during = [...ticker.progresses];
		work.resolve('done');
		expect(await run).toBe('done');

		expect(during[0]).toBe(25);
		expect(during.slice(1).every((p) => p > 25 && p <= 25 + 0.95 * 75)).toBe(true);
		expect(during.every((p, i) => i === 0 || p > during[i - 1]!)).toBe(true); // each write shows something new
		expect(ticker.calls.at(-1)).toMatchObject({ progress: 100, stage: 'table' });
		const { seconds, size } = tracker.timings().table!;
		expect(size).toBe(5000);
		expect(seconds).toBeGreaterThan(0);
	});

	it('a cancellation aborts the in-flight HTTP request and frees the worker within the interval', async () => {
		server = await startSlowServer();
		const intervalMs = 250;
		const ticker = new FakeTicker();
		const tracker = new ProgressTracker(ticker, 'job-1', { plan: PLAN, intervalMs, heartbeatMs: 0 });
		void server.arrived.then(() => (ticker.status = 'cancelled')); // the user cancels while the call is in flight
		const run = tracker
			.run('table', (signal) => fetch(`${server!.url}/slow`, { signal }).then((r) => r.text()))
			.catch((e: unknown) => ({ e, at: performance.now() }));
		const arrivedAt = await server.arrived;
		const closedAt = await server.closed;
		const { e, at } = (await run) as { e: unknown; at: number };
		expect(e).toBeInstanceOf(StageInterruptedError);
		expect(e).toMatchObject({ status: 'cancelled', stage: 'table' });
		// The next tick learns it: within one interval (plus timer jitter on a busy machine), not at the end of the call.
		expect(at - arrivedAt).toBeLessThan(2 * intervalMs);
		expect(closedAt - arrivedAt).toBeLessThan(2 * intervalMs);
		expect(tracker.timings()).toEqual({});
	});
});
