/**
 * `supabase-jobs`: what an app calls — the store, its adapters, job kinds and
 * schedules, the status vocabulary and the errors.
 *
 * The other entries, by audience: `supabase-jobs/worker` (handlers, the
 * toolkit, `createWorker` for the edge function), `supabase-jobs/node` (the
 * Node runner), `supabase-jobs/svelte` (state classes and components),
 * `supabase-jobs/kit` (the SvelteKit boundary) and `supabase-jobs/adapter`
 * (for writing an adapter). This one loads neither Svelte, Kit nor `node:`
 * modules, so Deno and browsers import it too.
 *
 * @example
 * ```ts
 * import { JobStore, postgresAdapter, isJobError } from 'supabase-jobs';
 * const store = new JobStore(postgresAdapter(sql));
 * const job = await store.enqueue('extract', { params: { filename: 'tender.pdf' } });
 * ```
 */

// The store.
export { JobStore } from './store/job-store.ts';
export type {
	JobStoreOptions,
	EnqueueInput,
	Enqueued,
	ChildInput,
	CancelOptions,
	ListRecentOptions,
	WatchOptions,
	ConcurrencyLimits,
	RateLimit,
	CancelManyFilter,
	DeleteFinishedFilter,
} from './store/store-options.ts';
export type { AskedQuestion } from './store/questions.ts';
export type { JobStreamChunk, JobStreamRead } from './store/job-streams.ts';
export type { Job, JobParams } from './store/job.ts';
export type { JobSummary } from './store/job-summary.ts';
export type { JobTimelineEntry, LogLine, LogLevel } from './store/job-timeline.ts';

// Kinds and schedules.
export { defineJobKind, type JobKind, type JobKindParams } from './store/job-kind.ts';
export { defineSchedule, type JobSchedule } from './store/job-schedule.ts';
export { cronProblem } from './store/cron-expression.ts';
export { describeCron } from './store/cron-words.ts';

// The adapters: postgres.js (server, worker) and supabase-js (browser, server), with Realtime.
export { postgresAdapter, type PostgresAdapterOptions } from './adapters/postgres.ts';
export { supabaseAdapter, type SupabaseAdapterOptions } from './adapters/supabase.ts';
export { supabaseRealtime } from './adapters/supabase-realtime.ts';
export { serverRealtime } from './adapters/server-realtime.ts';
export type { JobAdapter } from './store/adapter.ts';
export type { JobsDatabase } from './database.ts';

// The status vocabulary (mirrors the SQL state machine).
export { JobStatus, JOB_STATUSES, TERMINAL_JOB_STATUSES, isTerminalStatus, type JobStatusValue } from './state.ts';

// Errors, with stable codes, the same from every adapter.
export {
	JobError,
	JobNotFoundError,
	JobAlreadyFinishedError,
	JobCancelledError,
	JobNotRunningError,
	IllegalTransitionError,
	InvalidJobInputError,
	StaleAfterRequiredError,
	UnknownJobTableError,
	PermissionDeniedError,
	QuotaExceededError,
	StageInterruptedError,
	TimeoutError,
	NotRetryableError,
	NoOpenQuestionError,
	DatabaseError,
	isJobError,
	type JobErrorCode,
} from './errors.ts';
