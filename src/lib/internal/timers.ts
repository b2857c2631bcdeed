/**
 * The clock and timers the toolkit schedules with. Injectable so tests can
 * drive time by hand; the defaults are the platform's (Node, Deno, browsers).
 */
export interface Timers {
	setTimeout(fn: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

export type Clock = () => number;

export const realTimers: Timers = {
	setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
	clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

export const realClock: Clock = () => performance.now();
