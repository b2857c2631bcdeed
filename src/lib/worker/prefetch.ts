/**
 * How many claimed jobs the Node runner keeps in hand beyond its free slots
 * (its local queue): as many as it starts in PREFETCH_HORIZON_MS at the rate
 * it has been starting them, at most PREFETCH_MAX. A job claimed ahead shows
 * as running while it waits in memory, so the wait is bounded by the horizon:
 * handlers that take longer than the horizon each get no prefetch at all, and
 * a burst of short jobs gets claimed hundreds at a time (one claim scan, one
 * round trip) instead of one per finished job.
 */

/** The longest a prefetched job should wait in memory before its handler starts, at the measured rate. */
export const PREFETCH_HORIZON_MS = 100;
/** At most this many claimed jobs wait in memory. */
export const PREFETCH_MAX = 500;
/** The largest single claim (job_claim_next's limit is at most list_max, 1000). */
export const CLAIM_MAX = 1000;

/**
 * Measures the start rate between claims and sizes the next prefetch from it.
 *
 * @internal
 * @example
 * ```ts
 * const sizer = new PrefetchSizer();
 * sizer.mark(); // at each claim
 * sizer.started++; // at each handler start
 * const ahead = sizer.target(); // jobs to hold beyond the free slots
 * ```
 */
export class PrefetchSizer {
	/** Handlers started since the last {@link mark}. */
	started = 0;
	#since = performance.now();
	/** Starts per millisecond, smoothed over the last windows. */
	#rate = 0;

	/** Closes the measuring window (called as a claim goes out). */
	mark(at = performance.now()): void {
		const elapsed = at - this.#since;
		// A window shorter than a few ms says little: keep counting into the next one.
		if (elapsed < 5) return;
		const sample = this.started / elapsed;
		this.#rate = this.#rate === 0 ? sample : (this.#rate + sample) / 2;
		this.started = 0;
		this.#since = at;
	}

	/** Jobs to hold in memory beyond the free slots. */
	target(): number {
		return Math.min(PREFETCH_MAX, Math.floor(this.#rate * PREFETCH_HORIZON_MS));
	}
}
