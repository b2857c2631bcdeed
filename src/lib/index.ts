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
	QuotaExceededError,
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
	isQuotaExceededError,
	isStageInterruptedError,
	isTimeoutError,
	type JobErrorCode,
	type JobErrorOptions,
	type JobErrorJSON,
} from './errors.ts';
export { fromPostgresError } from './internal/map-sql-error.ts';

// JobStore and its adapters.
export { JobStore, WATCH_EMIT_ON } from './store/job-store.ts';
export type {
	JobStoreOptions,
	EnqueueInput,
	Enqueued,
	RescheduleOptions,
	ConcurrencyLimits,
	ClaimNextOptions,
	ClaimOptions,
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
export { defineSchedule, type JobSchedule } from './store/job-schedule.ts';
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
export { serverRealtime } from './adapters/server-realtime.ts';
export type { JobsDatabase } from './database.ts';
export { StageStore, type StageStoreOptions, type StageFinish } from './store/stage-store.ts';

// The worker toolkit.
export { runCancellable, type RunCancellableOptions } from './toolkit/run-cancellable.ts';
export { StopFlag } from './toolkit/stop-flag.ts';
export { delay } from './toolkit/delay.ts';
export {
	PhasePlan,
	type PhaseSpan,
	type PhaseSizes,
	type PhaseHistorySource,
	type FromHistoryOptions,
} from './toolkit/phase-plan.ts';
export {
	fitPhasePlan,
	type PhaseFit,
	type PhaseHistoryRow,
	type FitPhasePlanOptions,
} from './toolkit/fit-phase-plan.ts';
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

// Workers: the edge worker (Deno, any fetch server). The Node runner is at `supabase-jobs/node`.
export { createWorker } from './worker/create-worker.ts';
export type { CreateWorkerOptions, JobWorker, KickReport, KickStop } from './worker/create-worker.ts';
export { defineJobHandler } from './worker/job-handler.ts';
export type { JobHandler, JobHandlerContext, JobHandlerOptions, JobHandlerResult } from './worker/job-handler.ts';
export { JobUserError, isJobUserError, type JobUserErrorOptions } from './worker/job-user-error.ts';
export { WaitingForChildren, isWaitingForChildren } from './worker/waiting-for-children.ts';
export {
	pickLocale,
	UNEXPECTED_FAILURE,
	INVALID_PARAMS,
	TOO_LONG_FOR_WORKER,
	TIMED_OUT,
	type LocalizedText,
} from './worker/messages.ts';
export { retryDelaySeconds, type RetryBackoff } from './worker/backoff.ts';
export { WallClockBudget, type WallClockOptions } from './worker/wall-clock.ts';
export { estimateSeconds, DEFAULT_PHASE } from './worker/plan-source.ts';
export { parseKickRequest, type KickRequest } from './worker/kick-request.ts';
export { bearerChecker, signWakeUpToken, timingSafeEqualText } from './worker/bearer-secret.ts';
export type { JobOutcome } from './worker/job-runner.ts';
export type { WorkerLogger } from './worker/logger.ts';

// Realtime: JobStore.watch and subscribeList use it when the adapter has it.
export type { SubscribeListOptions, ChildInput, HoldReason, WatchChildrenOptions } from './store/job-store.ts';
export type { JobSummary } from './store/job-summary.ts';
export type { JobRealtimeCapability, JobTopicListener, JobTopicStatus, JobTopicSubscription } from './store/adapter.ts';
export { supabaseRealtime } from './adapters/supabase-realtime.ts';
export type { SupabaseRealtimeClient, SupabaseChannelLike } from './adapters/supabase-realtime.ts';
