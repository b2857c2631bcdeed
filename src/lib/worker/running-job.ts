/**
 * A job in a worker's hands: what the runner tracks while the handler runs,
 * so the worker can give it back (shutdown, wall clock) exactly once.
 */
import { StageInterruptedError, isJobError } from '../errors.ts';
import { LazyAbort } from '../internal/lazy-abort.ts';
import type { Job } from '../store/job.ts';
import type { JobStore } from '../store/job-store.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';

/**
 * A job being worked on: the worker can give it back (shutdown, wall clock)
 * with `giveBack()`, which stops the handler and releases the row once.
 *
 * @internal
 * @example
 * ```ts
 * for (const running of runner.running) await running.giveBack('shutdown');
 * ```
 */
export class RunningJob {
	readonly job: Job;
	readonly store: JobStore;
	readonly #shutdown = new LazyAbort();
	readonly #logger: WorkerLogger;
	#release: Promise<boolean> | null = null;
	#closing = false;
	/** The runner has been told this run's handler is done (its slot is free). */
	worked = false;

	constructor(job: Job, store: JobStore, logger: WorkerLogger) {
		this.job = job;
		this.store = store;
		this.#logger = logger;
	}

	/** Aborts when the worker gives this job back. */
	get shutdownSignal(): AbortSignal {
		return this.#shutdown.signal;
	}

	/** The same abort, without making a signal: the runner listens here. */
	get shutdown(): LazyAbort {
		return this.#shutdown;
	}

	get givenBack(): boolean {
		return this.#release !== null;
	}

	/** From here on the run is writing its close; giving back would race it for nothing. */
	markClosing(): void {
		this.#closing = true;
	}

	/**
	 * Stops the handler and puts the row back to queued without spending the
	 * attempt. Once; resolves true when the release landed.
	 */
	giveBack(reason: string): Promise<boolean> {
		if (this.#release) return this.#release;
		if (this.#closing) return Promise.resolve(false);
		this.#shutdown.abort(new StageInterruptedError(`the worker gave the job back: ${reason}`));
		const { id, attempts } = this.job;
		this.#release = this.store.release(id, { attempt: attempts }).then(
			() => {
				this.#logger.info(`${PREFIX} job ${id} released (${reason}); it is queued again`);
				return true;
			},
			(e: unknown) => {
				if (!(
					isJobError(e, 'job_already_finished') ||
					isJobError(e, 'job_not_running') ||
					isJobError(e, 'job_not_found')
				)) {
					this.#logger.error(`${PREFIX} job ${id}: could not release it (${reason}); reclaim will readmit it`, e);
				}
				return false;
			},
		);
		return this.#release;
	}
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A short, safe rendering of an unexpected handler result for the log. */
export function describe(value: unknown): string {
	const text = typeof value === 'string' ? JSON.stringify(value) : `a ${typeof value} (${String(value)})`;
	return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

// Made once, not per job: a run's promises carry no closures of their own.
const fulfilled = <T>(value: T): Settled<T> => ({ ok: true, value });
const rejected = (error: unknown): Settled<never> => ({ ok: false, error });

export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
	return promise.then(fulfilled, rejected);
}

export function stoppedPromise(stop: LazyAbort): Promise<Settled<never>> {
	return stop.whenAborted().then(rejected);
}
