/**
 * Where the worker writes what happened. Every line names the job id, so a
 * trace in the log can be matched with the row a user is looking at.
 */

/**
 * The three levels the worker uses; `console` is one.
 */
export interface WorkerLogger {
	info(message: string, ...details: unknown[]): void;
	warn(message: string, ...details: unknown[]): void;
	error(message: string, ...details: unknown[]): void;
}

/**
 * The prefix of every log line the worker writes.
 *
 * @internal
 * @example
 * ```ts
 * logger.info(`${PREFIX} job ${job.id} released`);
 * ```
 */
export const PREFIX = '[supabase-jobs]';
