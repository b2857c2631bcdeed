/**
 * JobStore's worker calls: claim, report (tick, streams, logs), close, park
 * and ask. The work is in worker-writes.ts and questions.ts.
 */
import type { JobStatusValue } from '../state.ts';
import { parseJobRow, type Job, type JobParams } from './job.ts';
import * as questions from './questions.ts';
import type { AskInput, AskResult } from './questions.ts';
import { readTimeline, type JobTimelineEntry, type LogLine } from './job-timeline.ts';
import type {
	AttemptOptions,
	ClaimNextOptions,
	ClaimOptions,
	FailOptions,
	RetryOptions,
	SucceedOptions,
	TickInput,
} from './store-options.ts';
import { ProducerCalls } from './job-store-producer.ts';

/** The worker's calls of {@link JobStore}. */
export class WorkerCalls<P extends JobParams = JobParams, R extends Job<P> = Job<P>> extends ProducerCalls<P, R> {
	/**
	 * queued -> running for one job, returning the row with its payload. Null
	 * when the job is not yours: another worker claimed it, it does not exist,
	 * or it is not available yet. Two workers racing for one id cannot both win.
	 *
	 * @example
	 * const job = await store.claim(jobId);
	 * if (job === null) return;
	 */
	claim(id: string, options: ClaimOptions = {}): Promise<R | null> {
		return this.worker.claim(id, options);
	}

	/**
	 * Claims up to `limit` queued jobs of the given kinds, oldest first, skipping
	 * rows other workers hold. `[]` when there is nothing to do.
	 *
	 * @example
	 * for (const job of await store.claimNext({ kinds: ['extract'], limit: 4 })) void run(job);
	 */
	claimNext(options: ClaimNextOptions = {}): Promise<R[]> {
		return this.worker.claimNext(options);
	}

	/**
	 * One round trip per progress report: writes progress/stage/heartbeat on a
	 * running job and returns its status. The tick that writes progress is the
	 * one that asks whether the user cancelled: anything but `'running'` coming
	 * back means stop. This is the `Ticker` a ProgressTracker reports to.
	 *
	 * @example
	 * if ((await store.tick(job.id, { progress: 40, stage: 'table', attempt: job.attempts })) !== 'running') return;
	 */
	tick(id: string, update: TickInput = {}): Promise<JobStatusValue> {
		return this.worker.tick(id, update);
	}

	/**
	 * Appends text to a named stream of a running job (workers; handlers use
	 * `ctx.stream(name)`, which coalesces writes) and sends it to the job's
	 * watchers. Refused like a tick once the job was cancelled
	 * ({@link JobCancelledError}) or another attempt owns it; past the job's
	 * bound, {@link InvalidJobInputError} naming `streams.<name>`.
	 *
	 * @example
	 * await store.appendStream(job.id, 'summary', 'The tender asks for ', { attempt: job.attempts });
	 */
	appendStream(id: string, stream: string, text: string, options: AttemptOptions = {}): Promise<JobStatusValue> {
		return this.worker.appendStream(id, stream, text, options);
	}

	/**
	 * The job's status alone, without writing anything: what a progress tick
	 * asks when the bar did not move, so a cancel is learned on every interval
	 * without an UPDATE per interval. With `attempt`, a running job that a
	 * reclaim handed to another attempt throws {@link JobAlreadyFinishedError},
	 * as {@link tick} would.
	 *
	 * @example
	 * if ((await store.readStatus(job.id, { attempt: job.attempts })) !== 'running') return;
	 */
	readStatus(id: string, options: AttemptOptions = {}): Promise<JobStatusValue> {
		return this.worker.readStatus(id, options);
	}

	/**
	 * Writes a worker's log lines for the attempt this store claimed (or
	 * `attempt`): each is checked first ({@link InvalidJobInputError} naming the
	 * field), at most 500 are kept per job (past that, one marker line counts
	 * the dropped ones). A handler logs through `ctx.log`, which batches.
	 *
	 * @example
	 * await store.log(job.id, [{ level: 'info', message: 'Page 3 read', userFacing: true }]);
	 */
	log(id: string, lines: readonly LogLine[], options: AttemptOptions & { dropped?: number } = {}): Promise<number> {
		return this.worker.log(id, lines, options);
	}

	/**
	 * A job's timeline, oldest first: its transitions (queued, claimed with the
	 * attempt, retried, reclaimed, released, waiting, resumed, done, failed,
	 * cancelled, with who and why where known) and its worker's log lines. An
	 * admin (or a worker) reads all of it; the owner only the lines marked
	 * user-facing; anyone else gets an empty list.
	 *
	 * @example
	 * for (const e of await store.timeline(job.id)) console.log(e.at, e.event, e.message);
	 */
	timeline(id: string): Promise<JobTimelineEntry[]> {
		return readTimeline(this.calls, id);
	}

	/**
	 * A predicate for `runCancellable`: resolves true once the job is no longer
	 * running (cancelled, reclaimed, finished or gone), so the work in flight is
	 * abandoned. Each call is one short read.
	 *
	 * @example
	 * const summary = await runCancellable((signal) => summarize(text, signal), {
	 *   interrupted: store.cancellationWatch(job.id),
	 * });
	 */
	cancellationWatch(id: string): () => Promise<boolean> {
		return this.worker.cancellationWatch(id);
	}

	/**
	 * running -> done, recording what the work produced and dropping the
	 * payload. Refuses to land on top of a cancellation ({@link JobCancelledError}),
	 * on a job another attempt or worker closed ({@link JobAlreadyFinishedError}),
	 * on a queued job ({@link JobNotRunningError}); unknown ids throw {@link JobNotFoundError}.
	 *
	 * @example
	 * await store.succeed(job.id, { resultId: draft.id, attempt: job.attempts });
	 */
	succeed(id: string, options: SucceedOptions = {}): Promise<R> {
		return this.worker.succeed(id, options);
	}

	/**
	 * running -> done for many jobs in ONE statement, each with its own
	 * result and timings (and its own broadcast). Returns the rows that landed;
	 * a job missing from the answer was not closable (cancelled, reclaimed,
	 * finished): {@link succeed} it alone to learn why.
	 *
	 * @example
	 * const closed = await store.succeedMany(done.map((j) => ({ id: j.id, attempt: j.attempts })));
	 */
	async succeedMany(items: readonly (SucceedOptions & { id: string })[]): Promise<R[]> {
		return (await this.worker.succeedManyRows(items)).map((r) => parseJobRow(r) as R);
	}

	/**
	 * As {@link succeedMany}, returning only the ids it closed: the Node
	 * runner's batched close reads nothing else, and parsing every closed row
	 * was a good share of its CPU per job.
	 *
	 * @internal
	 */
	async succeedManyIds(items: readonly (SucceedOptions & { id: string })[]): Promise<Set<string>> {
		return new Set(await this.worker.succeedManyIds(items));
	}

	/**
	 * running -> failed, with `error` written for the user (in their language,
	 * not a traceback). Same refusals as {@link succeed}. A sentence over 2,000
	 * characters is shortened (ending in `…`), never refused.
	 *
	 * @example
	 * await store.fail(job.id, `I could not read the file: ${e.message}`, { errorCode: 'unsupported_format' });
	 */
	fail(id: string, error: string, options: FailOptions = {}): Promise<R> {
		return this.worker.fail(id, error, options);
	}

	/**
	 * After an unexpected failure: back to queued, claimable again after
	 * `delaySeconds`; closed as failed (error_code `attempts_exhausted`) once
	 * `maxAttempts` is spent. `error` is the sentence shown if the retries run out.
	 *
	 * @example
	 * await store.retry(job.id, 'The reading service did not answer.', { delaySeconds: 2 ** job.attempts });
	 */
	retry(id: string, error: string, options: RetryOptions = {}): Promise<R> {
		return this.worker.retry(id, error, options);
	}

	/**
	 * Gives a running job back cleanly (graceful shutdown, a wall-clock limit
	 * coming): running -> queued without spending the attempt.
	 *
	 * @example
	 * addEventListener('beforeunload', () => void store.release(job.id, { attempt: job.attempts }));
	 */
	release(id: string, options: AttemptOptions = {}): Promise<R> {
		return this.worker.release(id, options);
	}

	/**
	 * Parks a running parent until its children have ended: `'waiting'` when
	 * it did (the worker's slot is free; the last child to end queues it again
	 * and it is claimed like any job), `'running'` when no child is left to
	 * wait for (nothing changed). The worker calls it through `ctx.waitForChildren()`.
	 *
	 * @example
	 * if ((await store.waitForChildren(job.id, { attempt: job.attempts })) === 'waiting') return;
	 */
	waitForChildren(id: string, options: AttemptOptions = {}): Promise<'waiting' | 'running'> {
		return this.worker.waitForChildren(id, options);
	}

	/**
	 * A running job asks its owner a question (workers; handlers call
	 * `ctx.ask`): the answer stored for `key` when there is one (the job goes
	 * on), else the question is kept and the job waits, its slot free, until
	 * the owner answers ({@link answer}) or `timeoutMs` passes (then it fails).
	 *
	 * @example
	 * const found = await store.ask(job.id, { key: 'ask-1', prompt: 'Portuguese?', schema: { type: 'boolean' }, attempt: job.attempts });
	 */
	ask(id: string, input: AskInput): Promise<AskResult> {
		return questions.ask(this.calls, id, input);
	}
}
