/**
 * The checkpoint that runs during the work rather than between steps.
 */
import { StageInterruptedError } from '../errors.ts';
import { realTimers, type Timers } from '../internal/timers.ts';

const DEFAULT_INTERVAL_MS = 1000;

/**
 * Options of {@link runCancellable}.
 */
export interface RunCancellableOptions {
	/**
	 * Asked every `intervalMs`: true means stop. The store's
	 * `cancellationWatch(id)` is one. If it throws, the work is aborted and the
	 * call rejects with that error: a worker that cannot reach the database
	 * cannot write the result either, and a silent retry loop would hide it.
	 */
	interrupted: () => Promise<boolean> | boolean;
	/**
	 * How often to ask, in milliseconds. The worker is free at most this long
	 * after the answer turns true. One second, like the ProgressTracker's tick:
	 * a short read per second per job, and a cancel felt within a second.
	 * @default 1000
	 */
	intervalMs?: number;
	/** An outside reason to stop (worker shutdown); aborting it interrupts like a cancellation. */
	signal?: AbortSignal;
	/** Label carried by the StageInterruptedError. */
	stage?: string;
	/** @internal Injected in tests. */
	timers?: Timers;
}

/**
 * Races `work` against `interrupted`, polled every `intervalMs` (default
 * 1000). When it says stop, the AbortSignal handed to `work` aborts (an
 * in-flight `fetch` is torn down) and the call rejects with
 * {@link StageInterruptedError} at once, without waiting for the work to
 * settle. `work` may also be a promise already under way
 * (`runCancellable(summarize(text), ...)`); it then cannot be stopped, only abandoned.
 *
 * Only genuinely cancellable awaits stop. CPU-bound code on the event loop
 * never yields to the poll, and a worker_thread runs on after the abort,
 * still holding a core: hand such work a {@link StopFlag} (from the same
 * signal) and check it between steps and again before writing the result.
 *
 * @example
 * try {
 *   const summary = await runCancellable(
 *     (signal) => fetch(llmUrl, { method: 'POST', body, signal }).then((r) => r.json()),
 *     { interrupted: store.cancellationWatch(jobId), intervalMs: 2000 },
 *   );
 *   await store.succeed(jobId);
 * } catch (e) {
 *   if (isJobError(e, 'stage_interrupted')) return; // the user cancelled: not a failure
 *   throw e;
 * }
 */
export function runCancellable<T>(
	work: ((signal: AbortSignal) => Promise<T> | T) | Promise<T>,
	options: RunCancellableOptions,
): Promise<T> {
	const { interrupted, intervalMs = DEFAULT_INTERVAL_MS, stage = null } = options;
	const timers = options.timers ?? realTimers;
	if (!(intervalMs > 0)) throw new RangeError(`intervalMs must be a positive number, got ${intervalMs}`);

	return new Promise<T>((resolve, reject) => {
		const controller = new AbortController();
		const outside = options.signal;
		let settled = false;
		let timer: unknown;

		const finish = (outcome: () => void) => {
			if (settled) return;
			settled = true;
			timers.clearTimeout(timer);
			outside?.removeEventListener('abort', onOutsideAbort);
			outcome();
		};
		const stop = (reason: unknown) => {
			finish(() => reject(reason));
			if (!controller.signal.aborted) controller.abort(reason);
		};
		const interruption = (cause?: unknown) =>
			new StageInterruptedError(stage ? `stage "${stage}" interrupted` : 'work interrupted', { stage, cause });

		function onOutsideAbort() {
			stop(interruption(outside?.reason));
		}
		if (outside?.aborted) return onOutsideAbort();
		outside?.addEventListener('abort', onOutsideAbort, { once: true });

		const poll = async () => {
			try {
				const stopNow = await interrupted();
				if (settled) return;
				if (stopNow) return stop(interruption());
				timer = timers.setTimeout(poll, intervalMs);
			} catch (e) {
				if (!settled) stop(e);
			}
		};
		timer = timers.setTimeout(poll, intervalMs);

		let running: Promise<T>;
		try {
			// A promise (`runCancellable(summarize(...))`) is already running: it cannot be stopped, only abandoned.
			running = typeof work === 'function' ? Promise.resolve(work(controller.signal)) : Promise.resolve(work);
		} catch (e) {
			return finish(() => reject(e));
		}
		running.then(
			(value) => finish(() => resolve(value)),
			(e) => finish(() => reject(e)),
		);
	});
}
