/**
 * `supabase-jobs/adapter`: for people writing an adapter (another driver,
 * another runtime). An adapter calls the SQL functions named in
 * `JOB_FUNCTIONS`, hands back their rows as `RawRow`s, and turns the
 * driver's errors into `JobError`s with `fromPostgresError`; `parseJobRow`
 * is how the store reads those rows.
 *
 * @example
 * ```ts
 * import { JOB_FUNCTIONS, fromPostgresError, type JobAdapter } from 'supabase-jobs/adapter';
 * // A layer over another adapter: logs each call with what it returns.
 * const logged = (inner: JobAdapter): JobAdapter => ({
 *   name: `logged(${inner.name})`,
 *   async call(fn, args, answer) {
 *     console.debug(fn, answer ?? JOB_FUNCTIONS[fn].returns);
 *     try {
 *       return await inner.call(fn, args, answer);
 *     } catch (e) {
 *       throw fromPostgresError(e);
 *     }
 *   },
 * });
 * ```
 */
export { JOB_FUNCTIONS } from './store/adapter.ts';
export type {
	JobAdapter,
	JobArgValue,
	JobCallArgs,
	JobCallResult,
	JobFunctionName,
	JobFunctionSpec,
	JobRealtimeCapability,
	JobTopicListener,
	JobTopicStatus,
	JobTopicSubscription,
	RawRow,
} from './store/adapter.ts';
export { parseJobRow, jobRowSchema, UnexpectedRowError } from './store/job.ts';
export { fromPostgresError } from './internal/map-sql-error.ts';
export { JOB_TRANSITIONS, canTransition } from './state.ts';
export type { SupabaseChannelLike, SupabaseRealtimeClient } from './adapters/supabase-realtime.ts';
// The clients the bundled adapters take, for an adapter that wraps or mimics one.
export type { SupabaseRpcClient } from './adapters/supabase.ts';
export type { JwtClaims } from './adapters/postgres.ts';
