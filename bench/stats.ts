/**
 * Small numeric helpers for the benchmarks: medians, percentiles, timers.
 */

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
	return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100) of a non-empty list. */
export function percentile(values: readonly number[], p: number): number {
	if (values.length === 0) return Number.NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
	return sorted[rank]!;
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export const now = (): number => performance.now();

let onClockStart: (() => Promise<void> | void) | null = null;

/**
 * Who is told when a measurement's clock starts (bench/production.ts reads the
 * server's CPU and WAL position there, so an untimed fill is not counted); null: nobody.
 */
export function whenClockStarts(listener: (() => Promise<void> | void) | null): void {
	onClockStart = listener;
}

/** {@link now}, at the start of a timed part, once the listener of {@link whenClockStarts} has read what it reads. */
export async function clockStart(): Promise<number> {
	await onClockStart?.();
	return now();
}

/** Runs `fn` `times` times and returns each run's result (runs are sequential, never overlapping). */
export async function repeat<T>(times: number, fn: (round: number) => Promise<T>): Promise<T[]> {
	const out: T[] = [];
	for (let round = 0; round < times; round++) out.push(await fn(round));
	return out;
}

/** Resolves after `ms` milliseconds (pacing between latency samples, not synchronisation). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise with its resolver, to wait on an event. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
	let resolve!: (value: T) => void;
	const promise = new Promise<T>((r) => (resolve = r));
	return { promise, resolve };
}
