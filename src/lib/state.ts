/**
 * The job state machine, mirrored once from SQL (supabase/schemas/01_state_machine.sql,
 * table supabase_jobs.transitions) and drawn in docs/state-machine.md. The database
 * enforces it; this mirror lets code and types speak of it. The statuses themselves
 * come from the generated src/lib/database.types.ts (the SQL enum job_status).
 */
import { Constants, type Database } from './database.types.ts';

/**
 * Where a job is in its life.
 *
 * @example
 * ```ts
 * import { JobStatus } from 'supabase-jobs';
 * if (job.status === JobStatus.RUNNING) showSpinner();
 * ```
 */
export const JobStatus = {
	QUEUED: 'queued',
	RUNNING: 'running',
	/**
	 * Its worker slot free: a parent waiting for its children (queued again when the last one ends),
	 * or a job waiting for its owner's answer (queued again when it comes; failed past its deadline).
	 */
	WAITING: 'waiting',
	DONE: 'done',
	FAILED: 'failed',
	CANCELLED: 'cancelled',
} as const satisfies { readonly [S in JobStatusValue as Uppercase<S>]: S };

/**
 * One of the values of {@link JobStatus}.
 */
export type JobStatusValue = Database['public']['Enums']['job_status'];

/**
 * Every status, in life order (the enum's order in SQL).
 *
 * @example
 * ```ts
 * for (const s of JOB_STATUSES) console.log(s);
 * ```
 */
export const JOB_STATUSES = Constants.public.Enums.job_status satisfies readonly JobStatusValue[];

/**
 * The statuses a job never leaves. `cancelled` is terminal but not a failure:
 * the watch ends and the payload is dropped, yet nothing went wrong.
 *
 * @example
 * ```ts
 * const finished = TERMINAL_JOB_STATUSES.includes(job.status);
 * ```
 */
export const TERMINAL_JOB_STATUSES = [
	JobStatus.DONE,
	JobStatus.FAILED,
	JobStatus.CANCELLED,
] as const satisfies readonly JobStatusValue[];

/**
 * Legal transitions, from-state to the states it may move to, and the SQL
 * function that makes each move.
 *
 * @example
 * ```ts
 * JOB_TRANSITIONS.running.includes('done'); // true
 * ```
 */
export const JOB_TRANSITIONS = {
	queued: ['running', 'cancelled', 'failed'],
	running: ['done', 'failed', 'cancelled', 'queued', 'waiting'],
	waiting: ['queued', 'cancelled', 'failed'],
	done: [],
	failed: [],
	cancelled: [],
} as const satisfies Record<JobStatusValue, readonly JobStatusValue[]>;

/**
 * True for done, failed and cancelled; false when there is no status yet
 * (a watch that has not answered).
 *
 * @example
 * ```ts
 * if (isTerminalStatus(job.status)) stopPolling();
 * ```
 */
export function isTerminalStatus(status: JobStatusValue | null | undefined): boolean {
	return status != null && (TERMINAL_JOB_STATUSES as readonly JobStatusValue[]).includes(status);
}

/**
 * Whether the database allows `from -> to`.
 *
 * @example
 * ```ts
 * canTransition('done', 'running'); // false
 * ```
 */
export function canTransition(from: JobStatusValue, to: JobStatusValue): boolean {
	return (JOB_TRANSITIONS[from] as readonly JobStatusValue[]).includes(to);
}
