import { afterEach, describe, expect, it } from 'vitest';
import { runCancellable } from '../../src/lib/toolkit/run-cancellable.ts';
import { isJobError, StageInterruptedError } from '../../src/lib/errors.ts';
import { startSlowServer, type SlowServer } from './support/slow-server.ts';
import { ManualClock } from './support/manual-clock.ts';

let server: SlowServer | null = null;
afterEach(async () => {
	await server?.close();
	server = null;
});

const never = new Promise<never>(() => {});

describe('runCancellable: the checkpoint that runs during the work', () => {
	it('when the predicate says stop, the in-flight HTTP request is aborted and the worker is free within the poll interval', async () => {
		server = await startSlowServer();
		const intervalMs = 250;
		let requestArrived = false;
		let stopSaidAt = 0;
		void server.arrived.then(() => (requestArrived = true));
		const interrupted = () => {
			if (requestArrived && !stopSaidAt) stopSaidAt = performance.now();
			return requestArrived;
		};
		let workError: unknown;
		let onWorkRejected!: () => void;
		const workRejected = new Promise<void>((r) => (onWorkRejected = r));
		let freedAt = 0;
		const outcome = runCancellable(
			(signal) =>
				fetch(`${server!.url}/slow`, { signal })
					.then((r) => r.text())
					.catch((e: unknown) => {
						workError = e;
						onWorkRejected();
						throw e;
					}),
			{ interrupted, intervalMs },
		).then(
			() => 'resolved',
			(e: unknown) => ((freedAt = performance.now()), e),
		);

		const arrivedAt = await server.arrived;
		const closedAt = await server.closed; // the server sees the socket close: the request really was aborted
		const e = await outcome;
		await workRejected;

		expect(e).toBeInstanceOf(StageInterruptedError);
		// Freed at the poll that said stop, without waiting for the call (which would never end): well
		// before another interval could pass, even with a busy machine delaying callbacks...
		expect(freedAt - stopSaidAt).toBeLessThan(intervalMs);
		// ...and that poll came within one interval (plus timer jitter on a busy machine) of the request going out.
		expect(stopSaidAt - arrivedAt).toBeLessThan(2 * intervalMs);
		expect(closedAt - arrivedAt).toBeLessThan(2 * intervalMs);
		// fetch rejects with the abort reason: the work learns why it was stopped.
		expect(workError).toBe(e);
	});
	it('resolves with the work’s value when nobody cancels, polling meanwhile', async () => {
		server = await startSlowServer();
		let polls = 0;
		const text = await runCancellable((signal) => fetch(`${server!.url}/fast`, { signal }).then((r) => r.text()), {
			interrupted: () => (polls++, false),
			intervalMs: 1000,
		});
		expect(text).toBe('fast answer');
		expect(polls).toBe(0); // finished before the first poll was due
	});

	it('rejects without waiting for work that ignores its signal', async () => {
		const clock = new ManualClock();
		const run = runCancellable(() => never, { interrupted: () => true, intervalMs: 50, timers: clock });
		clock.advance(50);
		await expect(run).rejects.toSatisfy((e: unknown) => isJobError(e, 'stage_interrupted'));
	});

	it('polls on the interval until the predicate says stop, then stops polling', async () => {
		const clock = new ManualClock();
		const answers = [false, false, true];
		let polls = 0;
		let seen: AbortSignal | undefined;
		const run = runCancellable(
			(signal) => {
				seen = signal;
				return never;
			},
			{ interrupted: async () => answers[polls++] ?? false, intervalMs: 100, timers: clock, stage: 'table' },
		);
		const outcome = run.catch((e: unknown) => e);
		await clock.fireNext();
		await clock.fireNext();
		expect(seen?.aborted).toBe(false);
		await clock.fireNext();
		const e = await outcome;
		expect(e).toBeInstanceOf(StageInterruptedError);
		expect((e as StageInterruptedError).stage).toBe('table');
		expect(polls).toBe(3);
		expect(clock.time).toBe(300);
		expect(seen?.aborted).toBe(true);
		expect(seen?.reason).toBe(e);
		expect(clock.pendingTimers).toBe(0);
	});

	it('the work’s own error propagates and polling stops', async () => {
		const clock = new ManualClock();
		const boom = new Error('unsupported format');
		await expect(
			runCancellable(async () => Promise.reject(boom), { interrupted: () => false, intervalMs: 10, timers: clock }),
		).rejects.toBe(boom);
		expect(clock.pendingTimers).toBe(0);
		const sync = () => {
			throw boom;
		};
		await expect(runCancellable(sync, { interrupted: () => false, intervalMs: 10, timers: clock })).rejects.toBe(boom);
		expect(clock.pendingTimers).toBe(0);
	});

	it('a predicate that throws aborts the work and rejects with that error, not silently', async () => {
		const clock = new ManualClock();
		const down = new Error('database unreachable');
		let seen: AbortSignal | undefined;
		const run = runCancellable((signal) => ((seen = signal), never), {
			interrupted: () => Promise.reject(down),
			intervalMs: 10,
			timers: clock,
		});
		const outcome = run.catch((e: unknown) => e);
		await clock.fireNext();
		expect(await outcome).toBe(down);
		expect(seen?.aborted).toBe(true);
	});

	it('an outside signal (worker shutdown) interrupts like a cancellation', async () => {
		const clock = new ManualClock();
		const shutdown = new AbortController();
		let seen: AbortSignal | undefined;
		const run = runCancellable((signal) => ((seen = signal), never), {
			interrupted: () => false,
			intervalMs: 10_000,
			signal: shutdown.signal,
			timers: clock,
		});
		shutdown.abort(new Error('SIGTERM'));
		const e = await run.catch((x: unknown) => x);
		expect(e).toBeInstanceOf(StageInterruptedError);
		expect((e as Error).cause).toEqual(new Error('SIGTERM'));
		expect(seen?.aborted).toBe(true);
		expect(clock.pendingTimers).toBe(0);
	});

	it('does not start the work when the outside signal already aborted', async () => {
		let started = false;
		const run = runCancellable(async () => void (started = true), {
			interrupted: () => false,
			intervalMs: 10,
			signal: AbortSignal.abort(),
		});
		await expect(run).rejects.toBeInstanceOf(StageInterruptedError);
		expect(started).toBe(false);
	});

	it('without intervalMs it polls once a second, the documented default', async () => {
		const clock = new ManualClock();
		const run = runCancellable(() => never, { interrupted: () => true, timers: clock }).catch((e: unknown) => e);
		await clock.fireNext();
		expect(await run).toBeInstanceOf(StageInterruptedError);
		expect(clock.time).toBe(1000);
	});

	it('accepts a promise already under way: abandoned, not awaited, when the predicate says stop', async () => {
		const clock = new ManualClock();
		const summary = new Promise<string>(() => {}); // a coroutine already under way: summarize("a long text")
		const run = runCancellable(summary, { interrupted: () => true, intervalMs: 20, timers: clock }).catch(
			(e: unknown) => e,
		);
		await clock.fireNext();
		expect(await run).toSatisfy((e: unknown) => isJobError(e, 'stage_interrupted'));
		expect(await runCancellable(Promise.resolve('a long text'), { interrupted: () => false })).toBe('a long text');
	});

	it('refuses a non-positive interval', () => {
		expect(() => runCancellable(async () => 1, { interrupted: () => false, intervalMs: 0 })).toThrow(RangeError);
	});
});
