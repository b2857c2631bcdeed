/**
 * JobStore's producer calls: what an app calls to start work (enqueue one,
 * many, or a child; reschedule; cancel). The work is in producer.ts.
 */
import type { JobKind, JobKindInput, JobKindParams } from './job-kind.ts';
import type { Job, JobParams } from './job.ts';
import * as producer from './producer.ts';
import { traced } from '../internal/tracing.ts';
import type { CancelOptions, ChildInput, EnqueueInput, Enqueued, RescheduleOptions } from './store-options.ts';
import { JobStoreBase } from './job-store-base.ts';

/** The producer's calls of {@link JobStore}. */
export class ProducerCalls<P extends JobParams = JobParams, R extends Job<P> = Job<P>> extends JobStoreBase<P, R> {
	/**
	 * Writes a queued job row and returns it (payload omitted). Write the row,
	 * then send the task: the row is what the interface reads, and it has to
	 * exist before a worker can claim it. With a declared kind, params are
	 * checked against its schema first: bad params throw
	 * {@link InvalidJobInputError} naming the field, and nothing is written.
	 *
	 * @example
	 * const job = await store.enqueue(extract, { params: { filename: 'tender.pdf' }, payload: bytes });
	 * return { jobId: job.id };
	 */
	enqueue<K extends JobKind>(
		kind: K,
		input: EnqueueInput<JobKindInput<K>> & { idempotencyKey: string },
	): Promise<Enqueued<Job<JobKindParams<K>>>>;
	enqueue<K extends JobKind>(kind: K, input: EnqueueInput<JobKindInput<K>>): Promise<Job<JobKindParams<K>>>;
	enqueue(kind: string, input: EnqueueInput<P> & { idempotencyKey: string }): Promise<Enqueued<R>>;
	enqueue(kind: string, input?: EnqueueInput<P>): Promise<R>;
	async enqueue(kind: string | JobKind, input: EnqueueInput<unknown> = {}): Promise<Job | Enqueued<Job>> {
		return await traced(
			'enqueue',
			{ kind: typeof kind === 'string' ? kind : kind?.name, table: this.table },
			() => producer.enqueue(this.calls, kind, input),
			(span, job) => span.set({ id: job.id, attempt: job.attempts }),
		);
	}

	/**
	 * Writes many queued jobs of one kind in one statement, all or nothing, and
	 * returns their ids in the order of the items (read the rows with
	 * {@link get} or follow them with {@link watch} when you need them: a batch
	 * of 500 does not pay for 500 rows it may never read). Each item is checked
	 * as {@link enqueue} checks its input; a bad one throws
	 * {@link InvalidJobInputError} naming it (`items[3].delayMs`), and nothing is
	 * written.
	 *
	 * @example
	 * const ids = await store.enqueueMany(thumbnail, files.map((f) => ({ params: { path: f.path } })));
	 */
	enqueueMany<K extends JobKind>(kind: K, items: readonly EnqueueInput<JobKindInput<K>>[]): Promise<string[]>;
	enqueueMany(kind: string, items: readonly EnqueueInput<P>[]): Promise<string[]>;
	async enqueueMany(kind: string | JobKind, items: readonly EnqueueInput<unknown>[]): Promise<string[]> {
		return await traced(
			'enqueue',
			{ kind: typeof kind === 'string' ? kind : kind?.name, table: this.table },
			() => producer.enqueueMany(this.calls, kind, items),
			(span, ids) => span.set({ count: ids.length }),
		);
	}

	/**
	 * A running job enqueues a child (workers only; see `ctx.enqueueChild`): a
	 * queued job of its table and owner, cancelled with its parent, weighing
	 * `expectedSeconds` in the parent's progress. Refused for a parent that is
	 * not running ({@link JobAlreadyFinishedError}) or unknown ({@link JobNotFoundError}).
	 *
	 * @example
	 * const part = await store.enqueueChild(job.id, exportPart, { params: { page: 1 }, expectedSeconds: 30 });
	 */
	enqueueChild<K extends JobKind>(
		parentId: string,
		kind: K,
		input?: ChildInput<JobKindInput<K>>,
	): Promise<Job<JobKindParams<K>>>;
	enqueueChild(parentId: string, kind: string, input?: ChildInput<P>): Promise<R>;
	async enqueueChild(parentId: string, kind: string | JobKind, input: ChildInput<unknown> = {}): Promise<Job> {
		return await traced(
			'enqueue',
			{ kind: typeof kind === 'string' ? kind : kind?.name, table: this.table },
			() => producer.enqueueChild(this.calls, parentId, kind, input),
			(span, job) => span.set({ id: job.id, attempt: job.attempts }),
		);
	}

	/**
	 * Moves the start of a queued job (its owner or a worker): to `runAt`, or
	 * `delayMs` from now, or now. Refused once it started or finished
	 * ({@link JobAlreadyFinishedError}) or was cancelled ({@link JobCancelledError}).
	 *
	 * @example
	 * await store.reschedule(job.id, { delayMs: 15 * 60_000 }); // in a quarter of an hour
	 */
	async reschedule(id: string, options: RescheduleOptions = {}): Promise<R> {
		return (await producer.reschedule(this.calls, id, options)) as R;
	}

	/**
	 * Asks a job to stop: queued/running -> cancelled, answered at once; the
	 * worker learns it on its next tick. Null, not an error, when there is
	 * nothing to stop (unknown, or already ended): double clicks are normal.
	 *
	 * @example
	 * const stopped = (await store.cancel(id, { reason: 'Cancelled by the user.' })) !== null;
	 */
	async cancel(id: string, options: CancelOptions = {}): Promise<R | null> {
		return (await producer.cancel(this.calls, id, options)) as R | null;
	}
}
