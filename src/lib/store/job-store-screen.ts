/**
 * JobStore's screen calls: reads and live views of jobs, and what the owner
 * does from a screen (answer a question, try again). The work is in
 * screen-reads.ts, watch-jobs.ts, job-streams.ts and questions.ts.
 */
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import type { JobKind, JobKindMetadata } from './job-kind.ts';
import type { Job, JobParams } from './job.ts';
import * as questions from './questions.ts';
import type { AnswerOptions, AskedQuestion } from './questions.ts';
import * as reads from './screen-reads.ts';
import type {
	HoldReason,
	JobPage,
	ListRecentOptions,
	SubscribeListOptions,
	WatchChildrenOptions,
	WatchOptions,
} from './store-options.ts';
import {
	readStreams,
	watchStreams,
	type JobStreamChunk,
	type JobStreamRead,
	type WatchStreamsOptions,
} from './job-streams.ts';
import { subscribeList, typedMetadata, watchChildren, watchJob } from './watch-jobs.ts';
import { WorkerCalls } from './job-store-worker.ts';

/** The screen's calls of {@link JobStore}. */
export class ScreenCalls<P extends JobParams = JobParams, R extends Job<P> = Job<P>> extends WorkerCalls<P, R> {
	/**
	 * The question a waiting job asked and nobody answered yet; null when
	 * there is none, or the job is not the caller's (the owner and admins see it).
	 *
	 * @example
	 * const question = await store.question(job.id); // { prompt, schema: { type: 'string', enum: [...] }, expiresAt, ... }
	 */
	question(id: string): Promise<AskedQuestion | null> {
		return questions.openQuestion(this.calls, id);
	}

	/**
	 * Answers the open question of a waiting job (its owner or an admin): the
	 * job is queued again and its handler, run again on any worker, gets the
	 * answer from `ctx.ask`. An answer that does not fit the question throws
	 * {@link InvalidJobInputError} naming the field (`answer.language`) and the
	 * job keeps waiting; anyone else gets {@link JobNotFoundError}, as for a job that does not exist; a job
	 * with no open question {@link NoOpenQuestionError}.
	 *
	 * @example
	 * await store.answer(job.id, 'pt-BR');
	 */
	answer(id: string, value: unknown, options: AnswerOptions = {}): Promise<R> {
		return questions.answer(this.calls, id, value, options);
	}

	/**
	 * Tries a failed or cancelled job again (its owner or an admin): a new
	 * queued job with the same kind, params, owner and options, `retryOf`
	 * pointing at the old one, which is left as it was. Asked twice of one job,
	 * it returns the same new job. Not failed or cancelled:
	 * {@link NotRetryableError}; not the caller's: {@link JobNotFoundError}.
	 * The payload is not carried over (a job drops it when it ends).
	 *
	 * @example
	 * const again = await store.tryAgain(job.id);
	 * goto(`/jobs/${again.id}`);
	 */
	tryAgain(id: string): Promise<R> {
		return questions.tryAgain(this.calls, id);
	}

	/**
	 * One job (payload omitted). {@link JobNotFoundError} when it does not exist
	 * or is not the caller's to see.
	 *
	 * @example
	 * const job = await store.get(params.id);
	 */
	get(id: string): Promise<R> {
		return this.calls.get(id);
	}

	/**
	 * Newest jobs first, filtered by kind and status(es), one page at a time.
	 * `{ jobs: [] }` when nothing matches: "no jobs yet" is an answer, not a 404.
	 *
	 * @example
	 * const recent = await store.listRecent({ kind: 'extract', limit: 20 });
	 * const inFlight = await store.listRecent({ kind: 'extract', statuses: ['queued', 'running'] });
	 * const next = recent.nextCursor && (await store.listRecent({ kind: 'extract', cursor: recent.nextCursor }));
	 */
	listRecent(options: ListRecentOptions = {}): Promise<JobPage<R>> {
		return reads.listRecent(this.calls, options);
	}

	/**
	 * A job's children, oldest first (payload omitted); `[]` when it has none.
	 * A user sees the children of their own jobs only.
	 *
	 * @example
	 * const failed = (await store.children(job.id)).filter((c) => c.status === 'failed');
	 */
	children(parentId: string): Promise<R[]> {
		return reads.children(this.calls, parentId);
	}

	/**
	 * Why these queued jobs are not starting, for those held back by a
	 * concurrency limit ({@link setConcurrency}): which limit, and how many of
	 * the kind (or of the key) run. Jobs not held are absent from the map.
	 *
	 * @example
	 * const held = (await store.holdReasons([job.id])).get(job.id); // { heldBy: 'key', running: 1, maxRunning: 1, kind: 'export' }
	 */
	holdReasons(ids: readonly string[]): Promise<Map<string, HoldReason>> {
		return reads.holdReasons(this.calls, ids);
	}

	/**
	 * How many of the same owner's queued jobs (in this table) will be claimed
	 * before this queued one; null once it is not queued. Counts only the
	 * owner's own jobs, so it tells a user nothing about anyone else's queue.
	 * Unknown ids (or another user's job) throw {@link JobNotFoundError}.
	 *
	 * @example
	 * const ahead = await store.queuePosition(job.id); // 2: "2 of your jobs are ahead of this one"
	 */
	queuePosition(id: string): Promise<number | null> {
		return reads.queuePosition(this.calls, id);
	}

	/**
	 * Phase timings of the latest successful jobs of a kind, newest first: what
	 * `PhasePlan.fromHistory(store, kind)` fits medians and slopes from.
	 *
	 * @example
	 * const history = await store.phaseHistory('extract', 100);
	 * const plan = await PhasePlan.fromHistory(store, 'extract', { fallback: PLAN });
	 */
	phaseHistory(kind: string | JobKind, limit = 50): Promise<PhaseTimings[]> {
		return reads.phaseHistory(this.calls, kind, limit);
	}

	/**
	 * Follows a job: yields its current state at once (a late subscriber to a
	 * finished job gets exactly one value), then one value per change of the
	 * `emitOn` fields (by default what a progress bar shows: status, progress,
	 * stage, …), and ends after the terminal state. `timeoutMs` gives up
	 * with {@link TimeoutError}; `signal` ends the watch quietly. Unknown ids
	 * (or another user's job) throw {@link JobNotFoundError}.
	 *
	 * Over Realtime (supabase-js) it listens on the job's private topic, with
	 * one read after each (re)join; where Realtime is refused or down, and over
	 * postgres.js, it polls every `intervalMs`, holding nothing between polls.
	 *
	 * @example
	 * for await (const job of store.watch(id, { intervalMs: 2000, emitOn: ['status', 'progress', 'stage'], signal })) {
	 *   bar.set(job.progress, job.stage);
	 * }
	 * // With the kind, `metadata` is checked by its schema and typed from it.
	 * for await (const job of store.watch(id, { kind: analysis })) pages.set(job.metadata?.pages);
	 */
	watch<K extends JobKind>(
		id: string,
		options: WatchOptions & { kind: K },
	): AsyncGenerator<Omit<R, 'metadata'> & { metadata: JobKindMetadata<K> | null }, void, undefined>;
	watch(id: string, options?: WatchOptions): AsyncGenerator<R, void, undefined>;
	watch(id: string, options: WatchOptions & { kind?: JobKind } = {}): AsyncGenerator<R, void, undefined> {
		const { kind, ...rest } = options;
		const watching = watchJob(this.calls, id, rest);
		return kind ? typedMetadata(watching, kind) : watching;
	}

	/**
	 * What a job's streams hold (every stream's chunks, in order) and where the
	 * job stands. A user reads their own jobs' streams only: anyone else's is
	 * {@link JobNotFoundError}.
	 *
	 * @example
	 * const { chunks } = await store.readStreams(job.id);
	 * const summary = chunks.filter((c) => c.stream === 'summary').map((c) => c.text).join('');
	 */
	readStreams(id: string): Promise<JobStreamRead> {
		return readStreams(this.calls, id);
	}

	/**
	 * Follows a job's streamed output: yields what was written so far (one
	 * batch), then each new chunk as it is sent on the job's Realtime topic,
	 * in order and with no gap or duplicate, even across a reconnection; ends
	 * once the job has ended and its output was yielded. Polls every
	 * `intervalMs` without Realtime. A chunk of a later attempt starts the
	 * output over.
	 *
	 * @example
	 * let summary = '';
	 * for await (const chunks of store.watchStreams(job.id, { signal }))
	 *   for (const c of chunks) if (c.stream === 'summary') summary += c.text;
	 */
	watchStreams(id: string, options: WatchStreamsOptions = {}): AsyncGenerator<JobStreamChunk[], void, undefined> {
		return watchStreams(this.calls, id, options);
	}

	/**
	 * Follows a job's children: yields them (oldest first) at once, then after
	 * every change of one (status, progress, stage, error, result) or a new
	 * child, until `signal` aborts. Over Realtime their changes arrive on the
	 * parent's topic (no query per change); otherwise, or while Realtime is
	 * down, it polls every `intervalMs`. With {@link watch} of the parent it
	 * makes the tree a screen shows.
	 *
	 * @example
	 * for await (const children of store.watchChildren(job.id, { signal })) render(children);
	 */
	watchChildren(parentId: string, options: WatchChildrenOptions = {}): AsyncGenerator<R[], void, undefined> {
		return watchChildren(this.calls, parentId, options);
	}

	/**
	 * Pushes changes of the caller's jobs in this table to `onChange` and
	 * returns the function that stops it. Over Realtime each change arrives as
	 * a {@link JobSummary} on the owner's topic, and `onChange()` without a job
	 * after each (re)join means "read the list again"; without Realtime,
	 * `onChange()` is called every `intervalMs`. The Svelte `JobListSource.subscribe`.
	 *
	 * @example
	 * const source: JobListSource = {
	 *   listRecent: (opts) => store.listRecent(opts),
	 *   subscribe: (onChange) => store.subscribeList({ onChange }),
	 * };
	 * const inFlight = JobList.create(source, { kind: 'extract', statuses: ['queued', 'running'] });
	 */
	subscribeList(options: SubscribeListOptions): () => void {
		return subscribeList(this.calls, options);
	}
}
