/**
 * An in-memory Ticker that records every call. Not a database mock: Ticker is
 * the interface the tracker is written against; JobStore implements it.
 */
import type { JobStatusValue, TickUpdate, Ticker } from '../../../src/lib/toolkit/ticker.ts';

export interface RecordedTick extends TickUpdate {
	id: string;
	at: number;
}

export class FakeTicker implements Ticker {
	readonly calls: RecordedTick[] = [];
	/** The status the next ticks answer; set it to 'cancelled' to cancel the job. */
	status: JobStatusValue = 'running';
	/** When set, ticks wait for this promise before answering (a slow round trip). */
	hold: Promise<void> | null = null;
	/** When set, the next tick rejects with it (a network error). */
	failWith: Error | null = null;
	#waiters: Array<{ n: number; resolve: () => void }> = [];

	constructor(private readonly clock: () => number = () => performance.now()) {}

	async tick(id: string, update: TickUpdate): Promise<JobStatusValue> {
		this.calls.push({ id, at: this.clock(), ...update });
		this.#waiters = this.#waiters.filter((w) => (this.calls.length >= w.n ? (w.resolve(), false) : true));
		const answer = this.status;
		const failure = this.failWith;
		if (this.hold) await this.hold;
		if (failure) throw failure;
		return answer;
	}

	/** Resolves once `n` ticks in total have been made. */
	waitForCalls(n: number): Promise<void> {
		if (this.calls.length >= n) return Promise.resolve();
		return new Promise((resolve) => this.#waiters.push({ n, resolve }));
	}

	get progresses(): number[] {
		return this.calls.map((c) => c.progress);
	}
}
