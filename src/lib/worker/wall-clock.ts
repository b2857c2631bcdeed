/**
 * The edge runtime ends an isolate at its wall-clock limit mid-await, with no
 * cleanup. A worker that knows how much time is left does not start a job it
 * cannot finish: it leaves it queued for a fresh isolate.
 */

/**
 * Options of {@link WallClockBudget}.
 */
export interface WallClockOptions {
	/**
	 * The isolate's wall-clock limit (Supabase: 150 s on Free, 400 s on paid
	 * plans), background work included. Infinity turns the budget off.
	 * @default 150_000
	 */
	wallClockMs?: number;
	/** Kept free at the end: closing the row, releasing, the beforeunload warning. @default 15_000 */
	marginMs?: number;
	/**
	 * When the isolate started, on the `performance.now()` clock. `performance.now()`
	 * counts from the isolate's (or process's) start, so the default is 0.
	 * @default 0
	 */
	startedAtMs?: number;
	/** @internal Clock, injected in tests. */
	now?: () => number;
}

/**
 * How much of the isolate's wall clock is left, and whether a job fits in it.
 *
 * @example
 * ```ts
 * const budget = new WallClockBudget({ wallClockMs: 150_000 });
 * if (!budget.fits(estimateSeconds(plan, size))) return; // leave it queued
 * ```
 */
export class WallClockBudget {
	readonly #deadline: number;
	readonly #now: () => number;
	readonly #capacityMs: number;

	constructor(options: WallClockOptions = {}) {
		const wallClockMs = options.wallClockMs ?? 150_000;
		const marginMs = options.marginMs ?? 15_000;
		if (!(wallClockMs > 0)) throw new RangeError(`wallClockMs must be positive; got ${String(wallClockMs)}`);
		if (!(Number.isFinite(marginMs) && marginMs >= 0))
			throw new RangeError(`marginMs must be >= 0; got ${String(marginMs)}`);
		this.#now = options.now ?? (() => performance.now());
		this.#deadline = (options.startedAtMs ?? 0) + wallClockMs - marginMs;
		this.#capacityMs = wallClockMs - marginMs;
	}

	/**
	 * Whether work expected to take `seconds` could finish in a fresh isolate
	 * at all. A job that cannot is never given back for another isolate to try:
	 * it would stop every drain after it.
	 *
	 * @example
	 * ```ts
	 * if (!budget.couldEverFit(estimate)) await store.fail(job.id, tooLong, { errorCode: 'too_long_for_worker' });
	 * ```
	 */
	couldEverFit(seconds: number): boolean {
		return seconds * 1000 <= this.#capacityMs;
	}

	/**
	 * Milliseconds left before the margin (Infinity without a limit; may be negative).
	 *
	 * @example
	 * ```ts
	 * console.log(`${Math.round(budget.remainingMs() / 1000)} s left`);
	 * ```
	 */
	remainingMs(): number {
		return this.#deadline - this.#now();
	}

	/**
	 * Whether work expected to take `seconds` can finish before the margin.
	 *
	 * @example
	 * ```ts
	 * if (budget.fits(42)) await run(job);
	 * ```
	 */
	fits(seconds: number): boolean {
		return seconds * 1000 <= this.remainingMs();
	}
}
