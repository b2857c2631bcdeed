/**
 * The options and results of {@link JobStore}'s methods, by audience: the
 * producer (enqueue), the worker (claim, tick, close), the screen (reads and
 * watches) and the admin (reclaim, limits, schedules).
 */
import type { JobStatusValue } from '../state.ts';
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import type { JobTopicStatus } from './adapter.ts';
import type { JobKind } from './job-kind.ts';
import type { JobSummary } from './job-summary.ts';
import type { Job, JobParams, UnexpectedRowError } from './job.ts';

/**
 * Options of {@link JobStore}.
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
	 * Called for each row a listing (`listRecent`, `children`, reclaims,
	 * replays) cannot read as a job, e.g. a time written by raw SQL that no
	 * `Date` holds. The row is left out and the rest of the listing comes back;
	 * `error.jobId` names the job (`get(id)` of it throws the same error).
	 * @default a `console.warn` naming the job
	 */
	onUnreadableRow?: (error: UnexpectedRowError) => void;
}

/**
 * What {@link JobStore.enqueue} writes besides the kind.
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
	 * A double click or a retried form post never starts the work twice. In
	 * enqueueMany each item may carry its own (one key per batch item): the
	 * batch sent again returns the same ids and writes only what is missing.
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
 * `maxRunningPerKey`) is full, `running` of them running; an admin paused
 * its kind (`heldBy: 'paused'`, both counts 0); or its kind's rate limit is
 * spent (`heldBy: 'rate'`: `running` jobs started in the window, `maxRunning`
 * the starts it allows).
 */
export interface HoldReason {
	kind: string;
	heldBy: 'kind' | 'key' | 'paused' | 'rate';
	running: number;
	maxRunning: number;
}

/**
 * A rate limit of {@link JobStore.setRateLimit}: at most `starts` jobs of the
 * kind start in any `perMs` milliseconds (a sliding window).
 */
export interface RateLimit {
	/** Starts allowed per window, 1 to 100,000. */
	starts: number;
	/** The window, in milliseconds: 100 to 86,400,000 (a day). */
	perMs: number;
}

/** Statuses {@link JobStore.cancelMany} may cancel. */
export type UnfinishedStatus = 'queued' | 'running' | 'waiting';

/**
 * Which unfinished jobs {@link JobStore.cancelMany} cancels: those matching
 * every filter given (at least one is required: a bulk cancel never means
 * every job).
 */
export interface CancelManyFilter {
	/** Jobs of this kind. */
	kind?: string | JobKind;
	/** @default ['queued', 'running', 'waiting'] */
	statuses?: readonly UnfinishedStatus[];
	/** Enqueued at or after this time. */
	createdAfter?: Date;
	/** Enqueued before this time. */
	createdBefore?: Date;
	/** Jobs of this user. */
	ownerId?: string;
	/** The sentence each job's owner sees; the default cancellation sentence otherwise. */
	reason?: string;
	/** At most this many jobs per call (1 to 1,000), oldest first. @default 1000 */
	limit?: number;
}

/**
 * Which finished jobs {@link JobStore.deleteFinished} deletes: those that
 * finished before `endedBefore` and match the other filters given.
 */
export interface DeleteFinishedFilter {
	/** Finished before this time (required). */
	endedBefore: Date;
	/** Jobs of this kind. */
	kind?: string | JobKind;
	/** @default ['done', 'failed', 'cancelled'] */
	statuses?: readonly ('done' | 'failed' | 'cancelled')[];
	/** At most this many jobs per call (1 to 5,000), oldest first. @default 1000 */
	limit?: number;
}

/**
 * One kind of a job table as {@link JobStore.adminKinds} reads it for a
 * dashboard: its jobs by status, its last hour, and what holds it back.
 */
export interface KindOverview {
	kind: string;
	/** How many jobs of the kind the table holds, per status. */
	counts: Record<JobStatusValue, number>;
	/** Finished done in the last hour. */
	doneLastHour: number;
	/** Finished failed in the last hour. */
	failedLastHour: number;
	/** When an admin paused it; null when it is not paused. */
	pausedAt: Date | null;
	/** Its rate limit; null when it has none. */
	rateLimit: RateLimit | null;
	/** Its concurrency limits ({@link JobStore.setConcurrency}); null when unset. */
	maxRunning: number | null;
	maxRunningPerKey: number | null;
}

/**
 * Limits of {@link JobStore.setConcurrency}; omitted: no limit.
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
 */
export type Enqueued<J> = J & { readonly existing: boolean };

/**
 * Options of {@link JobStore.reschedule}: the new start, as a time or a delay from now.
 */
export interface RescheduleOptions {
	runAt?: Date;
	delayMs?: number;
}

/**
 * Options of {@link JobStore.claimNext}.
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
 */
export interface ClaimOptions {
	/** Milliseconds between the beats this worker promises (10 ms to 1 hour). */
	heartbeatMs?: number;
}

/**
 * Options of the calls a worker makes on a claimed job. `attempt` is the
 * `attempts` value of the row `claim` returned: with it the database refuses
 * the write (JobAlreadyFinishedError) once a reclaim handed the job to another attempt.
 */
export interface AttemptOptions {
	attempt?: number;
}

/**
 * Options of {@link JobStore.succeed}.
 */
export interface SucceedOptions extends AttemptOptions {
	/** The row the work produced, so the screen links straight to it. */
	resultId?: string | null;
	/** Phase timings recorded by the tracker (what PhasePlan.fromHistory fits). */
	timings?: PhaseTimings | null;
}

/**
 * Options of {@link JobStore.fail}.
 */
export interface FailOptions extends AttemptOptions {
	/** A stable snake_case code for the error. @default 'failed' */
	errorCode?: string;
	timings?: PhaseTimings | null;
	/**
	 * Trying again would fail the same way (an error its kind declares permanent): the row records
	 * it (`failedForGood`), try again refuses the job and replay skips it. The worker sets it for
	 * the codes of `defineJobKind({ permanentErrors })`. @default false
	 */
	permanent?: boolean;
}

/**
 * Options of {@link JobStore.retry}.
 */
export interface RetryOptions extends AttemptOptions {
	/** Not claimable again before this many seconds. @default 0 */
	delaySeconds?: number;
}

/**
 * Options of {@link JobStore.cancel}.
 */
export interface CancelOptions {
	/** Written into `error`, for the user. @default a sentence in the job's locale */
	reason?: string;
}

/**
 * What one {@link JobStore.tick} writes. `progress` is a percentage (0..100)
 * and never moves backwards within an attempt.
 */
export interface TickInput extends AttemptOptions {
	progress?: number;
	stage?: string;
	/** Seconds until the expected end (negative: the current phase overran); stored as `expectedEndAt` in the same write. */
	etaSeconds?: number;
	/** Keys of the job's metadata to set (merged into what it holds), sent in this tick's Realtime message. */
	metadata?: Readonly<Record<string, unknown>>;
}

/**
 * Options of {@link JobStore.listRecent}. Give `status` or `statuses`, not both.
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
 */
export interface JobPage<R> {
	jobs: R[];
	nextCursor: string | null;
}

/**
 * Options of {@link JobStore.watchChildren}.
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
 * What {@link JobStore.watch} yields on by default: every field a progress bar
 * (`<JobProgress>`) shows, so a bar over `store.watch(id)` moves with each tick.
 */
export const WATCH_EMIT_ON = [
	'status',
	'progress',
	'stage',
	'attempts',
	'availableAt',
	'expectedEndAt',
	'metadata',
] as const satisfies readonly (keyof Job)[];

/**
 * How long a watch over a live Realtime topic waits for a message about a
 * queued or running job before it reads the row anyway: a message can be
 * lost to Realtime's quotas (a message rate over the plan's, a payload too
 * large) or to a replication that was not running yet, and a watch must never
 * stay stale. A read costs one REST call, no Realtime message.
 */
export const WATCH_QUIET_READ_MS = 15_000;

/**
 * Options of {@link JobStore.watch}.
 */
export interface WatchOptions {
	/** Milliseconds between polls. @default 2000 */
	intervalMs?: number;
	/**
	 * Over a live Realtime topic, a queued or running job is read again when no
	 * message about it came for this many milliseconds (a lost message is
	 * never waited on for longer). Like `intervalMs`, finite and above 0.
	 * @default 15000
	 */
	quietReadMs?: number;
	/**
	 * The fields whose change yields a new value; the terminal state is always
	 * yielded. By default everything a progress bar shows (status, progress,
	 * stage, attempt, start time, estimate); `['status']` yields only the
	 * status changes.
	 */
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
	 * once joined, replication ready AND the row re-read (every change from
	 * then on arrives), `down` when the connection was lost or a join was
	 * refused for a reason that passes (polling until it joins again),
	 * `refused` when the topic's policy refuses it (polling to the end).
	 * Never called when the store polls from the start.
	 */
	onRealtime?: (status: JobTopicStatus) => void;
}

/**
 * Options of {@link JobStore.subscribeList}.
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
