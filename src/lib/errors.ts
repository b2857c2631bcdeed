/**
 * The errors supabase-jobs throws, each with a stable `code`.
 *
 * Why codes and {@link isJobError} rather than `instanceof`: the same class can
 * be loaded twice (a SvelteKit server bundle and a worker bundle, Deno and
 * Node), and `instanceof` then lies. `isJobError` checks a brand and the `code`.
 *
 * These are runtime conditions a caller handles. Programmer mistakes (a phase
 * the plan does not know, two stages mapped to one column) throw plain
 * `RangeError`/`TypeError` instead, so they never turn into an HTTP 4xx.
 */
import type { JobUserError } from './worker/job-user-error.ts';

/**
 * Every code a {@link JobError} can carry; other strings are allowed for forward compatibility.
 */
export type JobErrorCode =
	| 'job_not_found'
	| 'job_already_finished'
	| 'job_cancelled'
	| 'job_not_running'
	| 'illegal_transition'
	| 'invalid_input'
	| 'stale_after_required'
	| 'unknown_job_table'
	| 'permission_denied'
	| 'quota_exceeded'
	| 'stage_interrupted'
	| 'timeout'
	| 'job_user_error'
	| 'not_retryable'
	| 'no_open_question'
	| 'database_error'
	| (string & {});

/**
 * What every error constructor here accepts besides the message.
 */
export interface JobErrorOptions {
	/** The error this one translates (a postgres.js or PostgREST error, an abort reason). */
	cause?: unknown;
	/** PostgreSQL DETAIL / PostgREST `details`. */
	details?: string | null;
	/** PostgreSQL HINT / PostgREST `hint`. */
	hint?: string | null;
}

/**
 * The JSON shape of a {@link JobError} (what `toJSON()` returns).
 */
export interface JobErrorJSON {
	name: string;
	code: JobErrorCode;
	message: string;
	details: string | null;
	hint: string | null;
}

/**
 * Base class of every error supabase-jobs throws on purpose.
 *
 * @example
 * try {
 *   await store.get(id);
 * } catch (e) {
 *   if (isJobError(e)) console.warn(e.code, e.message);
 *   else throw e;
 * }
 */
export class JobError extends Error {
	/** Brand checked by {@link isJobError}; survives duplicated bundles where `instanceof` does not. */
	readonly __isJobError = true as const;
	readonly code: JobErrorCode;
	readonly details: string | null;
	readonly hint: string | null;

	constructor(code: JobErrorCode, message: string, options: JobErrorOptions = {}) {
		super(message, options.cause === undefined ? undefined : { cause: options.cause });
		this.name = 'JobError';
		this.code = code;
		this.details = options.details ?? null;
		this.hint = options.hint ?? null;
	}

	/**
	 * A plain object safe to log or send (no stack, no cause).
	 *
	 * @example
	 * JSON.stringify(new JobNotFoundError('no job 42')); // {"name":"JobNotFoundError","code":"job_not_found",...}
	 */
	toJSON(): JobErrorJSON {
		return { name: this.name, code: this.code, message: this.message, details: this.details, hint: this.hint };
	}
}

/**
 * The job does not exist or is not visible to the caller (SQLSTATE PT404).
 *
 * @example
 * throw new JobNotFoundError(`no job ${id}`);
 */
export class JobNotFoundError extends JobError {
	constructor(message = 'job not found', options?: JobErrorOptions) {
		super('job_not_found', message, options);
		this.name = 'JobNotFoundError';
	}
}

/**
 * Closing a job that is already terminal, or that another attempt now owns
 * (SQLSTATE PT409): two workers believe the job is theirs.
 *
 * @example
 * if (isJobError(e, 'job_already_finished') && !isJobError(e, 'job_cancelled')) alertOps(e);
 */
export class JobAlreadyFinishedError extends JobError {
	constructor(
		message = 'job already finished',
		options?: JobErrorOptions,
		code: JobErrorCode = 'job_already_finished',
	) {
		super(code, message, options);
		this.name = 'JobAlreadyFinishedError';
	}
}

/**
 * Closing a job the user cancelled midway (SQLSTATE PT410). A subclass of
 * {@link JobAlreadyFinishedError}: the system did exactly what it was told, so
 * log it and move on; do not alert.
 *
 * @example
 * try { await store.succeed(id); } catch (e) { if (!isJobError(e, 'job_cancelled')) throw e; }
 */
export class JobCancelledError extends JobAlreadyFinishedError {
	constructor(message = 'job was cancelled', options?: JobErrorOptions) {
		super(message, options, 'job_cancelled');
		this.name = 'JobCancelledError';
	}
}

/**
 * succeed/fail/tick on a job that is not running, e.g. still queued (SQLSTATE 55000).
 *
 * @example
 * throw new JobNotRunningError('job 42 is queued, claim it first');
 */
export class JobNotRunningError extends JobError {
	constructor(message = 'job is not running', options?: JobErrorOptions) {
		super('job_not_running', message, options);
		this.name = 'JobNotRunningError';
	}
}

/**
 * The database's state machine refused a status change made with raw SQL (SQLSTATE SJ001).
 *
 * @example
 * throw new IllegalTransitionError('done -> running is not allowed');
 */
export class IllegalTransitionError extends JobError {
	constructor(message = 'illegal job status transition', options?: JobErrorOptions) {
		super('illegal_transition', message, options);
		this.name = 'IllegalTransitionError';
	}
}

/**
 * Bad input to a job function (SQLSTATE 22023). `field` names the argument
 * at fault, read from the DETAIL `field=<name>` when the database sent one.
 *
 * @example
 * throw new InvalidJobInputError('params must be an object', { field: 'params' });
 */
export class InvalidJobInputError extends JobError {
	readonly field: string | null;

	constructor(message = 'invalid job input', options: JobErrorOptions & { field?: string | null } = {}) {
		super('invalid_input', message, options);
		this.name = 'InvalidJobInputError';
		this.field = options.field ?? parseField(options.details);
	}
}

function parseField(details: string | null | undefined): string | null {
	const match = /(?:^|[\s,;])field=([^\s,;]+)/.exec(details ?? '');
	return match?.[1] ?? null;
}

/**
 * reclaim_stale was called without a threshold (SQLSTATE 22004): it refuses
 * rather than guessing one.
 *
 * @example
 * throw new StaleAfterRequiredError('reclaimStale needs staleAfterMs');
 */
export class StaleAfterRequiredError extends JobError {
	constructor(message = 'stale_after is required', options?: JobErrorOptions) {
		super('stale_after_required', message, options);
		this.name = 'StaleAfterRequiredError';
	}
}

/**
 * The job table named in the call does not exist (SQLSTATE 42P01).
 *
 * @example
 * throw new UnknownJobTableError('no job table "exports"');
 */
export class UnknownJobTableError extends JobError {
	constructor(message = 'unknown job table', options?: JobErrorOptions) {
		super('unknown_job_table', message, options);
		this.name = 'UnknownJobTableError';
	}
}

/**
 * The caller's role may not do this (SQLSTATE 42501), e.g. a browser calling job_claim.
 *
 * @example
 * throw new PermissionDeniedError('job_claim is for the service role');
 */
export class PermissionDeniedError extends JobError {
	constructor(message = 'permission denied', options?: JobErrorOptions) {
		super('permission_denied', message, options);
		this.name = 'PermissionDeniedError';
	}
}

/**
 * The owner already has as many queued or running jobs (or payload bytes) as
 * the job table or the kind allows (SQLSTATE PT429, HTTP 429 through
 * PostgREST); nothing was queued. `quota` names the limit, e.g.
 * `max_active_per_owner`.
 *
 * @example
 * if (isJobError(e, 'quota_exceeded')) toast('You have too many jobs waiting; try again when one finishes.');
 */
export class QuotaExceededError extends JobError {
	/** The limit that was reached (`max_active_per_owner`, `max_payload_bytes_per_owner`), from DETAIL `quota=...`. */
	readonly quota: string | null;

	constructor(message = 'quota exceeded', options?: JobErrorOptions) {
		super('quota_exceeded', message, options);
		this.name = 'QuotaExceededError';
		this.quota = /(?:^|[\s,;])quota=([^\s,;]+)/.exec(options?.details ?? '')?.[1] ?? null;
	}
}

/**
 * runCancellable or a ProgressTracker saw a cancellation (or its abort signal
 * fired) and gave up. Not a failure: the handler just returns.
 * `status` is the job status that stopped the work, when a tick saw one.
 *
 * @example
 * try {
 *   await tracker.run('table', (signal) => readTable(text, signal), { size: text.length });
 * } catch (e) {
 *   if (isStageInterruptedError(e)) return;
 *   throw e;
 * }
 */
export class StageInterruptedError extends JobError {
	readonly stage: string | null;
	readonly status: string | null;

	constructor(
		message = 'stage interrupted',
		options: JobErrorOptions & { stage?: string | null; status?: string | null } = {},
	) {
		super('stage_interrupted', message, options);
		this.name = 'StageInterruptedError';
		this.stage = options.stage ?? null;
		this.status = options.status ?? null;
	}
}

/**
 * Something took longer than it was allowed: a watch whose `timeoutMs` elapsed
 * before a terminal state, or a call the database stopped at its
 * `statement_timeout` (SQLSTATE 57014; on hosted Supabase 3 s for anon and 8 s
 * for authenticated over REST). Then `call` names the job API function
 * (`job_enqueue_many`...) and `sqlstate` is `'57014'`: the statement was rolled
 * back, nothing it did is kept, and the call may be made again (smaller).
 *
 * @example
 * throw new TimeoutError('job 42 still running after 60 s');
 * @example
 * if (isJobError(e, 'timeout') && e.call) toast(`${e.call} took too long; try fewer at once.`);
 */
export class TimeoutError extends JobError {
	/** The job API function the database stopped; null when no database call timed out (a watch). */
	readonly call: string | null;
	/** `'57014'` for a statement timeout; null otherwise. */
	readonly sqlstate: string | null;

	constructor(
		message = 'timed out',
		options: JobErrorOptions & { call?: string | null; sqlstate?: string | null } = {},
	) {
		super('timeout', message, options);
		this.name = 'TimeoutError';
		this.call = options.call ?? null;
		this.sqlstate = options.sqlstate ?? null;
	}
}

/**
 * Try again was asked of a job that is neither failed nor cancelled (SQLSTATE
 * SJ002): a queued, running, waiting or done job has nothing to try again. Also
 * a job that failed for good (`failedForGood`: an error its kind declares
 * permanent), which would fail the same way.
 *
 * @example
 * if (isJobError(e, 'not_retryable')) toast('This job is still going, or it finished well.');
 */
export class NotRetryableError extends JobError {
	constructor(message = 'only a failed or cancelled job is tried again', options?: JobErrorOptions) {
		super('not_retryable', message, options);
		this.name = 'NotRetryableError';
	}
}

/**
 * An answer was sent to a job with no open question (SQLSTATE SJ003): it was
 * answered already, its deadline passed, or it was cancelled.
 *
 * @example
 * if (isJobError(e, 'no_open_question')) await job.refresh();
 */
export class NoOpenQuestionError extends JobError {
	constructor(message = 'the job has no open question', options?: JobErrorOptions) {
		super('no_open_question', message, options);
		this.name = 'NoOpenQuestionError';
	}
}

/**
 * An error of the database or the network that names no job condition: a
 * lost connection, a PostgREST error
 * without a SQLSTATE. Every error the adapters throw is a {@link JobError};
 * this one keeps what came: `sqlstate` (the database's or PostgREST's code,
 * null when none came), the message, and the original error as `cause`.
 *
 * @example
 * if (isJobError(e, 'database_error') && e.sqlstate === '53300') toast('The database is busy; try again.');
 */
export class DatabaseError extends JobError {
	/** The code that came with the error (a SQLSTATE like `53300`, a PostgREST `PGRST...`, a socket's `ECONNRESET`), or null. */
	readonly sqlstate: string | null;

	constructor(message = 'database error', options: JobErrorOptions & { sqlstate?: string | null } = {}) {
		super('database_error', message, options);
		this.name = 'DatabaseError';
		this.sqlstate = options.sqlstate ?? null;
	}
}

/**
 * True for an error that says something about the job or the call (not found,
 * refused input, permission...), false for a {@link DatabaseError}, a statement
 * timeout or anything else: a watch or a poll ends on the first and tries again
 * after the second.
 *
 * @internal
 */
export const isJobCondition = (e: unknown): boolean =>
	isJobError(e) && !isJobError(e, 'database_error') && !(isJobError(e, 'timeout') && e.sqlstate === '57014');

/** The class each code narrows to in {@link isJobError}. */
interface JobErrorClasses {
	job_not_found: JobNotFoundError;
	job_already_finished: JobAlreadyFinishedError;
	job_cancelled: JobCancelledError;
	job_not_running: JobNotRunningError;
	illegal_transition: IllegalTransitionError;
	invalid_input: InvalidJobInputError;
	stale_after_required: StaleAfterRequiredError;
	unknown_job_table: UnknownJobTableError;
	permission_denied: PermissionDeniedError;
	quota_exceeded: QuotaExceededError;
	stage_interrupted: StageInterruptedError;
	timeout: TimeoutError;
	job_user_error: JobUserError;
	not_retryable: NotRetryableError;
	no_open_question: NoOpenQuestionError;
	database_error: DatabaseError;
}

/**
 * True for an error thrown on purpose by supabase-jobs, even from another copy
 * of the package (where `instanceof` lies); with a code, true only for that
 * error, narrowed to its class. `'job_already_finished'` also matches its
 * subclass `JobCancelledError`, as `instanceof` would.
 *
 * @example
 * ```ts
 * if (isJobError(e, 'invalid_input')) form.errors[e.field ?? 'form'] = e.message;
 * if (isJobError(e, 'job_not_found')) error(404);
 * if (isJobError(e)) return { code: e.code };
 * ```
 */
export function isJobError<C extends keyof JobErrorClasses>(e: unknown, code: C): e is JobErrorClasses[C];
export function isJobError(e: unknown, code?: JobErrorCode): e is JobError;
export function isJobError(e: unknown, code?: JobErrorCode): e is JobError {
	if (
		typeof e !== 'object' ||
		e === null ||
		(e as { __isJobError?: unknown }).__isJobError !== true ||
		typeof (e as { code?: unknown }).code !== 'string'
	)
		return false;
	if (code === undefined) return true;
	const actual = (e as JobError).code;
	return actual === code || (code === 'job_already_finished' && actual === 'job_cancelled');
}
