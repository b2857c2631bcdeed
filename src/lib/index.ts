/**
 * supabase-jobs: long-running work with a status, for Supabase and SvelteKit.
 *
 * The public API. Everything importable from `supabase-jobs` is exported here;
 * Svelte components and state classes live at `supabase-jobs/svelte`, the
 * SvelteKit boundary helper at `supabase-jobs/kit` (so Deno and Node workers
 * never load Svelte or Kit).
 */

// The state machine (mirrors the SQL one).
export {
	JobStatus,
	JOB_STATUSES,
	TERMINAL_JOB_STATUSES,
	JOB_TRANSITIONS,
	isTerminalStatus,
	canTransition,
	type JobStatusValue,
} from './state.ts';

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
	StageInterruptedError,
	TimeoutError,
	isJobError,
	isJobNotFoundError,
	isJobAlreadyFinishedError,
	isJobCancelledError,
	isJobNotRunningError,
	isIllegalTransitionError,
	isInvalidJobInputError,
	isStaleAfterRequiredError,
	isUnknownJobTableError,
	isPermissionDeniedError,
	isStageInterruptedError,
	isTimeoutError,
	type JobErrorCode,
	type JobErrorOptions,
	type JobErrorJSON,
} from './errors.ts';
export { fromPostgresError } from './internal/map-sql-error.ts';

// JobStore and its adapters.
export { JobStore } from './store/job-store.ts';
export type {
	JobStoreOptions,
	EnqueueInput,
	ClaimNextOptions,
	AttemptOptions,
	SucceedOptions,
	FailOptions,
	RetryOptions,
	CancelOptions,
	TickInput,
	ListRecentOptions,
	JobPage,
	WatchOptions,
} from './store/job-store.ts';
export type { Job, JobParams } from './store/job.ts';
export { UnexpectedRowError, jobRowSchema, parseJobRow } from './store/job.ts';
export { defineJobKind } from './store/job-kind.ts';
export type { JobKind, JobKindInput, JobKindParams } from './store/job-kind.ts';
export { JOB_FUNCTIONS } from './store/adapter.ts';
export type {
	JobAdapter,
	JobFunctionName,
	JobFunctionSpec,
	JobCallArgs,
	JobCallResult,
	JobArgValue,
	RawRow,
} from './store/adapter.ts';
export { postgresAdapter } from './adapters/postgres.ts';
export type { PostgresAdapterOptions, JwtClaims } from './adapters/postgres.ts';
export { supabaseAdapter } from './adapters/supabase.ts';
export type { SupabaseAdapterOptions, SupabaseRpcClient } from './adapters/supabase.ts';
export { StageStore, type StageStoreOptions, type StageFinish } from './store/stage-store.ts';

// The worker toolkit.
export { runCancellable, type RunCancellableOptions } from './toolkit/run-cancellable.ts';
export { StopFlag } from './toolkit/stop-flag.ts';
export {
	PhasePlan,
	type PhaseSpan,
	type PhaseSizes,
	type PhaseHistorySource,
	type FromHistoryOptions,
} from './toolkit/phase-plan.ts';
export { fitPhasePlan, type PhaseFit, type PhaseHistoryRow, type FitPhasePlanOptions } from './toolkit/fit-phase-plan.ts';
export type { PhaseTiming, PhaseTimings } from './toolkit/phase-timings.ts';
export { ProgressTracker, type ProgressTrackerOptions, type RunPhaseOptions } from './toolkit/progress-tracker.ts';
export type { Ticker, TickUpdate } from './toolkit/ticker.ts';
export {
	StageMap,
	type StageTemplates,
	type StageColumns,
	type StageMapOptions,
	type MarkOptions,
	type CancelOutcome,
} from './toolkit/stage-map.ts';
export { StageStatus, TERMINAL_STAGE_STATUSES, type StageStatusValue } from './toolkit/stage-status.ts';
