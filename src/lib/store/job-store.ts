/**
 * JobStore: the job API over the job_* SQL functions, through any {@link JobAdapter}; each call is its own unit of work
 * (an enqueue, a long claim and a polling screen never share a connection or a transaction). One class, its methods
 * grouped by who calls them, each delegating to the module that holds the work: producer, worker-writes, questions,
 * job-timeline, screen-reads, job-streams, live/ (Realtime), admin-upkeep, admin-actions; input-checks checks the input.
 */
import type { JobStatusValue } from '../state.ts';
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import * as admin from './admin-actions.ts';
import * as upkeep from './admin-upkeep.ts';
import type { JobAdapter } from './adapter.ts';
import { JobCalls } from './job-calls.ts';
import type { JobKind, JobKindInput, JobKindMetadata, JobKindParams } from './job-kind.ts';
import type { JobSchedule } from './job-schedule.ts';
import { readStreams, type JobStreamChunk, type JobStreamRead, type WatchStreamsOptions } from './job-streams.ts';
import { readTimeline, type JobTimelineEntry, type LogLine } from './job-timeline.ts';
import { parseJobRow, type Job, type JobParams } from './job.ts';
import { subscribeList, watchChildren } from './live/watch-job-list.ts';
import { typedMetadata, watchJob } from './live/watch-one-job.ts';
import { watchStreams } from './live/watch-streams.ts';
import * as producer from './producer.ts';
import * as questions from './questions.ts';
import type { AnswerOptions, AskInput, AskResult, AskedQuestion, ReplayFilter } from './questions.ts';
import * as reads from './screen-reads.ts';
import type * as o from './store-options.ts';
import { WorkerWrites } from './worker-writes.ts';

export type * from './store-options.ts';
export type { AnswerOptions, AnswerSchema, AskInput, AskResult, AskedQuestion, ReplayFilter } from './questions.ts';
export type { JobStreamChunk, JobStreamRead, WatchStreamsOptions } from './job-streams.ts';

/**
 * Long work with a status: a row the interface reads, written only through the job_* SQL functions. `P` is the params
 * type of the jobs this store handles; `R` the row type it hands back, `Job<P>` unless narrowed.
 * @example
 * const store = new JobStore(postgresAdapter(sql), { staleAfterMs: 300_000 });
 * const job = await store.enqueue('extract', { params: { filename: file.name } }); // the route
 * const claimed = await store.claim(job.id); // the worker, then store.succeed(claimed.id)
 * for await (const j of store.watch(job.id, { emitOn: ['status', 'progress'] })) render(j); // the screen
 */
export class JobStore<P extends JobParams = JobParams, R extends Job<P> = Job<P>> {
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
	constructor(adapter: JobAdapter, options: o.JobStoreOptions = {}) {
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

	// ── The producer: start work (enqueue one, many, or a child; reschedule; cancel). ──

	/** Writes a queued job row (before the task is sent: the row is what the interface reads and a worker claims) and
	 * returns it, payload omitted. With a declared kind, bad params throw {@link InvalidJobInputError} naming the field,
	 * and nothing is written.
	 * @example
	 * const job = await store.enqueue(extract, { params: { filename: 'tender.pdf' }, payload: bytes });
	 */
	enqueue<K extends JobKind>(
		kind: K,
		input: o.EnqueueInput<JobKindInput<K>> & { idempotencyKey: string },
	): Promise<o.Enqueued<Job<JobKindParams<K>>>>;
	enqueue<K extends JobKind>(kind: K, input: o.EnqueueInput<JobKindInput<K>>): Promise<Job<JobKindParams<K>>>;
	enqueue(kind: string, input: o.EnqueueInput<P> & { idempotencyKey: string }): Promise<o.Enqueued<R>>;
	enqueue(kind: string, input?: o.EnqueueInput<P>): Promise<R>;
	async enqueue(kind: string | JobKind, input: o.EnqueueInput<unknown> = {}): Promise<Job | o.Enqueued<Job>> {
		return await producer.tracedEnqueue(this.calls, kind, () => producer.enqueue(this.calls, kind, input));
	}
	/** Writes many queued jobs of one kind, all or nothing, in one statement (one per `max_rows` items over supabase-js:
	 * docs/guide/en/hosted-limits.md); returns their ids in item order. Items are checked as {@link enqueue} checks;
	 * a bad one throws {@link InvalidJobInputError} naming it (`items[3].delayMs`). An item with an `idempotencyKey` is
	 * written once per key: the batch sent again writes nothing twice.
	 * @example
	 * const ids = await store.enqueueMany(thumbnail, files.map((f) => ({ params: { path: f.path } })));
	 */
	enqueueMany<K extends JobKind>(kind: K, items: readonly o.EnqueueInput<JobKindInput<K>>[]): Promise<string[]>;
	enqueueMany(kind: string, items: readonly o.EnqueueInput<P>[]): Promise<string[]>;
	async enqueueMany(kind: string | JobKind, items: readonly o.EnqueueInput<unknown>[]): Promise<string[]> {
		return await producer.tracedEnqueue(this.calls, kind, () => producer.enqueueMany(this.calls, kind, items));
	}
	/** A running job's child (workers, through `ctx.enqueueChild`): queued, of its table and owner, cancelled with it,
	 * weighing `expectedSeconds` in its progress. Parent not running: {@link JobAlreadyFinishedError}; unknown:
	 * {@link JobNotFoundError}.
	 * @example
	 * const part = await store.enqueueChild(job.id, exportPart, { params: { page: 1 }, expectedSeconds: 30 });
	 */
	enqueueChild<K extends JobKind>(
		parentId: string,
		kind: K,
		input?: o.ChildInput<JobKindInput<K>>,
	): Promise<Job<JobKindParams<K>>>;
	enqueueChild(parentId: string, kind: string, input?: o.ChildInput<P>): Promise<R>;
	async enqueueChild(parentId: string, kind: string | JobKind, input: o.ChildInput<unknown> = {}): Promise<Job> {
		const write = () => producer.enqueueChild(this.calls, parentId, kind, input);
		return await producer.tracedEnqueue(this.calls, kind, write);
	}
	/** Moves a queued job's start (owner or worker) to `runAt`, `delayMs` from now, or now. Started or finished:
	 * {@link JobAlreadyFinishedError}; cancelled: {@link JobCancelledError}.
	 * @example
	 * await store.reschedule(job.id, { delayMs: 15 * 60_000 }); // in a quarter of an hour
	 */
	async reschedule(id: string, options: o.RescheduleOptions = {}): Promise<R> {
		return (await producer.reschedule(this.calls, id, options)) as R;
	}
	/** queued/running -> cancelled at once; the worker learns it on its next tick. Null, not an error, when nothing is
	 * left to stop (unknown or ended): double clicks are normal.
	 * @example
	 * const stopped = (await store.cancel(id, { reason: 'Cancelled by the user.' })) !== null;
	 */
	async cancel(id: string, options: o.CancelOptions = {}): Promise<R | null> {
		return (await producer.cancel(this.calls, id, options)) as R | null;
	}

	// ── The worker: claim, report (tick, streams, logs), close, park and ask. ──

	/** queued -> running, returning the row with its payload; null when not yours (claimed by another, unknown, or not
	 * available yet). Two workers racing for one id cannot both win.
	 * @example
	 * const job = await store.claim(jobId);
	 */
	claim(id: string, options: o.ClaimOptions = {}): Promise<R | null> {
		return this.worker.claim(id, options);
	}
	/** Claims up to `limit` queued jobs of the given kinds, oldest first, skipping rows others hold; `[]` when none.
	 * @example
	 * for (const job of await store.claimNext({ kinds: ['extract'], limit: 4 })) void run(job);
	 */
	claimNext(options: o.ClaimNextOptions = {}): Promise<R[]> {
		return this.worker.claimNext(options);
	}
	/** Writes progress/stage/heartbeat on a running job in one round trip and returns its status: anything but
	 * `'running'` means stop. The `Ticker` a ProgressTracker reports to.
	 * @example
	 * if ((await store.tick(job.id, { progress: 40, stage: 'table', attempt: job.attempts })) !== 'running') return;
	 */
	tick(id: string, update: o.TickInput = {}): Promise<JobStatusValue> {
		return this.worker.tick(id, update);
	}
	/** Appends text to a running job's named stream and sends it to its watchers (`ctx.stream(name)` coalesces writes).
	 * Refused as a {@link tick} is; past the job's bound, {@link InvalidJobInputError} naming `streams.<name>`.
	 * @example
	 * await store.appendStream(job.id, 'summary', 'The tender asks for ', { attempt: job.attempts });
	 */
	appendStream(id: string, stream: string, text: string, options: o.AttemptOptions = {}): Promise<JobStatusValue> {
		return this.worker.appendStream(id, stream, text, options);
	}
	/** The job's status, writing nothing (a tick when the bar did not move). With `attempt`, a job reclaimed for another
	 * attempt throws {@link JobAlreadyFinishedError}, as {@link tick} would.
	 * @example
	 * if ((await store.readStatus(job.id, { attempt: job.attempts })) !== 'running') return;
	 */
	readStatus(id: string, options: o.AttemptOptions = {}): Promise<JobStatusValue> {
		return this.worker.readStatus(id, options);
	}
	/** Writes a worker's log lines (each checked: {@link InvalidJobInputError} naming the field; `ctx.log` batches);
	 * 500 are kept per job, then one marker line counts the dropped ones.
	 * @example
	 * await store.log(job.id, [{ level: 'info', message: 'Page 3 read', userFacing: true }]);
	 */
	log(id: string, lines: readonly LogLine[], options: o.AttemptOptions & { dropped?: number } = {}): Promise<number> {
		return this.worker.log(id, lines, options);
	}
	/** A job's transitions (who and why where known) and log lines, oldest first: all of it for an admin or a worker,
	 * the user-facing lines for the owner, `[]` for anyone else.
	 * @example
	 * for (const e of await store.timeline(job.id)) console.log(e.at, e.event, e.message);
	 */
	timeline(id: string): Promise<JobTimelineEntry[]> {
		return readTimeline(this.calls, id);
	}
	/** For `runCancellable`: resolves true, after one short read, once the job is no longer running (cancelled,
	 * reclaimed, finished or gone).
	 * @example
	 * const summary = await runCancellable((signal) => summarize(text, signal), { interrupted: store.cancellationWatch(job.id) });
	 */
	cancellationWatch(id: string): () => Promise<boolean> {
		return this.worker.cancellationWatch(id);
	}
	/** running -> done with what the work produced, dropping the payload. Cancelled: {@link JobCancelledError}; closed by
	 * another attempt or worker: {@link JobAlreadyFinishedError}; queued: {@link JobNotRunningError}; unknown:
	 * {@link JobNotFoundError}.
	 * @example
	 * await store.succeed(job.id, { resultId: draft.id, attempt: job.attempts });
	 */
	succeed(id: string, options: o.SucceedOptions = {}): Promise<R> {
		return this.worker.succeed(id, options);
	}
	/** {@link succeed} for many jobs, each with its result and timings, in ONE statement (one per `max_rows` jobs over
	 * supabase-js); returns the rows that landed. A missing job was not closable: succeed it alone to learn why.
	 * @example
	 * const closed = await store.succeedMany(done.map((j) => ({ id: j.id, attempt: j.attempts })));
	 */
	async succeedMany(items: readonly (o.SucceedOptions & { id: string })[]): Promise<R[]> {
		return (await this.worker.succeedManyRows(items)).map((r) => parseJobRow(r) as R);
	}
	/** @internal {@link succeedMany} returning only the ids it closed (all the Node runner's batched close reads). */
	async succeedManyIds(items: readonly (o.SucceedOptions & { id: string })[]): Promise<Set<string>> {
		return new Set(await this.worker.succeedManyIds(items));
	}
	/** running -> failed, `error` written for the user (their language, not a traceback; over 2,000 characters it is
	 * shortened, ending in `…`, never refused). Refused as {@link succeed} is.
	 * @example
	 * await store.fail(job.id, `I could not read the file: ${e.message}`, { errorCode: 'unsupported_format' });
	 */
	fail(id: string, error: string, options: o.FailOptions = {}): Promise<R> {
		return this.worker.fail(id, error, options);
	}
	/** After an unexpected failure: queued, claimable after `delaySeconds`; once `maxAttempts` is spent, failed
	 * (`attempts_exhausted`) with `error` as the sentence shown.
	 * @example
	 * await store.retry(job.id, 'The reading service did not answer.', { delaySeconds: 2 ** job.attempts });
	 */
	retry(id: string, error: string, options: o.RetryOptions = {}): Promise<R> {
		return this.worker.retry(id, error, options);
	}
	/** Gives a running job back (shutdown, a wall-clock limit coming): running -> queued, the attempt unspent.
	 * @example
	 * addEventListener('beforeunload', () => void store.release(job.id, { attempt: job.attempts }));
	 */
	release(id: string, options: o.AttemptOptions = {}): Promise<R> {
		return this.worker.release(id, options);
	}
	/** Parks a running parent until its children end (`ctx.waitForChildren()`): `'waiting'`, its slot free, until the
	 * last child to end queues it again; `'running'` when no child is left to wait for.
	 * @example
	 * if ((await store.waitForChildren(job.id, { attempt: job.attempts })) === 'waiting') return;
	 */
	waitForChildren(id: string, options: o.AttemptOptions = {}): Promise<'waiting' | 'running'> {
		return this.worker.waitForChildren(id, options);
	}
	/** A running job asks its owner a question (handlers call `ctx.ask`): the answer stored for `key` if any, else the
	 * job waits, its slot free, until the owner answers ({@link answer}) or `timeoutMs` passes (then it fails).
	 * @example
	 * const found = await store.ask(job.id, { key: 'ask-1', prompt: 'Portuguese?', schema: { type: 'boolean' }, attempt: job.attempts });
	 */
	ask(id: string, input: AskInput): Promise<AskResult> {
		return questions.ask(this.calls, id, input);
	}

	// ── The screen: reads and live views, and what the owner does from a screen. ──

	/** The question a waiting job asked and nobody answered yet; null when none, or not the caller's (owner, admins).
	 * @example
	 * const question = await store.question(job.id); // { prompt, schema: { type: 'string', enum: [...] }, expiresAt, ... }
	 */
	question(id: string): Promise<AskedQuestion | null> {
		return questions.openQuestion(this.calls, id);
	}
	/** Answers the open question of a waiting job (owner or admin): it is queued again and `ctx.ask` gets the answer. A
	 * misfit throws {@link InvalidJobInputError} naming the field (`answer.language`) and the job keeps waiting;
	 * anyone else gets {@link JobNotFoundError}; no open question, {@link NoOpenQuestionError}.
	 * @example
	 * await store.answer(job.id, 'pt-BR');
	 */
	answer(id: string, value: unknown, options: AnswerOptions = {}): Promise<R> {
		return questions.answer(this.calls, id, value, options);
	}
	/** Tries a failed or cancelled job again (its owner or an admin): a new queued job with the same kind, params,
	 * owner and options, `retryOf` pointing at the old one; asked twice, the same new job. Not failed or cancelled:
	 * {@link NotRetryableError}; not the caller's: {@link JobNotFoundError}. The payload is not carried over.
	 * @example
	 * const again = await store.tryAgain(job.id);
	 * goto(`/jobs/${again.id}`);
	 */
	tryAgain(id: string): Promise<R> {
		return questions.tryAgain(this.calls, id);
	}
	/** One job (payload omitted). {@link JobNotFoundError} when it does not exist or is not the caller's to see.
	 * @example
	 * const job = await store.get(params.id);
	 */
	get(id: string): Promise<R> {
		return this.calls.get(id);
	}
	/** Newest jobs first, filtered by kind and status(es), one page at a time; `{ jobs: [] }` when nothing matches.
	 * @example
	 * const recent = await store.listRecent({ kind: 'extract', limit: 20 });
	 * const inFlight = await store.listRecent({ kind: 'extract', statuses: ['queued', 'running'] });
	 * const next = recent.nextCursor && (await store.listRecent({ kind: 'extract', cursor: recent.nextCursor }));
	 */
	listRecent(options: o.ListRecentOptions = {}): Promise<o.JobPage<R>> {
		return reads.listRecent(this.calls, options);
	}
	/** A job's children, oldest first (payload omitted); `[]` when none. A user sees their own jobs' children only.
	 * @example
	 * const failed = (await store.children(job.id)).filter((c) => c.status === 'failed');
	 */
	children(parentId: string): Promise<R[]> {
		return reads.children(this.calls, parentId);
	}
	/** Why these queued jobs are not starting, for those held back by a concurrency limit ({@link setConcurrency}):
	 * which limit, and how many of the kind (or of the key) run. Jobs not held are absent from the map.
	 * @example
	 * const held = (await store.holdReasons([job.id])).get(job.id); // { heldBy: 'key', running: 1, maxRunning: 1, kind: 'export' }
	 */
	holdReasons(ids: readonly string[]): Promise<Map<string, o.HoldReason>> {
		return reads.holdReasons(this.calls, ids);
	}
	/** How many of the owner's own queued jobs (in this table) will be claimed before this one; null once it is not
	 * queued. Unknown ids (or another user's job) throw {@link JobNotFoundError}.
	 * @example
	 * const ahead = await store.queuePosition(job.id); // 2: "2 of your jobs are ahead of this one"
	 */
	queuePosition(id: string): Promise<number | null> {
		return reads.queuePosition(this.calls, id);
	}
	/** Phase timings of the latest successful jobs of a kind, newest first (what `PhasePlan.fromHistory` fits).
	 * @example
	 * const history = await store.phaseHistory('extract', 100);
	 * const plan = await PhasePlan.fromHistory(store, 'extract', { fallback: PLAN });
	 */
	phaseHistory(kind: string | JobKind, limit = 50): Promise<PhaseTimings[]> {
		return reads.phaseHistory(this.calls, kind, limit);
	}
	/** Follows a job: yields its state at once, then one value per change of the `emitOn` fields (default: what a
	 * progress bar shows), ending after the terminal state; `timeoutMs` gives up with {@link TimeoutError}, `signal` ends
	 * it quietly; unknown ids (or another user's job): {@link JobNotFoundError}. Over Realtime it listens on the job's
	 * private topic, reading once after each (re)join; else it polls every `intervalMs`, holding nothing between polls.
	 * @example
	 * for await (const job of store.watch(id, { intervalMs: 2000, emitOn: ['status', 'progress', 'stage'], signal })) {
	 *   bar.set(job.progress, job.stage);
	 * }
	 * // With the kind, `metadata` is checked by its schema and typed from it.
	 * for await (const job of store.watch(id, { kind: analysis })) pages.set(job.metadata?.pages);
	 */
	watch<K extends JobKind>(
		id: string,
		options: o.WatchOptions & { kind: K },
	): AsyncGenerator<Omit<R, 'metadata'> & { metadata: JobKindMetadata<K> | null }, void, undefined>;
	watch(id: string, options?: o.WatchOptions): AsyncGenerator<R, void, undefined>;
	watch(id: string, options: o.WatchOptions & { kind?: JobKind } = {}): AsyncGenerator<R, void, undefined> {
		const { kind, ...rest } = options;
		const watching = watchJob(this.calls, id, rest);
		return kind ? typedMetadata(watching, kind) : watching;
	}
	/** Every stream's chunks so far, in order, and where the job stands. Anyone else's job is {@link JobNotFoundError}.
	 * @example
	 * const { chunks } = await store.readStreams(job.id);
	 * const summary = chunks.filter((c) => c.stream === 'summary').map((c) => c.text).join('');
	 */
	readStreams(id: string): Promise<JobStreamRead> {
		return readStreams(this.calls, id);
	}
	/** Follows a job's streamed output: what was written so far (one batch), then each new chunk, in order, with no gap
	 * or duplicate, even across a reconnection; ends once the job has ended and its output was yielded. Polls every
	 * `intervalMs` without Realtime. A later attempt starts over.
	 * @example
	 * let summary = '';
	 * for await (const chunks of store.watchStreams(job.id, { signal }))
	 *   for (const c of chunks) if (c.stream === 'summary') summary += c.text;
	 */
	watchStreams(id: string, options: WatchStreamsOptions = {}): AsyncGenerator<JobStreamChunk[], void, undefined> {
		return watchStreams(this.calls, id, options);
	}
	/** Follows a job's children: yields them (oldest first) at once, then after every change of one or a new child,
	 * until `signal` aborts. Over Realtime their changes arrive on the parent's topic; otherwise it polls every
	 * `intervalMs`. With {@link watch} of the parent it makes the tree a screen shows.
	 * @example
	 * for await (const children of store.watchChildren(job.id, { signal })) render(children);
	 */
	watchChildren(parentId: string, options: o.WatchChildrenOptions = {}): AsyncGenerator<R[], void, undefined> {
		return watchChildren(this.calls, parentId, options);
	}
	/** Pushes changes of the caller's jobs in this table to `onChange` (a {@link JobSummary}; none after a (re)join, or
	 * every `intervalMs` without Realtime: "read the list again"); returns the stop. `JobListSource.subscribe`.
	 * @example
	 * const source: JobListSource = {
	 *   listRecent: (opts) => store.listRecent(opts),
	 *   subscribe: (onChange) => store.subscribeList({ onChange }),
	 * };
	 * const inFlight = JobList.create(source, { kind: 'extract', statuses: ['queued', 'running'] });
	 */
	subscribeList(options: o.SubscribeListOptions): () => void {
		return subscribeList(this.calls, options);
	}

	// ── The admin's upkeep (admins, a worker or the service role): readmit, limit, schedule, replay. ──

	/** Admins (or a worker): tries again every failed job of this table not tried again yet that matches the filter
	 * (kind, error code, ended in `[from, to)`); returns the new jobs. Others: {@link PermissionDeniedError}. Over the
	 * batch limit (`supabase_jobs.batch_max()`, 5,000) matching: {@link InvalidJobInputError} (`filter`), none written.
	 * @example
	 * const again = await store.replay({ kind: 'extract', errorCode: 'worker_lost', from: new Date(Date.now() - 3_600_000) });
	 */
	replay(filter: ReplayFilter = {}): Promise<R[]> {
		return questions.replay(this.calls, filter);
	}
	/** Readmits running jobs silent for `staleAfterMs`: queued again, or failed once max_attempts are spent. Without
	 * `staleAfterMs`, {@link StaleAfterRequiredError} before touching the database.
	 * @example
	 * setInterval(() => void store.reclaimStale(), 60_000); // a store made with { staleAfterMs: 300_000 }
	 */
	reclaimStale(): Promise<R[]> {
		return upkeep.reclaimStale(this.calls, this.staleAfterMs);
	}
	/** One pass of the reclaim schedule on this table (for an app looping itself instead of pg_cron): readmits running
	 * jobs that missed three beats declared at claim (`heartbeatMs`), fails queued ones past `expireAfterMs`
	 * (`expired`); returns the jobs it readmitted or closed.
	 * @example
	 * setInterval(() => void store.reclaimSilent(), 10_000);
	 */
	reclaimSilent(): Promise<R[]> {
		return upkeep.reclaimSilent(this.calls);
	}
	/** Limits how many jobs of a kind run at once in this table, enforced where jobs are claimed (over it, a job waits
	 * queued); both omitted: no limit. Service role.
	 * @example
	 * await store.setConcurrency(exportKind, { maxRunningPerKey: 1 }); // one export per concurrencyKey
	 */
	setConcurrency(kind: string | JobKind, limits: o.ConcurrencyLimits): Promise<void> {
		return upkeep.setConcurrency(this.calls, kind, limits);
	}
	/** Makes this table's recurring schedules exactly these, one pg_cron entry each; missed slots are skipped, not
	 * backfilled. Service role only. A bad one throws {@link InvalidJobInputError} naming it
	 * (`schedules["nightly-report"].cron`) and nothing changes.
	 * @example
	 * await store.syncSchedules([defineSchedule({ name: 'nightly-report', kind: 'report.build', cron: '0 2 * * *' })]);
	 */
	syncSchedules(schedules: readonly JobSchedule[]): Promise<number> {
		return upkeep.syncSchedules(this.calls, schedules);
	}

	// ── The admin's actions (app_metadata.role = 'admin', or the service role; anyone else: PermissionDeniedError). ──

	/** Cancels up to `limit` (1,000) unfinished jobs matching every filter given, oldest first, each as {@link cancel}
	 * would. Returns how many; call again while it returns `limit`.
	 * @example
	 * await admin.cancelMany({ kind: 'export', statuses: ['queued'], reason: 'Exports are paused for maintenance.' });
	 */
	cancelMany(filter: o.CancelManyFilter): Promise<number> {
		return admin.cancelMany(this.calls, filter);
	}
	/** Stops claims of a kind in this table (running jobs run on) until {@link resumeKind}. True when this paused it.
	 * @example
	 * await admin.pauseKind('email.send'); // the provider is down
	 */
	pauseKind(kind: string | JobKind): Promise<boolean> {
		return admin.pauseKind(this.calls, kind);
	}
	/** Lets a paused kind be claimed again and wakes the workers. True when it was paused.
	 * @example
	 * await admin.resumeKind('email.send');
	 */
	resumeKind(kind: string | JobKind): Promise<boolean> {
		return admin.resumeKind(this.calls, kind);
	}
	/** At most `starts` jobs of a kind start in any `perMs` milliseconds, across every worker; null removes it.
	 * @example
	 * await admin.setRateLimit('geocode', { starts: 10, perMs: 1000 }); // 10 a second
	 */
	setRateLimit(kind: string | JobKind, limit: o.RateLimit | null): Promise<void> {
		return admin.setRateLimit(this.calls, kind, limit);
	}
	/** Deletes up to `limit` (5,000) jobs that ended before `endedBefore`, oldest first (timings kept); returns how many.
	 * @example
	 * await admin.deleteFinished({ endedBefore: new Date(Date.now() - 7 * 86_400_000), statuses: ['cancelled'] });
	 */
	deleteFinished(filter: o.DeleteFinishedFilter): Promise<number> {
		return admin.deleteFinished(this.calls, filter);
	}
	/** Every kind of this table, for a dashboard: jobs by status, done/failed in the last hour, paused, its limits.
	 * @example
	 * for (const k of await admin.adminKinds()) console.log(k.kind, k.counts.queued, k.pausedAt ? 'paused' : '');
	 */
	adminKinds(): Promise<o.KindOverview[]> {
		return admin.adminKinds(this.calls);
	}
}
