/**
 * Runs one claimed job from start to close: re-validates its params, runs the
 * handler under a ProgressTracker with a heartbeat, and closes the row
 * (succeed / fail / retry / release) according to how the handler ended.
 * Shared by the edge worker and the Node runner.
 */
import { isJobError, type StageInterruptedError } from '../errors.ts';
import type { Job } from '../store/job.ts';
import type { JobStore, SucceedOptions } from '../store/job-store.ts';
import type { PhaseSizes } from '../toolkit/phase-plan.ts';
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import { retryDelaySeconds, type RetryBackoff } from './backoff.ts';
import type { HandlerRegistry, JobHandler } from './job-handler.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';
import { INTERNAL_FAILURE, INVALID_PARAMS, pickLocale, TIMED_OUT, UNEXPECTED_FAILURE } from './messages.ts';
import type { PlanSource } from './plan-source.ts';
import { isWaitingForChildren } from './waiting-for-children.ts';
import { isWaitingForAnswer } from './asking.ts';
import type { JobOutput } from './job-output.ts';
import { describe, RunningJob, settle, stoppedPromise, UUID, type Settled } from './running-job.ts';
import { HandlerRun } from './handler-run.ts';
import { loadTracingOnce, startJobSpan } from '../internal/tracing.ts';
import { tickFloorMs, type RealtimeBudget } from '../internal/tick-budget.ts';

/**
 * How one run ended, from the worker's side:
 * - `done`: succeed landed;
 * - `failed`: closed as failed (JobUserError, params no longer valid, retries spent,
 *   a result that is not a row id, a close the database refused);
 * - `retried`: an unexpected error; queued again after a backoff;
 * - `cancelled`: the user cancelled; the row was left as they set it;
 * - `released`: given back (shutdown, wall clock), the attempt not spent;
 * - `lost`: the row was no longer this run's to close (reclaimed, or the close failed and reclaim will readmit it);
 * - `waiting`: parked until its children end (`ctx.waitForChildren()`) or its owner answers (`ctx.ask()`); it will be claimed again.
 */
export type JobOutcome = 'done' | 'failed' | 'retried' | 'cancelled' | 'released' | 'lost' | 'waiting';

/**
 * Settings of a {@link JobRunner}.
 *
 * @internal
 */
export interface JobRunnerSettings {
	handlers: HandlerRegistry;
	plans: PlanSource;
	backoff: RetryBackoff;
	/** How often a running tracker phase ticks. */
	tickIntervalMs: number;
	/** The longest silence before the worker ticks on its own (heartbeat + cancellation check). */
	heartbeatMs: number;
	logger: WorkerLogger;
	/** Called after every run with its outcome. */
	onSettled?: (job: Job, outcome: JobOutcome) => void;
	/**
	 * Called once per run as soon as the handler is done and only the close is
	 * left to write (or the run ended earlier): the worker's slot is free for
	 * the next job while the close is in flight.
	 */
	onWorked?: (job: Job) => void;
	/** The project's Realtime plan: progress ticks are paced to stay within it (tick-budget.ts); null: not paced. */
	realtimeBudget?: RealtimeBudget | null;
	/** Writes a successful close; the Node runner batches them (see SucceedBatcher). @default store.succeed */
	succeed?: (store: JobStore, id: string, options: SucceedOptions) => Promise<unknown>;
}

/** Whether the handler's kind declares `code` permanent (`defineJobKind({ permanentErrors })`): then the job fails for good. */
function permanentFor(handler: JobHandler, code: string): boolean {
	return handler.kind.permanentErrors.includes(code);
}

/**
 * Runs the handler (in a microtask of its own) and then sends what it streamed:
 * its output is stored before its outcome is. A handler's error wins over the flush's.
 */
async function runHandler(
	handler: JobHandler,
	context: Parameters<JobHandler['run']>[0],
	made: { readonly output: JobOutput | null },
): Promise<unknown> {
	await undefined;
	let value: unknown;
	try {
		value = await handler.run(context);
	} catch (error) {
		await made.output?.flush().catch(() => {});
		throw error;
	}
	// No stream, no wait: an `await undefined` is one more turn of the microtask queue per job.
	if (made.output) await made.output.flush();
	return value;
}

/** How the handler's part of a run ended: what the close is chosen from. */
interface Handled {
	result: Settled<unknown>;
	/** The row stopped being this run's (cancelled, reclaimed, gone). */
	halted: StageInterruptedError | null;
	timedOut: boolean;
	timings: PhaseTimings;
}

/** What a run learned that its span reports: the handler's error. */
interface RunReport {
	error?: unknown;
}

/** How often a runner beats when the handler reports nothing: the liveness contract it declares at claim. */
export const DEFAULT_HEARTBEAT_MS = 5000;

/**
 * Runs claimed jobs; keeps the set of those in flight so a worker can give them back.
 *
 * @internal
 * @example
 * ```ts
 * const runner = new JobRunner(settings);
 * const outcome = await runner.run(job, store); // 'done' | 'failed' | 'retried' | ...
 * ```
 */
export class JobRunner {
	readonly running = new Set<RunningJob>();
	readonly #s: JobRunnerSettings & { tickFloorMs?: () => number };
	readonly #sizeOf: (handler: JobHandler, job: Job) => PhaseSizes | null;

	constructor(settings: JobRunnerSettings) {
		const budget = settings.realtimeBudget;
		// Every handler's ticks share the budget: the floor grows with the jobs running now.
		this.#s = budget ? { ...settings, tickFloorMs: () => tickFloorMs(this.running.size, budget) } : settings;
		this.#sizeOf = (h, j) => this.sizeOf(h, j);
	}

	/** Declared at every claim: this runner beats at least this often for each job it runs. */
	get heartbeatMs(): number {
		return this.#s.heartbeatMs;
	}

	/** The handler for a kind, if this worker has one. */
	handlerFor(kind: string): JobHandler | undefined {
		return this.#s.handlers.get(kind);
	}

	/** The size the handler declares for a job, or null (a throwing size() must not stop the job). */
	sizeOf(handler: JobHandler, job: Job): PhaseSizes | null {
		if (!handler.size) return null;
		const parsed = handler.kind.params.safeParse(job.params);
		if (!parsed.success) return null;
		try {
			return handler.size({ params: parsed.data, job }) ?? null;
		} catch (e) {
			this.#s.logger.warn(`${PREFIX} job ${job.id}: size() of ${job.kind} threw; running without a size`, e);
			return null;
		}
	}

	/** Gives every job in flight back (see {@link RunningJob.giveBack}). */
	async releaseAll(reason: string): Promise<void> {
		await Promise.all([...this.running].map((r) => r.giveBack(reason)));
	}

	/** Runs one claimed job to its close. Never throws: the outcome says what happened. */
	async run(job: Job, store: JobStore): Promise<JobOutcome> {
		const entry = new RunningJob(job, store, this.#s.logger);
		this.running.add(entry);
		let outcome: JobOutcome = 'lost';
		const loading = loadTracingOnce();
		if (loading) await loading;
		// The run span: the parent of the handler's own spans and of the close.
		const span = startJobSpan('run', { id: job.id, kind: job.kind, attempt: job.attempts, table: store.table });
		const report: RunReport = {};
		try {
			outcome = await (span ? span.within(() => this.#run(entry, report)) : this.#run(entry, report));
		} catch (e) {
			// Only a bug in the worker itself lands here; the row is left for reclaim.
			this.#s.logger.error(`${PREFIX} job ${job.id}: the worker failed while running it`, e);
			report.error = e;
		} finally {
			if (span) {
				span.set({ outcome });
				if (outcome === 'failed' || outcome === 'retried' || outcome === 'lost')
					span.fail(report.error ?? new Error(`job ${job.id}: ${outcome}`));
				span.end();
			}
			this.#worked(entry);
			this.running.delete(entry);
			this.#s.onSettled?.(job, outcome);
		}
		return outcome;
	}

	/** Once per run: the handler is done (or never ran), only the close is left. */
	#worked(entry: RunningJob): void {
		if (entry.worked) return;
		entry.worked = true;
		this.#s.onWorked?.(entry.job);
	}

	async #run(entry: RunningJob, report: RunReport): Promise<JobOutcome> {
		const { job, store } = entry;
		const { logger } = this.#s;
		const attempt = job.attempts;
		const handler = this.#s.handlers.get(job.kind);
		if (!handler) {
			return (await entry.giveBack(`no handler for the kind "${job.kind}"`)) ? 'released' : 'lost';
		}

		let params: Record<string, unknown>;
		try {
			params = handler.kind.parseParams(job.params) as Record<string, unknown>;
		} catch (e) {
			if (!isJobError(e, 'invalid_input')) throw e;
			logger.warn(`${PREFIX} job ${job.id}: its params no longer satisfy the schema of ${job.kind}: ${e.message}`);
			entry.markClosing();
			return await this.#close(entry, 'failed', () =>
				store.fail(job.id, pickLocale(INVALID_PARAMS, job.locale), {
					errorCode: 'invalid_params',
					attempt,
					permanent: permanentFor(handler, 'invalid_params'),
				}),
			);
		}

		// The handler's part returns before the close is awaited: what it made for the run
		// (closures, context, timers, tracker) is garbage while the close waits in a batch.
		const handled = await this.#handle(entry, handler, params);
		const { result } = handled;
		if (!result.ok) report.error = result.error;
		if (result.ok && !entry.shutdown.aborted) return await this.#succeeded(entry, result.value, handled.timings);
		if (entry.shutdown.aborted) {
			return (await entry.giveBack('shutdown')) ? 'released' : 'lost';
		}
		return await this.#failed(entry, handler, handled);
	}

	/** Closes a run whose handler returned: done with its result row, or failed when what it returned is not one. */
	async #succeeded(entry: RunningJob, value: unknown, timings: PhaseTimings): Promise<JobOutcome> {
		const { job, store } = entry;
		const attempt = job.attempts;
		entry.markClosing();
		if (value !== undefined && value !== null && value !== '' && !(typeof value === 'string' && UUID.test(value))) {
			// Redoing finished work cannot fix the shape of its result: fail now, with the detail in the log only.
			this.#s.logger.error(
				`${PREFIX} job ${job.id} (${job.kind}): the handler returned ${describe(value)}, not a row id (a UUID) or nothing; closing it as failed`,
			);
			return await this.#close(entry, 'failed', () =>
				store.fail(job.id, pickLocale(INTERNAL_FAILURE, job.locale), {
					errorCode: 'invalid_result',
					attempt,
					timings,
				}),
			);
		}
		const resultId = typeof value === 'string' && value !== '' ? value : null;
		const options: SucceedOptions = { resultId, attempt, timings };
		return await this.#close(entry, 'done', () =>
			this.#s.succeed ? this.#s.succeed(store, job.id, options) : store.succeed(job.id, options),
		);
	}

	/**
	 * What a run that did not return comes to: stopped (cancelled, the row no
	 * longer this run's), waiting (on children or an answer), failed (timed out,
	 * a user error) or retried (anything unexpected, while attempts are left).
	 */
	async #failed(entry: RunningJob, handler: JobHandler, handled: Handled): Promise<JobOutcome> {
		const { job, store } = entry;
		const { logger } = this.#s;
		const attempt = job.attempts;
		const { result, halted, timedOut, timings } = handled;
		const error = result.ok ? undefined : result.error;
		if (halted) {
			const { status } = halted;
			if (status === 'cancelled') {
				logger.info(`${PREFIX} job ${job.id} was cancelled; the handler stopped`);
				return 'cancelled';
			}
			logger.warn(`${PREFIX} job ${job.id}: the row is ${status} now; this run stopped without closing it`);
			return 'lost';
		}
		if (isWaitingForChildren(error)) {
			logger.info(`${PREFIX} job ${job.id} is waiting for its children; its slot is free`);
			return 'waiting';
		}
		if (isWaitingForAnswer(error)) {
			logger.info(`${PREFIX} job ${job.id} is waiting for its owner's answer; its slot is free`);
			return 'waiting';
		}
		entry.markClosing();
		if (timedOut) {
			logger.warn(`${PREFIX} job ${job.id} (${job.kind}) ran past its ${handler.timeoutMs} ms limit; failed`);
			return await this.#close(entry, 'failed', () =>
				store.fail(job.id, pickLocale(TIMED_OUT, job.locale), {
					errorCode: 'timed_out',
					attempt,
					timings,
					permanent: permanentFor(handler, 'timed_out'),
				}),
			);
		}
		if (isJobError(error, 'stage_interrupted')) {
			logger.info(`${PREFIX} job ${job.id}: the handler was interrupted (${error.message})`);
			return 'cancelled';
		}
		if (isJobError(error, 'job_user_error')) {
			logger.info(`${PREFIX} job ${job.id} failed: ${error.errorCode}: ${error.message}`);
			return await this.#close(entry, 'failed', () =>
				store.fail(job.id, error.sentenceFor(job.locale), {
					errorCode: error.errorCode,
					attempt,
					timings,
					// Its kind says trying again cannot help: the row records it, so no try again or replay repeats it.
					permanent: permanentFor(handler, error.errorCode),
				}),
			);
		}
		return await this.#retry(entry, error);
	}

	/** An unexpected failure: logged with its cause, retried after the backoff (failed once no attempt is left). */
	async #retry(entry: RunningJob, error: unknown): Promise<JobOutcome> {
		const { job, store } = entry;
		const attempt = job.attempts;
		const spent = attempt >= job.maxAttempts;
		const delaySeconds = retryDelaySeconds(attempt, this.#s.backoff);
		this.#s.logger.error(
			`${PREFIX} job ${job.id} (${job.kind}) attempt ${attempt}/${job.maxAttempts} failed unexpectedly; ${spent ? 'no attempts left' : `retrying in ${delaySeconds} s`}`,
			error,
		);
		return await this.#close(entry, 'retried', async () => {
			const row = await store.retry(job.id, pickLocale(UNEXPECTED_FAILURE, job.locale), { delaySeconds, attempt });
			return row.status === 'failed' ? 'failed' : 'retried';
		});
	}

	/** Runs the handler to its end (or its stop) and writes its log lines; the close is the caller's. */
	async #handle(entry: RunningJob, handler: JobHandler, params: Record<string, unknown>): Promise<Handled> {
		const { job, store } = entry;
		const plan = this.#s.plans.planNow(handler, store) ?? (await this.#s.plans.planFor(handler, store));
		const run = new HandlerRun(
			this.#s,
			this.#sizeOf,
			job,
			store,
			handler,
			plan,
			this.sizeOf(handler, job),
			entry.shutdown,
		);
		run.start();
		let result: Settled<unknown>;
		try {
			// What the handler wrote is stored and sent before its outcome is.
			const work = runHandler(handler, run.context(params) as never, run);
			result = await Promise.race([settle(work), stoppedPromise(run.stop)]);
			this.#worked(entry);
			// A handler that ignores its signal is abandoned, not awaited: its slot is free again.
			work.catch(() => {});
		} finally {
			run.finish();
		}
		// The handler's lines land before its close (a cancelled attempt may still write them).
		if (run.logs) await run.logs.close();
		return {
			result,
			halted: run.halted,
			timedOut: run.timedOut,
			// An untouched tracker has timed no phase.
			timings: run.tracker?.timings() ?? {},
		};
	}

	/** Writes the close, in its own span; a refusal is logged (never thrown) and becomes the outcome. */
	async #close(entry: RunningJob, outcome: JobOutcome, write: () => Promise<unknown>): Promise<JobOutcome> {
		const { job, store } = entry;
		const span = startJobSpan('close', { id: job.id, kind: job.kind, attempt: job.attempts, table: store.table });
		const landed = await this.#closeWrite(entry, outcome, write);
		if (span) {
			span.set({ outcome: landed });
			if (landed === 'lost') span.fail(new Error(`job ${job.id}: its ${outcome} close did not land`));
			span.end();
		}
		return landed;
	}

	async #closeWrite(entry: RunningJob, outcome: JobOutcome, write: () => Promise<unknown>): Promise<JobOutcome> {
		const { job } = entry;
		try {
			const value = await write();
			return value === 'failed' || value === 'retried' ? value : outcome;
		} catch (e) {
			const { logger } = this.#s;
			if (isJobError(e, 'job_cancelled')) {
				// The system did exactly what it was told: log and move on, no alert.
				logger.info(`${PREFIX} job ${job.id} was cancelled before its ${outcome} could land; left cancelled`);
				return 'cancelled';
			}
			if (isJobError(e, 'job_already_finished') || isJobError(e, 'job_not_running') || isJobError(e, 'job_not_found')) {
				logger.warn(`${PREFIX} job ${job.id}: no longer this run's to close (${e.code}); another attempt owns it`);
				return 'lost';
			}
			// Left running, the job would be redone until max_attempts and end on the worker_lost sentence:
			// close it as failed with a generic sentence instead, keeping the refusal for the log.
			logger.error(`${PREFIX} job ${job.id}: the database refused its close (${outcome}); closing it as failed`, e);
			try {
				await this.#fallbackFail(entry);
				return 'failed';
			} catch (fallback) {
				if (
					isJobError(fallback, 'job_already_finished') ||
					isJobError(fallback, 'job_not_running') ||
					isJobError(fallback, 'job_not_found')
				) {
					return isJobError(fallback, 'job_cancelled') ? 'cancelled' : 'lost';
				}
				logger.error(`${PREFIX} job ${job.id}: could not close it as failed either; reclaim will readmit it`, fallback);
				return 'lost';
			}
		}
	}

	#fallbackFail({ job, store }: RunningJob): Promise<unknown> {
		return store.fail(job.id, pickLocale(INTERNAL_FAILURE, job.locale), {
			errorCode: 'close_refused',
			attempt: job.attempts,
		});
	}
}
