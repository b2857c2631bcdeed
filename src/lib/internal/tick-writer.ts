/**
 * Writes ticks for one job: one at a time (a slow round trip delays the next
 * tick rather than overlapping it), and only when something visible changed
 * or the heartbeat is due; otherwise a tick only reads the status.
 */
import { quantize } from './progress-math.ts';
import type { Clock } from './timers.ts';
import type { JobStatusValue, TickUpdate, Ticker } from '../toolkit/ticker.ts';

/**
 * Options of {@link TickWriter}.
 */
export interface TickWriterOptions {
	attempt?: number;
	heartbeatMs: number;
	now: Clock;
	/**
	 * The shortest gap (ms) between two writes of a visible change, asked at
	 * each tick (the runner's Realtime budget, tick-budget.ts): a change that
	 * comes sooner is not written (the tick reads the status instead, so a
	 * cancel is still learned), and the next tick writes the newest state. The
	 * gap counts from the claim too, whose message showed the job already.
	 */
	minGapMs?: () => number;
	/** Called inside the queue with what the tick returned, before the next tick may start. */
	onStatus(status: JobStatusValue, update: TickUpdate): void;
}

/**
 * Serialised, coalesced ticks for one job.
 *
 * @example
 * const writer = new TickWriter(store, id, options);
 * await writer.write(() => ({ progress: 42.17, stage: 'table' })); // writes 42.1
 * await writer.write(() => ({ progress: 42.12, stage: 'table' })); // same pixel: no round trip
 */
export class TickWriter {
	readonly #ticker: Ticker;
	readonly #jobId: string;
	readonly #options: TickWriterOptions;
	#queue: Promise<void> = Promise.resolve();
	#written: { progress: number; stage: string } | null = null;
	#lastWriteAt = -Infinity;

	constructor(ticker: Ticker, jobId: string, options: TickWriterOptions) {
		this.#ticker = ticker;
		this.#jobId = jobId;
		this.#options = options;
		if (options.minGapMs) this.#lastWriteAt = options.now();
	}

	/** Settles when every tick queued so far has. */
	get idle(): Promise<void> {
		return this.#queue;
	}

	/** Queues a tick; `read` is called when its turn comes (null: nothing to write). The estimate rides along; it never causes a write. */
	write(read: () => { progress: number; stage: string; etaSeconds?: number } | null): Promise<void> {
		const next = this.#queue.then(() => this.#writeNow(read()));
		this.#queue = next.catch(() => {});
		return next;
	}

	async #writeNow(state: { progress: number; stage: string; etaSeconds?: number } | null): Promise<void> {
		if (!state) return;
		const { stage } = state;
		const progress = quantize(state.progress);
		const changed = progress !== this.#written?.progress || stage !== this.#written?.stage;
		const { now, heartbeatMs, attempt, onStatus, minGapMs } = this.#options;
		const update: TickUpdate = attempt === undefined ? { progress, stage } : { progress, stage, attempt };
		if (state.etaSeconds !== undefined) update.etaSeconds = Math.round(state.etaSeconds * 10) / 10;
		const sinceWrite = now() - this.#lastWriteAt;
		// Held back by the budget: the heartbeat is the run's own (HandlerRun), with no visible change.
		const paced = changed && minGapMs !== undefined && sinceWrite < minGapMs();
		if (paced || (!changed && sinceWrite < heartbeatMs)) {
			// Nothing to write, but the interval is still the cancellation check: ask without writing.
			if (!this.#ticker.readStatus) return;
			onStatus(await this.#ticker.readStatus(this.#jobId, attempt === undefined ? {} : { attempt }), update);
			return;
		}
		const status = await this.#ticker.tick(this.#jobId, update);
		this.#written = { progress, stage };
		this.#lastWriteAt = now();
		onStatus(status, update);
	}
}
