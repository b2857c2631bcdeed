/**
 * What every part of {@link JobStore} stands on: the adapter, the table and
 * the calls through it. The methods are added by audience on top of this
 * class (job-store-producer, -worker, -screen, -operator), each a thin
 * delegation to the module that holds the work.
 */
import type { JobAdapter } from './adapter.ts';
import { JobCalls } from './job-calls.ts';
import type { Job, JobParams } from './job.ts';
import type { JobStoreOptions } from './store-options.ts';
import { WorkerWrites } from './worker-writes.ts';

/** The fields and constructor of {@link JobStore}. */
export class JobStoreBase<P extends JobParams = JobParams, R extends Job<P> = Job<P>> {
	/** The transport every call goes through. */
	readonly adapter: JobAdapter;
	/** The job table this store reads and writes. */
	readonly table: string;
	/** Milliseconds of silence before {@link reclaimStale} readmits a running job; undefined when not configured. */
	readonly staleAfterMs: number | undefined;
	/** @internal The calls every method goes through. */
	protected readonly calls: JobCalls<R>;
	/** @internal The worker's writes (claim, tick, close). */
	protected readonly worker: WorkerWrites<R>;

	/**
	 * @example
	 * const store = new JobStore(supabaseAdapter(supabase));
	 * const worker = new JobStore(postgresAdapter(sql), { table: 'exports', staleAfterMs: 300_000 });
	 */
	constructor(adapter: JobAdapter, options: JobStoreOptions = {}) {
		if (options.staleAfterMs !== undefined && !(Number.isFinite(options.staleAfterMs) && options.staleAfterMs > 0)) {
			throw new RangeError(
				`staleAfterMs must be a positive number of milliseconds; got ${String(options.staleAfterMs)}`,
			);
		}
		this.adapter = adapter;
		this.table = options.table ?? 'jobs';
		this.staleAfterMs = options.staleAfterMs;
		this.calls = new JobCalls<R>(adapter, this.table, options.onUnreadableRow);
		this.worker = new WorkerWrites<R>(this.calls);
	}
}
