/**
 * `supabase-jobs/worker`: what runs the jobs — handlers, `createWorker` for
 * the edge function (Deno, or any fetch server), and the toolkit a handler
 * reports progress and honours cancellation with. The Node runner is at
 * `supabase-jobs/node`.
 *
 * @example
 * ```ts
 * import { createWorker, defineJobHandler } from 'supabase-jobs/worker';
 * const worker = createWorker({ store, handlers: [defineJobHandler(wordCount, async (job, ctx) => null)] });
 * Deno.serve((request) => worker.fetch(request));
 * ```
 */

// Handlers and the edge worker.
export { defineJobHandler } from './worker/job-handler.ts';
export type { JobHandler, JobHandlerContext, JobHandlerOptions, JobHandlerResult } from './worker/job-handler.ts';
export { createWorker } from './worker/create-worker.ts';
export type { CreateWorkerOptions, JobWorker, KickReport, KickStop } from './worker/create-worker.ts';
export { JobUserError, type JobUserErrorOptions } from './worker/job-user-error.ts';
export { WaitingForChildren, isWaitingForChildren } from './worker/waiting-for-children.ts';
export { WaitingForAnswer, isWaitingForAnswer, type AskOptions } from './worker/asking.ts';
export type { LocalizedText } from './worker/messages.ts';
export { DEFAULT_PHASE } from './worker/plan-source.ts';
export type { RetryBackoff } from './worker/backoff.ts';
export type { JobOutcome } from './worker/job-runner.ts';
export type { JobStreamWriter } from './worker/job-output.ts';
export type { WorkerLogger } from './worker/logger.ts';

// The store's worker calls take these (claim, tick, close).
export type {
	ClaimOptions,
	ClaimNextOptions,
	AttemptOptions,
	SucceedOptions,
	FailOptions,
	RetryOptions,
	TickInput,
} from './store/store-options.ts';

// The toolkit: progress, phases, cancellation.
export { ProgressTracker, type ProgressTrackerOptions, type RunPhaseOptions } from './toolkit/progress-tracker.ts';
export { PhasePlan, type PhaseSizes, type PhaseSpan, type FromHistoryOptions } from './toolkit/phase-plan.ts';
export type { PhaseTiming, PhaseTimings } from './toolkit/phase-timings.ts';
export type { Ticker, TickUpdate } from './toolkit/ticker.ts';
export { runCancellable, type RunCancellableOptions } from './toolkit/run-cancellable.ts';
export { StopFlag } from './toolkit/stop-flag.ts';
export { delay } from './toolkit/delay.ts';

// Stage maps: a job's stages written into the app's own table.
export { StageMap, type StageTemplates, type StageColumns, type StageMapOptions } from './toolkit/stage-map.ts';
export { StageStatus, type StageStatusValue } from './toolkit/stage-status.ts';
export { StageStore, type StageStoreOptions, type StageFinish } from './store/stage-store.ts';
