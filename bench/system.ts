/**
 * What each benchmarked system implements. A method left undefined means the
 * system has no such concept; the report prints "n/a" for it.
 */

export interface LatencyProbe {
	/** Enqueues one job and resolves with the milliseconds until its handler started. */
	sample(): Promise<number>;
	/** Milliseconds of random pause between samples (spreads enqueues over a poll period). */
	jitterMs: number;
	stop(): Promise<void>;
}

export interface BenchSystem {
	name: string;
	version: string;
	/** One-off setup (schema, queue). */
	setup(): Promise<void>;
	/** Empties the job tables between rounds. */
	reset(): Promise<void>;
	/** Enqueues `n` no-op jobs one at a time, from one client; returns the elapsed ms. */
	enqueueOne(n: number): Promise<number>;
	/** Enqueues `n` no-op jobs in batches of `batch`, from one client; returns the elapsed ms. */
	enqueueBatch?(n: number, batch: number): Promise<number>;
	/** Puts `n` no-op jobs in the queue (untimed), then claims and completes all of them with 8 at once; returns ms. */
	process(n: number, concurrency: number): Promise<number>;
	/** A second way of processing, when the system has one worth comparing (ours: raw claimNext + succeed loops). */
	processAlt?(n: number, concurrency: number): Promise<number>;
	/**
	 * The per-job path, when the system has one: jobs claimed by id and completed one at a time, as an
	 * edge function invoked per job runs them (ours: `store.claim(id)` + `store.succeed()`, ids known from the fill).
	 */
	processById?(n: number, concurrency: number): Promise<number>;
	/** Starts an idle worker and returns a probe for enqueue -> start latency. */
	latency(): Promise<LatencyProbe>;
	/** Notes on how this system was driven (printed under the tables). */
	notes: string[];
	close(): Promise<void>;
}
