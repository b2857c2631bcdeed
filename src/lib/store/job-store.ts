/**
 * JobStore: the seed's whole API over the job_* SQL functions, through any
 * {@link JobAdapter}. Every call is its own unit of work — a handler that
 * enqueues, a worker that grinds for minutes and a screen polling every couple
 * of seconds never share a connection or a transaction.
 */
import {
	InvalidJobInputError,
	JobNotFoundError,
	StaleAfterRequiredError,
	TimeoutError,
	isJobError,
	isJobNotFoundError,
} from '../errors.ts';
import { LIST_MAX } from '../internal/limits.ts';
import { beforeDeadline, checkTimerMs } from '../internal/timers.ts';
import { isTerminalStatus, JOB_STATUSES, type JobStatusValue } from '../state.ts';
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import type { JobAdapter, JobCallArgs, JobFunctionName, JobTopicStatus, RawRow } from './adapter.ts';
import { followChildren } from './follow-children.ts';
import { followTopic, jobTopic } from './follow-topic.ts';
import type { JobSchedule } from './job-schedule.ts';
import { Liveness } from '../internal/liveness.ts';
import { parseJobBroadcast, tableLabel, type JobSummary } from './job-summary.ts';
import { cursorOf, parseJobRow, readTimings, UnexpectedRowError, type Job, type JobParams } from './job.ts';
import { isJobKind, type JobKind, type JobKindParams, type JobKindInput } from './job-kind.ts';

/**
 * Options of {@link JobStore}.
 *
 * @example
 * ```ts
 * const options: JobStoreOptions = { table: 'exports', staleAfterMs: 300_000 };
 * ```
 */
export interface JobStoreOptions {
	/**
	 * The job table (created with `supabase_jobs.create_job_table`), e.g. `'exports'` or `'app.exports'`.
	 * @default 'jobs'
	 */
	table?: string;
	/**
	 * Milliseconds without a heartbeat after which a running job counts as
	 * abandoned by a dead worker (milliseconds, like every other timing
	 * option). Required by {@link JobStore.reclaimStale}, which refuses to
	 * guess; nothing else uses it.
	 */
	staleAfterMs?: number;
	/**
	 * The same threshold in seconds, as the seed's `stale_after`.
	 * @deprecated Use `staleAfterMs`; still honoured (give one or the other).
	 */
	staleAfter?: number;
}

/**
 * What {@link JobStore.enqueue} writes besides the kind.
 *
 * @example
 * ```ts
 * const input: EnqueueInput = { params: { filename }, payload: await file.bytes(), locale: 'pt-BR' };
 * ```
 */
export interface EnqueueInput<P = JobParams> {
	/** Small input, a JSON object (at most 64 KiB). */
	params?: P;
	/** Large input (at most 10 MiB): bytes, or text stored as UTF-8. Only claim returns it. */
	payload?: Uint8Array | string | null;
	/** Claims allowed before a job that keeps killing its worker is closed as failed. @default 3 */
	maxAttempts?: number;
	/** The user's language (e.g. `'pt-BR'`), for the sentences the database writes into `error`. */
	locale?: string;
	/** The owner, when a worker (service role) enqueues on a user's behalf. Users always own what they enqueue. */
	ownerId?: string;
	/** Not claimable before this time (a scheduled run). Give `runAt` or `delayMs`, not both. */
	runAt?: Date;
	/** Not claimable for this many milliseconds, counted by the database's clock. */
	delayMs?: number;
	/** Labels to find the job by (`listRecent({ tags })`, `subscribeList({ tags })`): at most 10, 1..64 characters each. */
	tags?: readonly string[];
	/**
	 * At most one job per key (and job table and owner): while a job with this
	 * key is queued or running, or for `idempotencyTtlMs` after it was created,
	 * enqueue returns that job (`existing: true`) instead of writing a new one.
	 * A double click or a retried form post never starts the work twice.
	 */
	idempotencyKey?: string;
	/** How long a key stands for its job, finished or not. @default 86_400_000 (24 h) */
	idempotencyTtlMs?: number;
	/** Claims take the highest priority first, then the oldest. An integer from -32768 to 32767. @default 0 */
	priority?: number;
	/**
	 * A job nobody started within this many milliseconds of its start time is
	 * never claimed and ends failed ("It expired before it could start"), closed
	 * by the reclaim schedule.
	 */
	expireAfterMs?: number;
	/**
	 * Jobs of this kind sharing this key run at most `maxRunningPerKey` at a
	 * time ({@link JobStore.setConcurrency}), e.g. the owner's id: one export per user.
	 */
	concurrencyKey?: string;
}

/**
 * What {@link JobStore.enqueueChild} takes: what {@link EnqueueInput} takes
 * that a child can have (it starts when claimed, and belongs to its parent's
 * owner), and its weight in the parent's progress.
 *
 * @example
 * ```ts
 * const input: ChildInput = { params: { page: 2 }, expectedSeconds: 12 };
 * ```
 */
export interface ChildInput<P = JobParams> extends Pick<
	EnqueueInput<P>,
	'params' | 'payload' | 'maxAttempts' | 'locale' | 'ownerId' | 'tags' | 'priority' | 'concurrencyKey'
> {
	/** What the child's plan predicts, in seconds: its weight in the parent's progress. @default 1 */
	expectedSeconds?: number;
}

/**
 * Why a queued job is not starting: a concurrency limit of its kind
 * (`heldBy: 'kind'`, `maxRunning`) or of its key (`heldBy: 'key'`,
 * `maxRunningPerKey`) is full, `running` of them running.
 *
 * @example
 * ```ts
 * const r: HoldReason = { kind: 'export', heldBy: 'key', running: 1, maxRunning: 1 };
 * ```
 */
export interface HoldReason {
	kind: string;
	heldBy: 'kind' | 'key';
	running: number;
	maxRunning: number;
}

/**
 * Limits of {@link JobStore.setConcurrency}; omitted: no limit.
 *
 * @example
 * ```ts
 * await store.setConcurrency('export', { maxRunning: 4, maxRunningPerKey: 1 });
 * ```
 */
export interface ConcurrencyLimits {
	/** At most this many jobs of the kind running across every worker. */
	maxRunning?: number;
	/** At most this many running per `concurrencyKey`. */
	maxRunningPerKey?: number;
}

/**
 * What {@link JobStore.enqueue} returns when given an `idempotencyKey`: the
 * job, and whether it already existed (the key matched a job enqueued before).
 *
 * @example
 * ```ts
 * const job: Enqueued<Job> = await store.enqueue('export', { idempotencyKey: formId });
 * if (job.existing) console.log('already on its way');
 * ```
 */
export type Enqueued<J> = J & { readonly existing: boolean };

/**
 * Options of {@link JobStore.reschedule}: the new start, as a time or a delay from now.
 *
 * @example
 * ```ts
 * await store.reschedule(job.id, { runAt: new Date(Date.now() + 3_600_000) });
 * ```
 */
export interface RescheduleOptions {
	runAt?: Date;
	delayMs?: number;
}

/**
 * Options of {@link JobStore.claimNext}.
 *
 * @example
 * ```ts
 * const jobs = await store.claimNext({ kinds: ['extract'], limit: 5 });
 * ```
 */
export interface ClaimNextOptions extends ClaimOptions {
	/** Only these kinds (names or declared kinds); all kinds when omitted. */
	kinds?: readonly (string | JobKind)[];
	/** At most this many jobs. @default 1 */
	limit?: number;
}

/**
 * The liveness contract a worker declares when it claims: how often it will
 * beat (tick, or write a heartbeat when nothing changed). A job whose worker
 * misses three beats in a row is reclaimed by `reclaimSilent` (and the
 * reclaim schedule), and a watcher sees `workerSilent` after two. Without
 * it nothing is guessed: the job is reclaimed only by an explicit `staleAfterMs`.
 *
 * @example
 * ```ts
 * const job = await store.claim(jobId, { heartbeatMs: 5000 });
 * ```
 */
export interface ClaimOptions {
	/** Milliseconds between the beats this worker promises (10 ms to 1 hour). */
	heartbeatMs?: number;
}

/**
 * Options of the calls a worker makes on a claimed job. `attempt` is the
 * `attempts` value of the row `claim` returned: with it the database refuses
 * the write (JobAlreadyFinishedError) once a reclaim handed the job to another attempt.
 *
 * @example
 * ```ts
 * await store.succeed(job.id, { resultId, attempt: job.attempts });
 * ```
 */
export interface AttemptOptions {
	attempt?: number;
}

/**
 * Options of {@link JobStore.succeed}.
 *
 * @example
 * ```ts
 * await store.succeed(job.id, { resultId: draft.id, timings: tracker.timings() });
 * ```
 */
export interface SucceedOptions extends AttemptOptions {
	/** The row the work produced, so the screen links straight to it. */
	resultId?: string | null;
	/** Phase timings recorded by the tracker (what PhasePlan.fromHistory fits). */
	timings?: PhaseTimings | null;
}

/**
 * Options of {@link JobStore.fail}.
 *
 * @example
 * ```ts
 * await store.fail(job.id, 'I could not read the file.', { errorCode: 'unsupported_format' });
 * ```
 */
export interface FailOptions extends AttemptOptions {
	/** A stable snake_case code for the error. @default 'failed' */
	errorCode?: string;
	timings?: PhaseTimings | null;
}

/**
 * Options of {@link JobStore.retry}.
 *
 * @example
 * ```ts
 * await store.retry(job.id, 'The service was busy; trying again.', { delaySeconds: 30 });
 * ```
 */
export interface RetryOptions extends AttemptOptions {
	/** Not claimable again before this many seconds. @default 0 */
	delaySeconds?: number;
}

/**
 * Options of {@link JobStore.cancel}.
 *
 * @example
 * ```ts
 * await store.cancel(id, { reason: 'Cancelled by the user.' });
 * ```
 */
export interface CancelOptions {
	/** Written into `error`, for the user. @default a sentence in the job's locale */
	reason?: string;
}

/**
 * What one {@link JobStore.tick} writes. `progress` is a percentage (0..100)
 * and never moves backwards within an attempt.
 *
 * @example
 * ```ts
 * const status = await store.tick(id, { progress: 42.5, stage: 'reading', attempt: job.attempts });
 * ```
 */
export interface TickInput extends AttemptOptions {
	progress?: number;
	stage?: string;
	/** Seconds until the expected end (negative: the current phase overran); stored as `expectedEndAt` in the same write. */
	etaSeconds?: number;
}

/**
 * Options of {@link JobStore.listRecent}. Give `status` or `statuses`, not both.
 *
 * @example
 * ```ts
 * await store.listRecent({ kind: 'extract', statuses: ['queued', 'running'] });
 * ```
 */
export interface ListRecentOptions {
	kind?: string | JobKind;
	status?: JobStatusValue;
	/** Several statuses in one question ("queued or running"), so the halves cannot disagree. */
	statuses?: readonly JobStatusValue[];
	/** @default 20 */
	limit?: number;
	/** `nextCursor` of the previous page. */
	cursor?: string | null;
	/** Only jobs carrying every one of these tags. */
	tags?: readonly string[];
}

/**
 * One page of {@link JobStore.listRecent}: newest first; `nextCursor` is null on the last page.
 *
 * @example
 * ```ts
 * const { jobs, nextCursor } = await store.listRecent({ limit: 50 });
 * ```
 */
export interface JobPage<R> {
	jobs: R[];
	nextCursor: string | null;
}

/**
 * Options of {@link JobStore.watchChildren}.
 *
 * @example
 * ```ts
 * const options: WatchChildrenOptions = { intervalMs: 1000, signal: controller.signal };
 * ```
 */
export interface WatchChildrenOptions {
	/** Milliseconds between polls (when there is no Realtime, or it is down). @default 2000 */
	intervalMs?: number;
	/** Ends the watch quietly. */
	signal?: AbortSignal;
	/** `'auto'` listens over Realtime where the adapter has it; `'poll'` always polls. @default 'auto' */
	transport?: 'auto' | 'poll';
}

/**
 * Options of {@link JobStore.watch}.
 *
 * @example
 * ```ts
 * const options: WatchOptions = { intervalMs: 1000, emitOn: ['status', 'progress', 'stage'], timeoutMs: 600_000 };
 * ```
 */
export interface WatchOptions {
	/** Milliseconds between polls. @default 2000 */
	intervalMs?: number;
	/** The fields whose change yields a new value; the terminal state is always yielded. @default ['status'] */
	emitOn?: readonly (keyof Job)[];
	/**
	 * Give up with {@link TimeoutError} when no terminal state came within this
	 * many milliseconds, even while a read is in flight. Like `intervalMs`,
	 * finite, above 0 and at most 2^31-1 (setTimeout's limit), or RangeError.
	 */
	timeoutMs?: number;
	/** Ends the watch quietly (the loop just finishes). */
	signal?: AbortSignal;
	/**
	 * `'auto'` listens on the job's Realtime topic when the adapter has Realtime
	 * (supabase-js) and polls otherwise; `'poll'` always polls.
	 * @default 'auto'
	 */
	transport?: 'auto' | 'poll';
	/**
	 * Told how the job's Realtime topic stands, e.g. for a "live" badge: `live`
	 * once joined AND the row re-read (every change from then on arrives),
	 * `down` when the connection was lost (polling until it rejoins),
	 * `refused` when Realtime is refused or unreachable (polling to the end).
	 * Never called when the store polls from the start.
	 */
	onRealtime?: (status: JobTopicStatus) => void;
}

/**
 * Options of {@link JobStore.subscribeList}.
 *
 * @example
 * ```ts
 * const stop = store.subscribeList({ onChange: (job) => (job ? list.apply(job) : list.refresh()) });
 * ```
 */
export interface SubscribeListOptions {
	/**
	 * Called with the changed job (its screen columns) as each change commits,
	 * or with nothing to mean "something may have changed: read the list
	 * again" — after every (re)join, since changes made while not joined are
	 * not replayed, and every `intervalMs` while Realtime is unavailable.
	 */
	onChange(job?: JobSummary): void;
	/**
	 * Whose jobs. Defaults to the signed-in user; required with a service key
	 * (which has no user).
	 */
	ownerId?: string;
	/** Polling period of the fallback (no Realtime, or join refused / lost). @default 2000 */
	intervalMs?: number;
	/** Told how the owner topic stands (`live`, `down`, `refused`). */
	onRealtime?: (status: JobTopicStatus) => void;
	/** Only changes of jobs carrying every one of these tags (the "read again" calls still come). */
	tags?: readonly string[];
}

/** The functions that return job rows. */
type RowFunction = Exclude<JobFunctionName, 'job_tick' | 'job_phase_history'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function invalid(field: string, message: string): InvalidJobInputError {
	return new InvalidJobInputError(message, { field, details: `field=${field}`, hint: 'Nothing was written.' });
}

/** NaN and Infinity would reach PostgREST as JSON null and silently mean "default": refuse them here, for both adapters alike. */
function checkInt(field: string, value: number | undefined): number | undefined {
	if (value !== undefined && !Number.isInteger(value))
		throw invalid(field, `${field} must be an integer; got ${String(value)}`);
	return value;
}

function checkFinite(field: string, value: number | undefined): number | undefined {
	if (value !== undefined && !Number.isFinite(value))
		throw invalid(field, `${field} must be a finite number; got ${String(value)}`);
	return value;
}

const kindName = (kind: string | JobKind) => (isJobKind(kind) ? kind.name : kind);

function checkPositive(field: string, value: number): number {
	if (!(Number.isFinite(value) && value > 0))
		throw invalid(field, `${field} must be a positive number of milliseconds; got ${String(value)}`);
	return value;
}

function checkDate(field: string, value: Date): Date {
	if (!(value instanceof Date) || Number.isNaN(value.getTime()))
		throw invalid(field, `${field} must be a valid Date; got ${String(value)}`);
	return value;
}

const hasTags = (tags: readonly string[], wanted: readonly string[]) => wanted.every((t) => tags.includes(t));

function checkTags(field: string, tags: readonly string[] | undefined): string[] | undefined {
	if (tags === undefined) return undefined;
	if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))
		throw invalid(field, `${field} must be an array of strings`);
	return [...tags];
}

/** A job's params as the kind checks them (a declared kind parses; a named one takes any JSON object). */
function paramsFor(kind: string | JobKind, params: unknown): JobParams | undefined {
	if (isJobKind(kind)) return kind.parseParams(params ?? {});
	if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
		throw invalid('params', 'params must be a JSON object (put large input in payload)');
	return params as JobParams | undefined;
}

/** A payload as bytes (a string is UTF-8). */
function payloadBytes(payload: EnqueueInput['payload']): Uint8Array | null | undefined {
	return typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
}

/** run_at / delay arguments: the database's clock counts a delay, so browsers with a wrong clock schedule right. */
function startArgs(input: { runAt?: Date; delayMs?: number }): { run_at?: string; delay?: string } {
	if (input.runAt !== undefined && input.delayMs !== undefined)
		throw invalid('runAt', 'give runAt or delayMs, not both');
	return {
		...(input.runAt !== undefined ? { run_at: checkDate('runAt', input.runAt).toISOString() } : {}),
		...(input.delayMs !== undefined ? { delay: `${checkFinite('delayMs', input.delayMs)! / 1000} seconds` } : {}),
	};
}

/** Bytes as base64, the way job_enqueue_many takes a payload inside its JSON items. */
function toBase64(bytes: Uint8Array): string {
	let text = '';
	for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
	return btoa(text);
}

function sameValue(a: unknown, b: unknown): boolean {
	if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
	if (
		a instanceof Uint8Array ||
		b instanceof Uint8Array ||
		(typeof a === 'object' && a !== null) ||
		(typeof b === 'object' && b !== null)
	) {
		return JSON.stringify(a) === JSON.stringify(b);
	}
	return Object.is(a, b);
}

/** Waits `ms`, or until `signal` aborts. Holds nothing but a timer. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<'elapsed' | 'aborted'> {
	if (signal?.aborted) return Promise.resolve('aborted');
	return new Promise((resolve) => {
		const onAbort = () => {
			clearTimeout(timer);
			resolve('aborted');
		};
		const timer = setTimeout(
			() => {
				signal?.removeEventListener('abort', onAbort);
				resolve('elapsed');
			},
			Math.max(0, ms),
		);
		signal?.addEventListener('abort', onAbort, { once: true });
	});
}

/** Ids per job_get_many call (the function's limit is list_max(), 1,000). */
const READS_PER_CALL = 500;

/**
 * Long work with a status: a row the interface reads, written only through
 * the job_* SQL functions. `P` is the params type of the jobs this store
 * handles; `R` the row type it hands back (the seed's model type parameter),
 * `Job<P>` unless narrowed.
 *
 * @example
 * ```ts
 * // The route: write the row, then send the task.
 * const store = new JobStore(postgresAdapter(sql), { staleAfterMs: 300_000 });
 * const job = await store.enqueue('extract', { params: { filename: file.name }, payload: await file.bytes() });
 * await queue.send({ jobId: job.id });
 *
 * // The worker: claim, work with nothing open, close the row.
 * const claimed = await store.claim(jobId);
 * if (!claimed) return; // not ours: someone else has it, or it does not exist
 * try {
 *   await store.succeed(claimed.id, { resultId: await readTender(claimed.payload), attempt: claimed.attempts });
 * } catch (e) {
 *   if (e instanceof UnsupportedFormat) await store.fail(claimed.id, `I could not read the file: ${e.message}`);
 *   else throw e;
 * }
 *
 * // The screen: follow it to the end.
 * for await (const job of store.watch(jobId, { emitOn: ['status', 'progress', 'stage'] })) render(job);
 * ```
 */
export class JobStore<P extends JobParams = JobParams, R extends Job<P> = Job<P>> {
	/** The transport every call goes through. */
	readonly adapter: JobAdapter;
	/** The job table this store reads and writes. */
	readonly table: string;
	/** Seconds of silence before {@link reclaimStale} readmits a running job; undefined when not configured. */
	readonly staleAfter: number | undefined;
	/** The same threshold in milliseconds. */
	readonly staleAfterMs: number | undefined;

	/**
	 * @example
	 * ```ts
	 * const store = new JobStore(supabaseAdapter(supabase));
	 * const worker = new JobStore(postgresAdapter(sql), { table: 'exports', staleAfterMs: 300_000 });
	 * ```
	 */
	constructor(adapter: JobAdapter, options: JobStoreOptions = {}) {
		if (options.staleAfter !== undefined && !(Number.isFinite(options.staleAfter) && options.staleAfter > 0)) {
			throw new RangeError(`staleAfter must be a positive number of seconds; got ${String(options.staleAfter)}`);
		}
		if (options.staleAfterMs !== undefined && !(Number.isFinite(options.staleAfterMs) && options.staleAfterMs > 0)) {
			throw new RangeError(
				`staleAfterMs must be a positive number of milliseconds; got ${String(options.staleAfterMs)}`,
			);
		}
		if (options.staleAfter !== undefined && options.staleAfterMs !== undefined) {
			throw new RangeError('give staleAfterMs (milliseconds) or the deprecated staleAfter (seconds), not both');
		}
		this.adapter = adapter;
		this.table = options.table ?? 'jobs';
		this.staleAfterMs =
			options.staleAfterMs ?? (options.staleAfter === undefined ? undefined : options.staleAfter * 1000);
		this.staleAfter = this.staleAfterMs === undefined ? undefined : this.staleAfterMs / 1000;
	}

	private call<F extends JobFunctionName>(fn: F, args: JobCallArgs<F>) {
		return this.adapter.call(fn, { ...args, job_table: this.table } as JobCallArgs<F>);
	}

	private async rows<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<RawRow[]> {
		const rows = await this.call(fn, args);
		if (!Array.isArray(rows)) throw new UnexpectedRowError(`${fn} returned ${typeof rows}, not rows`);
		return rows as RawRow[];
	}

	private async one<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<R> {
		const [row] = await this.rows(fn, args);
		if (!row) throw new UnexpectedRowError(`${fn} returned no row`);
		return parseJobRow(row) as R;
	}

	private async maybeOne<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<R | null> {
		const [row] = await this.rows(fn, args);
		return row ? (parseJobRow(row) as R) : null;
	}

	/** Reads asked for in the current turn of the event loop, by id: sent together at its end. */
	private pendingReads: Map<string, { resolve: (job: R) => void; reject: (e: unknown) => void }[]> | null = null;

	/**
	 * `get`, gathered: the reads of every watch started (or caught up) in the
	 * same turn of the event loop go in one `job_get_many` call, so a screen
	 * opening 100 watches makes one request, not 100. A lone read is a plain
	 * `job_get`; if the batch call fails, each read is made alone, so the
	 * errors are exactly those of `get`.
	 */
	private getGathered(id: string): Promise<R> {
		if (!JobStore.known(id)) return Promise.reject(JobStore.notFound(id));
		return new Promise<R>((resolve, reject) => {
			let batch = this.pendingReads;
			if (!batch) {
				const created = (batch = this.pendingReads = new Map());
				setTimeout(() => void this.flushReads(created), 0);
			}
			const waiting = batch.get(id);
			if (waiting) waiting.push({ resolve, reject });
			else batch.set(id, [{ resolve, reject }]);
		});
	}

	private async flushReads(batch: NonNullable<JobStore<P, R>['pendingReads']>): Promise<void> {
		if (this.pendingReads === batch) this.pendingReads = null;
		const settle = (id: string, read: Promise<R>) =>
			read.then(
				(job) => batch.get(id)!.forEach((w) => w.resolve(job)),
				(e: unknown) => batch.get(id)!.forEach((w) => w.reject(e)),
			);
		const ids = [...batch.keys()];
		if (ids.length === 1) return void (await settle(ids[0]!, this.get(ids[0]!)));
		for (let from = 0; from < ids.length; from += READS_PER_CALL) {
			const chunk = ids.slice(from, from + READS_PER_CALL);
			let rows: RawRow[];
			try {
				rows = await this.rows('job_get_many', { ids: chunk });
			} catch {
				await Promise.all(chunk.map((id) => settle(id, this.get(id))));
				continue;
			}
			const byId = new Map(rows.map((row) => [String(row.id), row]));
			for (const id of chunk) {
				const row = byId.get(id);
				await settle(
					id,
					row ? Promise.resolve().then(() => parseJobRow(row) as R) : Promise.reject(JobStore.notFound(id)),
				);
			}
		}
	}

	/** A malformed id names no job: the store answers as it would for an unknown one, without a round trip. */
	private static known(id: string): boolean {
		return typeof id === 'string' && UUID.test(id);
	}

	private static notFound(id: string): JobNotFoundError {
		return new JobNotFoundError(`job ${String(id)} not found`);
	}

	/**
	 * Writes a queued job row and returns it (payload omitted). Write the row,
	 * then send the task: the row is what the interface reads, and it has to
	 * exist before a worker can claim it. With a declared kind, params are
	 * checked against its schema first: bad params throw
	 * {@link InvalidJobInputError} naming the field, and nothing is written.
	 *
	 * @example
	 * ```ts
	 * const job = await store.enqueue(extract, { params: { filename: 'tender.pdf' }, payload: bytes });
	 * return { jobId: job.id };
	 * ```
	 */
	enqueue<K extends JobKind>(
		kind: K,
		input: EnqueueInput<JobKindInput<K>> & { idempotencyKey: string },
	): Promise<Enqueued<Job<JobKindParams<K>>>>;
	enqueue<K extends JobKind>(kind: K, input: EnqueueInput<JobKindInput<K>>): Promise<Job<JobKindParams<K>>>;
	enqueue(kind: string, input: EnqueueInput<P> & { idempotencyKey: string }): Promise<Enqueued<R>>;
	enqueue(kind: string, input?: EnqueueInput<P>): Promise<R>;
	async enqueue(kind: string | JobKind, input: EnqueueInput<unknown> = {}): Promise<Job | Enqueued<Job>> {
		const params = paramsFor(kind, input.params);
		const payload = payloadBytes(input.payload);
		const args = {
			kind: kindName(kind),
			params,
			payload,
			max_attempts: checkInt('max_attempts', input.maxAttempts),
			locale: input.locale,
			owner_id: input.ownerId,
			...startArgs(input),
			tags: checkTags('tags', input.tags),
			priority: checkInt('priority', input.priority),
			expire_after:
				input.expireAfterMs === undefined
					? undefined
					: `${checkPositive('expireAfterMs', input.expireAfterMs) / 1000} seconds`,
			concurrency_key: input.concurrencyKey,
		};
		if (input.idempotencyKey === undefined) return await this.one('job_enqueue', args);
		const ttl = input.idempotencyTtlMs;
		if (ttl !== undefined && !(Number.isFinite(ttl) && ttl >= 0))
			throw invalid(
				'idempotencyTtlMs',
				`idempotencyTtlMs must be a finite number of milliseconds >= 0; got ${String(ttl)}`,
			);
		const [row] = await this.call('job_enqueue_once', {
			...args,
			idempotency_key: input.idempotencyKey,
			key_ttl: ttl === undefined ? undefined : `${ttl / 1000} seconds`,
		});
		if (!row) throw new UnexpectedRowError('job_enqueue_once returned no row');
		return { ...parseJobRow(row.job as RawRow), existing: row.existing === true };
	}

	/**
	 * Moves the start of a queued job (its owner or a worker): to `runAt`, or
	 * `delayMs` from now, or now. Refused once it started or finished
	 * ({@link JobAlreadyFinishedError}) or was cancelled ({@link JobCancelledError}).
	 *
	 * @example
	 * ```ts
	 * await store.reschedule(job.id, { delayMs: 15 * 60_000 }); // in a quarter of an hour
	 * ```
	 */
	async reschedule(id: string, options: RescheduleOptions = {}): Promise<R> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		return await this.one('job_reschedule', { id, ...startArgs(options) });
	}

	/**
	 * Writes many queued jobs of one kind in ONE statement and one round trip,
	 * all or nothing, and returns them in order (payload omitted). Each item is
	 * what {@link enqueue} takes; a declared kind checks every item's params
	 * first. A bad item throws {@link InvalidJobInputError} naming it
	 * (`items[3].params`), and nothing is written. The insert sends one NOTIFY,
	 * one wake-up and one list message per owner, whatever the number of jobs.
	 *
	 * @example
	 * ```ts
	 * const jobs = await store.enqueueMany(thumbnail, files.map((f) => ({ params: { path: f.path } })));
	 * ```
	 */
	enqueueMany<K extends JobKind>(
		kind: K,
		items: readonly EnqueueInput<JobKindInput<K>>[],
	): Promise<Job<JobKindParams<K>>[]>;
	enqueueMany(kind: string, items: readonly EnqueueInput<P>[]): Promise<R[]>;
	async enqueueMany(kind: string | JobKind, items: readonly EnqueueInput<unknown>[]): Promise<Job[]> {
		if (!Array.isArray(items) || items.length === 0)
			throw invalid('items', 'items must be a non-empty array of { params, payload, maxAttempts, locale, ownerId }');
		const rows = items.map((input, i) => {
			let params: JobParams | undefined;
			try {
				params = paramsFor(kind, input.params);
				checkInt('max_attempts', input.maxAttempts);
				if (input.idempotencyKey !== undefined)
					throw invalid('idempotencyKey', 'enqueueMany takes no idempotencyKey: enqueue each keyed job alone');
			} catch (e) {
				if (e instanceof InvalidJobInputError) {
					const field = `items[${i}].${e.field ?? 'params'}`;
					throw new InvalidJobInputError(`items[${i}]: ${e.message}`, { field, details: `field=${field}`, cause: e });
				}
				throw e;
			}
			const payload = payloadBytes(input.payload);
			return {
				params: params ?? {},
				...(payload ? { payload: toBase64(payload) } : {}),
				...(input.maxAttempts !== undefined ? { max_attempts: input.maxAttempts } : {}),
				...(input.locale !== undefined ? { locale: input.locale } : {}),
				...(input.ownerId !== undefined ? { owner_id: input.ownerId } : {}),
				...(input.runAt !== undefined ? { run_at: checkDate('runAt', input.runAt).toISOString() } : {}),
				...(input.delayMs !== undefined ? { delay_ms: checkFinite('delayMs', input.delayMs) } : {}),
				...(input.tags !== undefined ? { tags: checkTags('tags', input.tags) } : {}),
				...(input.priority !== undefined ? { priority: checkInt('priority', input.priority) } : {}),
				...(input.expireAfterMs !== undefined
					? { expire_after_ms: checkPositive('expireAfterMs', input.expireAfterMs) }
					: {}),
				...(input.concurrencyKey !== undefined ? { concurrency_key: input.concurrencyKey } : {}),
			};
		});
		const out = await this.rows('job_enqueue_many', { kind: kindName(kind), items: rows });
		return out.map((r) => parseJobRow(r));
	}

	/**
	 * queued -> running for one job, returning the row with its payload. Null
	 * when the job is not yours: another worker claimed it, it does not exist,
	 * or it is not available yet. Two workers racing for one id cannot both win.
	 *
	 * @example
	 * ```ts
	 * const job = await store.claim(jobId);
	 * if (job === null) return;
	 * ```
	 */
	async claim(id: string, options: ClaimOptions = {}): Promise<R | null> {
		const heartbeatMs = checkInt('heartbeatMs', options.heartbeatMs);
		if (!JobStore.known(id)) return null;
		return this.fence(await this.maybeOne('job_claim', { id, heartbeat_ms: heartbeatMs }));
	}

	/**
	 * Attempts this store claimed, by job id: a worker that closes or ticks a
	 * job without naming its attempt (the seed's bare `claim` -> `succeed`)
	 * is fenced all the same, so a run whose job was reclaimed can never close
	 * the attempt that owns it now. Forgotten when the job is closed.
	 */
	private readonly claimedAttempts = new Map<string, number>();

	private fence<J extends R | null>(job: J): J {
		if (job) this.claimedAttempts.set(job.id, job.attempts);
		return job;
	}

	private attemptOf(id: string, given: number | undefined): number | undefined {
		return checkInt('attempt', given) ?? this.claimedAttempts.get(id);
	}

	private closed<J>(id: string, result: Promise<J>): Promise<J> {
		return result.finally(() => this.claimedAttempts.delete(id));
	}

	/**
	 * Claims up to `limit` queued jobs of the given kinds, oldest first, skipping
	 * rows other workers hold. `[]` when there is nothing to do.
	 *
	 * @example
	 * ```ts
	 * for (const job of await store.claimNext({ kinds: ['extract'], limit: 4 })) void run(job);
	 * ```
	 */
	async claimNext(options: ClaimNextOptions = {}): Promise<R[]> {
		const rows = await this.rows('job_claim_next', {
			kinds: options.kinds?.map(kindName),
			limit: checkInt('limit', options.limit),
			heartbeat_ms: checkInt('heartbeatMs', options.heartbeatMs),
		});
		return rows.map((r) => this.fence(parseJobRow(r) as R));
	}

	/**
	 * running -> done, recording what the work produced and dropping the
	 * payload. Refuses to land on top of a cancellation ({@link JobCancelledError}),
	 * on a job another attempt or worker closed ({@link JobAlreadyFinishedError}),
	 * on a queued job ({@link JobNotRunningError}); unknown ids throw {@link JobNotFoundError}.
	 *
	 * @example
	 * ```ts
	 * await store.succeed(job.id, { resultId: draft.id, attempt: job.attempts });
	 * ```
	 */
	async succeed(id: string, options: SucceedOptions = {}): Promise<R> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		const resultId = options.resultId ?? undefined;
		// job_succeed would answer 22P02 after the round trip; name the field instead.
		if (resultId !== undefined && !(typeof resultId === 'string' && UUID.test(resultId)))
			throw invalid(
				'resultId',
				`resultId must be a UUID (the id of the row the work produced); got ${JSON.stringify(resultId)}`,
			);
		return await this.closed(
			id,
			this.one('job_succeed', {
				id,
				result_id: resultId,
				attempt: this.attemptOf(id, options.attempt),
				timings: options.timings ?? undefined,
			}),
		);
	}

	/**
	 * running -> done for many jobs in ONE statement, each with its own
	 * result and timings (and its own broadcast). Returns the rows that landed;
	 * a job missing from the answer was not closable (cancelled, reclaimed,
	 * finished): {@link succeed} it alone to learn why.
	 *
	 * @example
	 * ```ts
	 * const closed = await store.succeedMany(done.map((j) => ({ id: j.id, attempt: j.attempts })));
	 * ```
	 */
	async succeedMany(items: readonly (SucceedOptions & { id: string })[]): Promise<R[]> {
		return (await this.succeedManyRows(items)).map((r) => parseJobRow(r) as R);
	}

	/**
	 * As {@link succeedMany}, returning only the ids it closed: the Node
	 * runner's batched close reads nothing else, and parsing every closed row
	 * was a good share of its CPU per job.
	 *
	 * @internal
	 * @example
	 * ```ts
	 * const closed = await store.succeedManyIds(done.map((j) => ({ id: j.id, attempt: j.attempts })));
	 * ```
	 */
	async succeedManyIds(items: readonly (SucceedOptions & { id: string })[]): Promise<Set<string>> {
		const rows = await this.succeedManyRows(items);
		return new Set(rows.map((r) => String(r.id)));
	}

	private async succeedManyRows(items: readonly (SucceedOptions & { id: string })[]): Promise<RawRow[]> {
		const wanted = items.filter((item) => JobStore.known(item.id));
		if (wanted.length === 0) return [];
		const args = wanted.map((item) => ({
			id: item.id,
			attempt: this.attemptOf(item.id, item.attempt) ?? null,
			result_id: item.resultId ?? null,
			timings: item.timings ?? null,
		}));
		for (const item of wanted) this.claimedAttempts.delete(item.id);
		return await this.rows('job_succeed_many', { items: args });
	}

	/**
	 * running -> failed, with `error` written for the user (in their language,
	 * not a traceback). Same refusals as {@link succeed}. A sentence over the
	 * 2,000-character limit is shortened by the database (ending in `…`), never refused: the
	 * seed's own `fail(id, \`...${e.message}\`)` must close the row whatever the exception says.
	 *
	 * @example
	 * ```ts
	 * await store.fail(job.id, `I could not read the file: ${e.message}`, { errorCode: 'unsupported_format' });
	 * ```
	 */
	async fail(id: string, error: string, options: FailOptions = {}): Promise<R> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		return await this.closed(
			id,
			this.one('job_fail', {
				id,
				error,
				attempt: this.attemptOf(id, options.attempt),
				error_code: options.errorCode,
				timings: options.timings ?? undefined,
			}),
		);
	}

	/**
	 * After an unexpected failure: back to queued, claimable again after
	 * `delaySeconds`; closed as failed (error_code `attempts_exhausted`) once
	 * `maxAttempts` is spent. `error` is the sentence shown if the retries run out.
	 *
	 * @example
	 * ```ts
	 * await store.retry(job.id, 'The reading service did not answer.', { delaySeconds: 2 ** job.attempts });
	 * ```
	 */
	async retry(id: string, error: string, options: RetryOptions = {}): Promise<R> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		const delay = checkFinite('delay', options.delaySeconds);
		return await this.closed(
			id,
			this.one('job_retry', {
				id,
				error,
				delay: delay === undefined ? undefined : `${delay} seconds`,
				attempt: this.attemptOf(id, options.attempt),
			}),
		);
	}

	/**
	 * Gives a running job back cleanly (graceful shutdown, a wall-clock limit
	 * coming): running -> queued without spending the attempt.
	 *
	 * @example
	 * ```ts
	 * addEventListener('beforeunload', () => void store.release(job.id, { attempt: job.attempts }));
	 * ```
	 */
	async release(id: string, options: AttemptOptions = {}): Promise<R> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		return await this.closed(id, this.one('job_release', { id, attempt: this.attemptOf(id, options.attempt) }));
	}

	/**
	 * Asks a job to stop: queued/running -> cancelled, answered at once; the
	 * worker learns it on its next tick. Idempotent on purpose: null — not an
	 * error — when there is nothing to stop (unknown id, already done, failed or
	 * cancelled), because double clicks and clicks just as the job finished are normal.
	 * A reason over the sentence limit is shortened, so it cannot turn that null into an error.
	 *
	 * @example
	 * ```ts
	 * const stopped = (await store.cancel(id, { reason: 'Cancelled by the user.' })) !== null;
	 * ```
	 */
	async cancel(id: string, options: CancelOptions = {}): Promise<R | null> {
		if (!JobStore.known(id)) return null;
		return await this.maybeOne('job_cancel', { id, reason: options.reason });
	}

	/**
	 * A running job enqueues a child (from its handler: see `ctx.enqueueChild`):
	 * a queued job of the same table, owned by the parent's owner, in its
	 * language unless `locale` says otherwise. Cancelling the parent cancels it;
	 * `expectedSeconds` weighs it in the parent's progress. Refused for a parent
	 * that is not running ({@link JobAlreadyFinishedError}) or unknown
	 * ({@link JobNotFoundError}); workers only.
	 *
	 * @example
	 * ```ts
	 * const part = await store.enqueueChild(job.id, exportPart, { params: { page: 1 }, expectedSeconds: 30 });
	 * ```
	 */
	enqueueChild<K extends JobKind>(
		parentId: string,
		kind: K,
		input?: ChildInput<JobKindInput<K>>,
	): Promise<Job<JobKindParams<K>>>;
	enqueueChild(parentId: string, kind: string, input?: ChildInput<P>): Promise<R>;
	async enqueueChild(parentId: string, kind: string | JobKind, input: ChildInput<unknown> = {}): Promise<Job> {
		if (!JobStore.known(parentId)) throw JobStore.notFound(parentId);
		const params = paramsFor(kind, input.params);
		const expected = input.expectedSeconds;
		if (expected !== undefined && !(Number.isFinite(expected) && expected > 0))
			throw invalid('expectedSeconds', `expectedSeconds must be a positive number; got ${String(expected)}`);
		const payload = payloadBytes(input.payload);
		return await this.one('job_enqueue_child', {
			parent_id: parentId,
			kind: kindName(kind),
			params,
			payload,
			max_attempts: checkInt('max_attempts', input.maxAttempts),
			locale: input.locale,
			expected_seconds: expected,
			priority: checkInt('priority', input.priority),
			tags: checkTags('tags', input.tags),
			concurrency_key: input.concurrencyKey,
			owner_id: input.ownerId,
		});
	}

	/**
	 * A job's children, oldest first (payload omitted); `[]` when it has none.
	 * A user sees the children of their own jobs only.
	 *
	 * @example
	 * ```ts
	 * const failed = (await store.children(job.id)).filter((c) => c.status === 'failed');
	 * ```
	 */
	async children(parentId: string): Promise<R[]> {
		if (!JobStore.known(parentId)) throw JobStore.notFound(parentId);
		return (await this.rows('job_children', { parent_id: parentId })).map((r) => parseJobRow(r) as R);
	}

	/**
	 * Parks a running parent until its children have ended: `'waiting'` when
	 * it did (the worker's slot is free; the last child to end queues it again
	 * and it is claimed like any job), `'running'` when no child is left to
	 * wait for (nothing changed). The worker calls it through `ctx.waitForChildren()`.
	 *
	 * @example
	 * ```ts
	 * if ((await store.waitForChildren(job.id, { attempt: job.attempts })) === 'waiting') return;
	 * ```
	 */
	async waitForChildren(id: string, options: AttemptOptions = {}): Promise<'waiting' | 'running'> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		const status = await this.call('job_wait_for_children', { id, attempt: this.attemptOf(id, options.attempt) });
		if (status !== 'waiting' && status !== 'running')
			throw new UnexpectedRowError(`job_wait_for_children returned ${JSON.stringify(status)}`);
		return status;
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
	 * ```ts
	 * for await (const children of store.watchChildren(job.id, { signal })) render(children);
	 * ```
	 */
	async *watchChildren(parentId: string, options: WatchChildrenOptions = {}): AsyncGenerator<R[], void, undefined> {
		if (!JobStore.known(parentId)) throw JobStore.notFound(parentId);
		const intervalMs = options.intervalMs ?? 2000;
		checkTimerMs('intervalMs', intervalMs);
		yield* followChildren<R>({
			parentId,
			read: () => this.children(parentId),
			// Children share their parent's owner: jobs:<owner>, or the parent's job:<id> when ownerless.
			topic: async (children) => {
				const owner = (children[0] ?? (await this.get(parentId))).ownerId;
				return owner === null ? `job:${parentId}` : `jobs:${owner}`;
			},
			realtime: options.transport === 'poll' ? undefined : this.adapter.realtime,
			intervalMs,
			signal: options.signal,
		});
	}

	/**
	 * Why these queued jobs are not starting, for those held back by a
	 * concurrency limit ({@link setConcurrency}): which limit, and how many of
	 * the kind (or of the key) run. Jobs not held are absent from the map.
	 *
	 * @example
	 * ```ts
	 * const held = (await store.holdReasons([job.id])).get(job.id); // { heldBy: 'key', running: 1, maxRunning: 1, kind: 'export' }
	 * ```
	 */
	async holdReasons(ids: readonly string[]): Promise<Map<string, HoldReason>> {
		const known = ids.filter((id) => JobStore.known(id));
		if (known.length === 0) return new Map();
		const rows = await this.rows('job_hold_reasons', { ids: known });
		return new Map(
			rows.map((r) => [
				String(r.id),
				{
					kind: String(r.kind),
					heldBy: r.held_by === 'key' ? 'key' : 'kind',
					running: Number(r.running),
					maxRunning: Number(r.max_running),
				},
			]),
		);
	}

	/**
	 * One job (payload omitted). {@link JobNotFoundError} when it does not exist
	 * or is not the caller's to see.
	 *
	 * @example
	 * ```ts
	 * const job = await store.get(params.id);
	 * ```
	 */
	async get(id: string): Promise<R> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		return await this.one('job_get', { id });
	}

	/**
	 * Newest jobs first, filtered by kind and status(es), one page at a time.
	 * `{ jobs: [] }` when nothing matches: "no jobs yet" is an answer, not a 404.
	 *
	 * @example
	 * ```ts
	 * const recent = await store.listRecent({ kind: 'extract', limit: 20 });
	 * const inFlight = await store.listRecent({ kind: 'extract', statuses: ['queued', 'running'] });
	 * const next = recent.nextCursor && (await store.listRecent({ kind: 'extract', cursor: recent.nextCursor }));
	 * ```
	 */
	async listRecent(options: ListRecentOptions = {}): Promise<JobPage<R>> {
		const limit = checkInt('limit', options.limit) ?? 20;
		for (const s of [...(options.statuses ?? []), ...(options.status ? [options.status] : [])]) {
			if (!(JOB_STATUSES as readonly string[]).includes(s))
				throw invalid(options.status ? 'status' : 'statuses', `unknown job status ${String(s)}`);
		}
		const filter = {
			kind: options.kind === undefined ? undefined : kindName(options.kind),
			status: options.status,
			statuses: options.statuses,
			tags: checkTags('tags', options.tags),
		};
		// One row past the page says whether another page exists, so a count that is a
		// multiple of `limit` does not end on an empty page.
		const ask = limit >= 1 && limit < LIST_MAX ? limit + 1 : limit;
		const rows = await this.rows('job_list_recent', { ...filter, limit: ask, cursor: options.cursor ?? undefined });
		const page = rows.slice(0, limit);
		const last = page.at(-1);
		let more = rows.length > limit;
		if (!more && last && ask === limit && page.length === limit) {
			// At the SQL ceiling there is no extra row to ask for: one short read answers instead.
			more = (await this.rows('job_list_recent', { ...filter, limit: 1, cursor: cursorOf(last) })).length > 0;
		}
		return { jobs: page.map((r) => parseJobRow(r) as R), nextCursor: more && last ? cursorOf(last) : null };
	}

	/**
	 * One round trip per progress report: writes progress/stage/heartbeat on a
	 * running job and returns its status. The tick that writes progress is the
	 * one that asks whether the user cancelled: anything but `'running'` coming
	 * back means stop. This is the `Ticker` a ProgressTracker reports to.
	 *
	 * @example
	 * ```ts
	 * if ((await store.tick(job.id, { progress: 40, stage: 'table', attempt: job.attempts })) !== 'running') return;
	 * ```
	 */
	async tick(id: string, update: TickInput = {}): Promise<JobStatusValue> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		const status = await this.call('job_tick', {
			id,
			progress: checkFinite('progress', update.progress),
			stage: update.stage,
			attempt: this.attemptOf(id, update.attempt),
			eta_seconds: checkFinite('etaSeconds', update.etaSeconds),
		});
		if (typeof status !== 'string' || !(JOB_STATUSES as readonly string[]).includes(status)) {
			throw new UnexpectedRowError(`job_tick returned ${JSON.stringify(status)}, not a job status`);
		}
		return status as JobStatusValue;
	}

	/**
	 * The job's status alone, without writing anything: what a progress tick
	 * asks when the bar did not move, so a cancel is learned on every interval
	 * without an UPDATE per interval. With `attempt`, a running job that a
	 * reclaim handed to another attempt throws {@link JobAlreadyFinishedError},
	 * as {@link tick} would.
	 *
	 * @example
	 * ```ts
	 * if ((await store.readStatus(job.id, { attempt: job.attempts })) !== 'running') return;
	 * ```
	 */
	async readStatus(id: string, options: AttemptOptions = {}): Promise<JobStatusValue> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		// job_get_status: a primary-key read of one column (PT409 once another attempt owns the job).
		const status = await this.call('job_get_status', { id, attempt: this.attemptOf(id, options.attempt) });
		if (typeof status !== 'string' || !(JOB_STATUSES as readonly string[]).includes(status)) {
			throw new UnexpectedRowError(`job_get_status returned ${JSON.stringify(status)}, not a job status`);
		}
		return status as JobStatusValue;
	}

	/**
	 * How many of the same owner's queued jobs (in this table) will be claimed
	 * before this queued one; null once it is not queued. Counts only the
	 * owner's own jobs, so it tells a user nothing about anyone else's queue.
	 * Unknown ids (or another user's job) throw {@link JobNotFoundError}.
	 *
	 * @example
	 * ```ts
	 * const ahead = await store.queuePosition(job.id); // 2: "2 of your jobs are ahead of this one"
	 * ```
	 */
	async queuePosition(id: string): Promise<number | null> {
		if (!JobStore.known(id)) throw JobStore.notFound(id);
		const ahead = await this.call('job_queue_position', { id });
		if (ahead === null) return null;
		if (typeof ahead !== 'number' || !Number.isInteger(ahead) || ahead < 0) {
			throw new UnexpectedRowError(`job_queue_position returned ${JSON.stringify(ahead)}, not a count`);
		}
		return ahead;
	}

	/**
	 * Readmits running jobs whose worker went silent for `staleAfterMs`:
	 * back to queued, or failed with a sentence for the user once their
	 * max_attempts are spent (a job that kills its worker is not readmitted
	 * forever). Without `staleAfter` it refuses with
	 * {@link StaleAfterRequiredError} before touching the database, rather than guess.
	 *
	 * @example
	 * ```ts
	 * const store = new JobStore(postgresAdapter(sql), { staleAfterMs: 300_000 });
	 * setInterval(() => void store.reclaimStale(), 60_000);
	 * ```
	 */
	async reclaimStale(): Promise<R[]> {
		if (this.staleAfterMs === undefined) {
			throw new StaleAfterRequiredError(
				'reclaimStale refuses without staleAfterMs: create the JobStore with { staleAfterMs: <milliseconds> } rather than let it guess when a worker is dead',
				{ details: 'field=stale_after' },
			);
		}
		const rows = await this.rows('job_reclaim_stale', { stale_after: `${this.staleAfterMs / 1000} seconds` });
		return rows.map((r) => parseJobRow(r) as R);
	}

	/**
	 * Limits how many jobs of a kind run at once in this store's table,
	 * enforced where jobs are claimed (racing workers included): a job over the
	 * limit waits queued until a slot frees. Both omitted: no limit. Service role.
	 *
	 * @example
	 * ```ts
	 * await store.setConcurrency(exportKind, { maxRunningPerKey: 1 }); // one export per concurrencyKey
	 * ```
	 */
	async setConcurrency(kind: string | JobKind, limits: ConcurrencyLimits): Promise<void> {
		await this.call('job_set_concurrency', {
			kind: kindName(kind),
			max_running: checkInt('maxRunning', limits.maxRunning),
			max_running_per_key: checkInt('maxRunningPerKey', limits.maxRunningPerKey),
		});
	}

	/**
	 * Makes the recurring schedules of this store's table exactly these (added,
	 * changed and removed at once), with one pg_cron entry each. Each run is a
	 * job enqueued once per minute slot; slots missed while the database or
	 * pg_cron was down are skipped, not backfilled. Service role only.
	 *
	 * @example
	 * ```ts
	 * await store.syncSchedules([defineSchedule({ name: 'nightly-report', kind: 'report.build', cron: '0 2 * * *' })]);
	 * ```
	 */
	async syncSchedules(schedules: readonly JobSchedule[]): Promise<number> {
		const value = await this.call('job_sync_schedules', {
			schedules: schedules.map((s) => ({ name: s.name, kind: s.kind, cron: s.cron, params: s.params })),
		});
		return Number(value);
	}

	/**
	 * Readmits running jobs whose worker broke the liveness contract it
	 * declared at claim (`heartbeatMs`): three beats missed in a row. Jobs
	 * claimed without a declared heartbeat are never touched, so nothing is
	 * guessed; this is what the reclaim schedule runs every minute.
	 *
	 * @example
	 * ```ts
	 * setInterval(() => void store.reclaimSilent(), 10_000);
	 * ```
	 */
	async reclaimSilent(): Promise<R[]> {
		const rows = await this.rows('job_reclaim_silent', {});
		return rows.map((r) => parseJobRow(r) as R);
	}

	/**
	 * A predicate for `runCancellable`: resolves true once the job is no longer
	 * running (cancelled, reclaimed, finished or gone), so the work in flight is
	 * abandoned. Each call is one short read.
	 *
	 * @example
	 * ```ts
	 * const summary = await runCancellable((signal) => summarize(text, signal), {
	 *   interrupted: store.cancellationWatch(job.id),
	 * });
	 * ```
	 */
	cancellationWatch(id: string): () => Promise<boolean> {
		return async () => {
			try {
				return (await this.readStatus(id)) !== 'running';
			} catch (e) {
				if (isJobNotFoundError(e)) return true;
				throw e;
			}
		};
	}

	/**
	 * Follows a job: yields its current state at once (a late subscriber to a
	 * finished job gets exactly one value), then one value per change of the
	 * `emitOn` fields, and ends after the terminal state. `timeoutMs` gives up
	 * with {@link TimeoutError}; `signal` ends the watch quietly. Unknown ids
	 * (or another user's job) throw {@link JobNotFoundError}.
	 *
	 * Over an adapter with Realtime (supabase-js) it listens on the job's
	 * private topic: no query per tick while joined, one read after each
	 * (re)join (changes before a join are lost) and one read of the terminal
	 * row. Where Realtime is refused, unreachable or down it polls every
	 * `intervalMs`, so the terminal state is never missed. Over postgres.js it
	 * polls; no connection or transaction is held between polls, so the worker
	 * writing the row is never blocked by the screen watching it.
	 *
	 * @example
	 * ```ts
	 * for await (const job of store.watch(id, { intervalMs: 2000, emitOn: ['status', 'progress', 'stage'], signal })) {
	 *   bar.set(job.progress, job.stage);
	 * }
	 * ```
	 */
	async *watch(id: string, options: WatchOptions = {}): AsyncGenerator<R, void, undefined> {
		const intervalMs = options.intervalMs ?? 2000;
		checkTimerMs('intervalMs', intervalMs);
		checkTimerMs('timeoutMs', options.timeoutMs);
		const emitOn = options.emitOn ?? ['status'];
		const { signal, timeoutMs } = options;
		const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
		const timeout = (last: R) =>
			new TimeoutError(`job ${id} was still ${last.status} after ${timeoutMs} ms`, {
				details: `status=${last.status}`,
			});
		// A worker going silent (or back) is always news, whatever emitOn says.
		const changed = (a: R, b: R) =>
			a.workerSilent !== b.workerSilent || emitOn.some((field) => !sameValue(a[field], b[field]));
		if (signal?.aborted) return;
		const liveness = new Liveness();
		const realtime = options.transport === 'poll' ? undefined : this.adapter.realtime;
		// Over Realtime, reads are gathered: many watches started together make one request.
		const read = () => (realtime ? this.getGathered(id) : this.get(id));
		// The first read survives an outage as the later ones do: a failure that is
		// not a job error (the network, a database restarting) is tried again every
		// intervalMs until the deadline; a job error (unknown id, permission) ends it.
		const readFirst = async (): Promise<R> => {
			for (;;) {
				try {
					return await beforeDeadline(
						read(),
						deadline,
						() => new TimeoutError(`job ${id}: no answer to the first read within ${timeoutMs} ms`),
					);
				} catch (e) {
					if (isJobError(e) || Date.now() >= deadline) throw e;
					if ((await pause(Math.min(intervalMs, deadline - Date.now()), signal)) === 'aborted') throw e;
				}
			}
		};
		// A signed-in user follows their own list topic (one channel for all their
		// watches), joined before the first read: once that topic is live, a new
		// watch costs one read and no join.
		const uid = realtime ? await realtime.userId().catch(() => null) : null;
		let last: R;
		if (realtime && uid !== null) {
			const notOwned = yield* followTopic<R>({
				id,
				table: this.table,
				topic: `jobs:${uid}`,
				readFirst,
				accept: (first) => first.ownerId === uid,
				read,
				realtime,
				changed,
				liveness,
				intervalMs,
				deadline,
				timeout,
				signal,
				onRealtime: options.onRealtime,
			});
			if (notOwned === undefined) return;
			last = notOwned;
		} else {
			last = await readFirst();
		}
		if (signal?.aborted) return;
		last = liveness.judge(last);
		yield last;
		if (isTerminalStatus(last.status)) return;

		if (realtime) {
			// Someone else's job (an admin, a service): the one topic its changes go to.
			yield* followTopic<R>({
				id,
				table: this.table,
				topic: jobTopic(last),
				first: last,
				read,
				realtime,
				changed,
				liveness,
				intervalMs,
				deadline,
				timeout,
				signal,
				onRealtime: options.onRealtime,
			});
			return;
		}
		let current = last;
		while (!isTerminalStatus(last.status)) {
			const remaining = deadline - Date.now();
			if (remaining <= 0) throw timeout(last);
			// Read again when the declared beats are due, if that comes before the next poll.
			const checkIn = current.workerSilent ? intervalMs : liveness.silentAt(current) - Date.now();
			if ((await pause(Math.min(intervalMs, remaining, Math.max(0, checkIn)), signal)) === 'aborted') return;
			if (Date.now() >= deadline) throw timeout(last);
			current = liveness.judge(await beforeDeadline(this.get(id), deadline, () => timeout(last)));
			if (signal?.aborted) return;
			if (isTerminalStatus(current.status) || changed(last, current)) {
				last = current;
				yield current;
			}
		}
	}

	/**
	 * Pushes changes of the caller's jobs in this store's table (a "queued or
	 * running" strip, a recent-jobs list) to `onChange`, and returns the
	 * function that stops it. Over Realtime it listens on the owner's private
	 * topic `jobs:<owner_id>`: each committed change of status, progress or
	 * stage arrives as a {@link JobSummary}, with no query at all; after each
	 * (re)join `onChange()` is called without a job to say "read the list
	 * again". Without Realtime (postgres.js, join refused, connection lost)
	 * `onChange()` is called every `intervalMs` instead. It is the
	 * `subscribe` of the Svelte layer's `JobListSource`.
	 *
	 * @example
	 * ```ts
	 * const source: JobListSource = {
	 *   listRecent: (opts) => store.listRecent(opts),
	 *   subscribe: (onChange) => store.subscribeList({ onChange }),
	 * };
	 * const inFlight = JobList.create(source, { kind: 'extract', statuses: ['queued', 'running'] });
	 * ```
	 */
	subscribeList(options: SubscribeListOptions): () => void {
		const intervalMs = options.intervalMs ?? 2000;
		checkTimerMs('intervalMs', intervalMs);
		const label = tableLabel(this.table);
		const wantedTags = checkTags('tags', options.tags) ?? [];
		const realtime = this.adapter.realtime;
		let stopped = false;
		let poller: ReturnType<typeof setInterval> | null = null;
		let subscription: { close(): void } | null = null;
		const notify = (job?: JobSummary) => {
			if (!stopped) options.onChange(job);
		};
		const poll = (on: boolean) => {
			if (on && poller === null && !stopped) poller = setInterval(() => notify(), intervalMs);
			if (!on && poller !== null) {
				clearInterval(poller);
				poller = null;
			}
		};

		if (!realtime) {
			poll(true);
		} else {
			void (async () => {
				let owner = options.ownerId ?? null;
				if (owner === null) {
					try {
						owner = await realtime.userId();
					} catch {
						owner = null;
					}
				}
				if (stopped) return;
				if (owner === null) {
					options.onRealtime?.('refused');
					poll(true);
					return;
				}
				subscription = realtime.subscribe(`jobs:${owner}`, {
					message: (row) => {
						const message = parseJobBroadcast(row);
						if (message && message.jobTable === label && hasTags(message.job.tags, wantedTags)) notify(message.job);
					},
					status: (status) => {
						if (stopped) return;
						options.onRealtime?.(status);
						poll(status !== 'live');
						// Joined again, lost, or refused: what changed meanwhile is unknown.
						notify();
					},
				});
				if (stopped) subscription.close();
				else poll(true); // until the join answers
			})();
		}
		return () => {
			stopped = true;
			poll(false);
			subscription?.close();
		};
	}

	/**
	 * Phase timings of the latest successful jobs of a kind, newest first: what
	 * `PhasePlan.fromHistory(store, kind)` fits medians and slopes from.
	 *
	 * @example
	 * ```ts
	 * const history = await store.phaseHistory('extract', 100);
	 * const plan = await PhasePlan.fromHistory(store, 'extract', { fallback: PLAN });
	 * ```
	 */
	async phaseHistory(kind: string | JobKind, limit = 50): Promise<PhaseTimings[]> {
		const rows = await this.call('job_phase_history', { kind: kindName(kind), limit: checkInt('limit', limit) });
		if (!Array.isArray(rows)) throw new UnexpectedRowError(`job_phase_history returned ${typeof rows}, not rows`);
		return rows.map((row) => {
			const timings = readTimings((row as RawRow).timings);
			if (timings === null) throw new UnexpectedRowError('job_phase_history returned a row without timings');
			return timings;
		});
	}
}
