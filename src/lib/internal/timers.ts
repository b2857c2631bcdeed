/**
 * The clock and timers the toolkit schedules with. Injectable so tests can
 * drive time by hand; the defaults are the platform's (Node, Deno, browsers).
 */
export interface Timers {
	setTimeout(fn: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

/**
 * Milliseconds from an arbitrary origin; only differences matter.
 */
export type Clock = () => number;

/**
 * The platform's timers.
 *
 * @example
 * runCancellable(work, { interrupted, intervalMs: 1000, timers: realTimers });
 */
export const realTimers: Timers = {
	setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
	clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

/**
 * A monotonic clock (wall-clock jumps do not distort durations).
 *
 * @example
 * const started = realClock();
 */
export const realClock: Clock = () => performance.now();

/** The longest delay setTimeout honours; anything above fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Refuses a timing option that would not behave as written: NaN or Infinity
 * (no timer at all), zero or negative, or over {@link MAX_TIMER_MS} (clamped
 * to 1 ms by the platform). Names the option in the error.
 *
 * @example
 * checkTimerMs('timeoutMs', options.timeoutMs); // RangeError: timeoutMs must be ...
 */
export function checkTimerMs(name: string, value: number | undefined): void {
	if (value === undefined) return;
	if (!(typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_TIMER_MS)) {
		throw new RangeError(
			`${name} must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS}; got ${String(value)}`,
		);
	}
}

/**
 * Settles like `work`, unless `deadline` (epoch ms; Infinity: none) comes
 * first: then it rejects with `timeout()` at once, without waiting for the
 * work, so a read in flight cannot hold a timeout back.
 *
 * @example
 * const row = await beforeDeadline(store.get(id), Date.now() + 100, () => new TimeoutError('too slow'));
 */
export function beforeDeadline<T>(work: Promise<T>, deadline: number, timeout: () => Error): Promise<T> {
	if (deadline === Infinity) return work;
	return new Promise<T>((resolve, reject) => {
		const expire = () => {
			work.catch(() => {}); // abandoned
			reject(timeout());
		};
		const remaining = deadline - Date.now();
		if (remaining <= 0) return expire();
		const timer = globalThis.setTimeout(expire, Math.min(remaining, MAX_TIMER_MS));
		work.then(
			(value) => {
				globalThis.clearTimeout(timer);
				resolve(value);
			},
			(e: unknown) => {
				globalThis.clearTimeout(timer);
				reject(e);
			},
		);
	});
}
