/**
 * The clock and timers the toolkit schedules with. Injectable so tests can
 * drive time by hand; the defaults are the platform's (Node, Deno, browsers).
 *
 * @example
 * const timers: Timers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) };
 */
export interface Timers {
	setTimeout(fn: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

/**
 * Milliseconds from an arbitrary origin; only differences matter.
 *
 * @example
 * const clock: Clock = () => performance.now();
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
