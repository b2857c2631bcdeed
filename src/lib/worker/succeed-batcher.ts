/**
 * Group commit for closing jobs: succeed calls that arrive while a close is
 * in flight are written together by the next `job_succeed_many` statement, so
 * a runner draining a backlog pays one round trip and one commit for many
 * jobs, and a lone job waits for nothing (it is written at once). While the
 * runner is claiming (`hold`), the closes wait for its next claim, which
 * carries them (`take`, then `settle`).
 */
import type { Job } from '../store/job.ts';
import type { JobStore, SucceedOptions } from '../store/job-store.ts';

/** @internal */
export interface Pending {
	item: SucceedOptions & { id: string };
	resolve: (job?: Job) => void;
	reject: (error: unknown) => void;
}

/**
 * Coalesces {@link JobStore.succeed} calls into one `job_succeed_many`
 * statement ({@link JobStore.succeedManyIds}: the closed rows are not parsed,
 * as the runner reads only whether the close landed). Each caller still gets
 * its own outcome: a job the batch could not close (cancelled, reclaimed,
 * finished meanwhile) is retried alone with `succeed`, which throws the
 * precise error (and resolves with the closed job).
 *
 * @internal
 * @example
 * ```ts
 * const closer = new SucceedBatcher(store);
 * await closer.succeed(job.id, { resultId, attempt: job.attempts });
 * ```
 */
export class SucceedBatcher {
	readonly #store: JobStore;
	readonly #maxBatch: number;
	#pending: Pending[] = [];
	#flushing = false;
	#held = false;

	constructor(store: JobStore, maxBatch = 500) {
		this.#store = store;
		this.#maxBatch = maxBatch;
	}

	/** Resolves once the job is closed: with the row when it was written alone, else with nothing. */
	succeed(id: string, options: SucceedOptions = {}): Promise<Job | undefined> {
		return new Promise<Job | undefined>((resolve, reject) => {
			this.#pending.push({ item: { ...options, id }, resolve, reject });
			if (!this.#held) this.#schedule();
		});
	}

	/** A claim is in flight or about to be made: closes wait for it (see {@link take}). */
	hold(): void {
		this.#held = true;
	}

	/** No claim follows: what waits is written now. */
	release(): void {
		this.#held = false;
		if (this.#pending.length > 0) this.#schedule();
	}

	/** The closes waiting, handed to a claim that writes them (at most one batch). */
	take(): Pending[] {
		return this.#pending.splice(0, this.#maxBatch);
	}

	/**
	 * The outcome of closes a claim carried: `closed` holds the ids that
	 * landed; the others (or all, when the claim failed: `null`) are retried
	 * alone, which throws the precise error.
	 */
	settle(batch: readonly Pending[], closed: ReadonlySet<string> | null): void {
		for (const p of batch) {
			if (closed?.has(p.item.id)) p.resolve();
			else this.#store.succeed(p.item.id, p.item).then(p.resolve, p.reject);
		}
	}

	#schedule(): void {
		if (this.#flushing) return;
		this.#flushing = true;
		queueMicrotask(() => void this.#flush());
	}

	async #flush(): Promise<void> {
		while (this.#pending.length > 0) {
			const batch = this.#pending.splice(0, this.#maxBatch);
			const alone = (p: Pending) => this.#store.succeed(p.item.id, p.item).then(p.resolve, p.reject);
			if (batch.length === 1) {
				await alone(batch[0]!);
				continue;
			}
			let closed: Set<string>;
			try {
				closed = await this.#store.succeedManyIds(batch.map((p) => p.item));
			} catch {
				// The statement failed as a whole (a lost connection, say): each job tries on its own.
				await Promise.all(batch.map(alone));
				continue;
			}
			await Promise.all(batch.map((p) => (closed.has(p.item.id) ? p.resolve() : alone(p))));
		}
		this.#flushing = false;
	}
}
