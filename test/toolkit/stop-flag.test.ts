import { describe, expect, it } from 'vitest';
import { StopFlag } from '../../src/lib/toolkit/stop-flag.ts';
import { runCancellable } from '../../src/lib/toolkit/run-cancellable.ts';
import { ProgressTracker } from '../../src/lib/toolkit/progress-tracker.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { StageInterruptedError } from '../../src/lib/errors.ts';
import { startStepsThread, type StepsThread } from './support/steps-thread.ts';
import { FakeTicker } from './support/fake-ticker.ts';

describe('work handed to a worker_thread is not cancellable by abort', () => {
	it('the run is freed, but a thread that ignores the decision runs on to completion', async () => {
		let thread!: StepsThread;
		let parked = false;
		const run = runCancellable(
			() => {
				thread = startStepsThread({ steps: 5, parkAt: 2, stop: null });
				void thread.parked.then(() => (parked = true));
				return thread.final;
			},
			{ interrupted: () => parked, intervalMs: 20 },
		);
		await expect(run).rejects.toBeInstanceOf(StageInterruptedError);
		thread.openGate(); // the thread was mid-work when the run gave up; let it go on
		expect(await thread.final).toEqual({ type: 'result', done: 5 }); // it did all the work nobody wants
		expect(await thread.exited).toBe(0);
	});

	it('with a StopFlag from the same signal, the thread stops at its next check between steps', async () => {
		let thread!: StepsThread;
		let parked = false;
		const run = runCancellable(
			(signal) => {
				thread = startStepsThread({ steps: 5, parkAt: 2, stop: StopFlag.fromSignal(signal).buffer });
				void thread.parked.then(() => (parked = true));
				return thread.final;
			},
			{ interrupted: () => parked, intervalMs: 20 },
		);
		await expect(run).rejects.toBeInstanceOf(StageInterruptedError);
		thread.openGate();
		expect(await thread.final).toEqual({ type: 'stopped', done: 2, where: 'between steps' });
		expect(await thread.exited).toBe(0);
	});

	it('checks again before writing the result: a thread past its last step still does not write', async () => {
		let thread!: StepsThread;
		let parked = false;
		const run = runCancellable(
			(signal) => {
				thread = startStepsThread({ steps: 3, parkAt: 3, stop: StopFlag.fromSignal(signal).buffer });
				void thread.parked.then(() => (parked = true));
				return thread.final;
			},
			{ interrupted: () => parked, intervalMs: 20 },
		);
		await expect(run).rejects.toBeInstanceOf(StageInterruptedError);
		thread.openGate();
		expect(await thread.final).toEqual({ type: 'stopped', done: 3, where: 'before writing' });
		expect(await thread.exited).toBe(0);
	});

	it('the same flag on both sides, tracker.run(..., { stop }) and the thread, and the decision reaches a thread already working', async () => {
		const ticker = new FakeTicker();
		const plan = PhasePlan.fromSeconds({ reading: 60 });
		const tracker = new ProgressTracker(ticker, 'job-1', { plan, intervalMs: 20, heartbeatMs: 0 });
		const flag = StopFlag.create();
		const thread = startStepsThread({ steps: 5, parkAt: 2, stop: flag.buffer });
		void thread.parked.then(() => (ticker.status = 'cancelled')); // the user clicks cancel while the thread works
		const run = tracker.run('reading', () => thread.final, { size: 1000, stop: flag });
		const e = await run.catch((x: unknown) => x);
		expect(e).toBeInstanceOf(StageInterruptedError);
		expect((e as StageInterruptedError).status).toBe('cancelled');
		expect(flag.stopped).toBe(true);
		thread.openGate();
		expect(await thread.final).toEqual({ type: 'stopped', done: 2, where: 'between steps' });
		expect(await thread.exited).toBe(0);
	});
});

describe('StopFlag', () => {
	it('starts clear, and stop() is seen through every view of the same buffer', () => {
		const flag = StopFlag.create();
		const other = StopFlag.attach(flag.buffer);
		expect(other.stopped).toBe(false);
		flag.stop();
		expect(other.stopped).toBe(true);
	});

	it('fromSignal is set when the signal aborts, and at once when it already has', () => {
		const controller = new AbortController();
		const flag = StopFlag.fromSignal(controller.signal);
		expect(flag.stopped).toBe(false);
		controller.abort();
		expect(flag.stopped).toBe(true);
		expect(StopFlag.fromSignal(AbortSignal.abort()).stopped).toBe(true);
	});

	it('throwIfStopped is the one-line checkpoint, naming the stage', () => {
		const flag = StopFlag.create();
		expect(() => flag.throwIfStopped('ocr')).not.toThrow();
		flag.stop();
		expect(() => flag.throwIfStopped('ocr')).toThrow(
			expect.objectContaining({ code: 'stage_interrupted', stage: 'ocr' }),
		);
	});

	it('waitUntilStopped returns false on timeout and true once stopped', () => {
		const flag = StopFlag.create();
		expect(flag.waitUntilStopped(0)).toBe(false);
		flag.stop();
		expect(flag.waitUntilStopped(0)).toBe(true);
	});

	it('attach refuses anything but a StopFlag buffer', () => {
		expect(() => StopFlag.attach(new ArrayBuffer(4) as unknown as SharedArrayBuffer)).toThrow(TypeError);
		expect(() => StopFlag.attach(new SharedArrayBuffer(2))).toThrow(TypeError);
	});
});
