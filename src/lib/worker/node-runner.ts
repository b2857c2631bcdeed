/**
 * The Node runner: the same handlers as the edge worker, on any machine that
 * reaches the database, with no wall clock. For work that outgrows edge
 * limits. Node only (it listens for process signals): the Deno function never
 * imports this file.
 */
import process from 'node:process';
import type postgres from 'postgres';
import type { Job } from '../store/job.ts';
import type { JobStore, SucceedOptions } from '../store/job-store.ts';
import type { RetryBackoff } from './backoff.ts';
import { ClaimLoop } from './claim-loop.ts';
import { HandlerRegistry, type JobHandler } from './job-handler.ts';
import { DEFAULT_HEARTBEAT_MS, JobRunner, type JobOutcome } from './job-runner.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';
import { PlanSource } from './plan-source.ts';
import { SucceedBatcher } from './succeed-batcher.ts';
import { resolveRealtimeBudget } from '../internal/tick-budget.ts';

// A postgres.js client of any type configuration: only listen() is used.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySql = postgres.Sql<any>;

/**
 * Options of {@link runWorkers}.
 */
export interface RunWorkersOptions {
	/** A postgres.js client; the runner LISTENs through it (postgres.js opens a dedicated connection for that). */
	sql: AnySql;
	/** Claims and closes the jobs (its table is the one the runner works on). */
	store: JobStore;
	/** One per kind, from defineJobHandler. */
	handlers: readonly JobHandler[];
	/** Jobs running at once. @default 4 */
	concurrency?: number;
	/** Only these kinds (each must have a handler). @default every kind with a handler */
	kinds?: readonly string[];
	/** Polling backstop, in milliseconds: NOTIFY is a hint only and can be missed. @default 2000 */
	pollMs?: number;
	/** The channel the notify triggers use. @default 'supabase_jobs' */
	channel?: string;
	/** Stop gracefully on SIGTERM and SIGINT. @default true */
	handleSignals?: boolean;
	/** How long a signal-triggered stop waits for running jobs before releasing them. @default 30_000 */
	graceMs?: number;
	/** Backoff of retries after an unexpected error. @default { baseSeconds: 2, maxSeconds: 300 } */
	retry?: RetryBackoff;
	/** How often a running tracker phase ticks. @default 1000 */
	tickIntervalMs?: number;
	/**
	 * The project's Realtime plan, which progress ticks stay within: a tick's
	 * visible change is one message on its job's topic, delivered to every
	 * viewer, so each job's progress is written at most every
	 * `running × (1 + viewersPerTopic) × 1000 / (0.5 × messagesPerSecond)` ms
	 * (half the plan for ticks, half for status changes, which are never held
	 * back; the bar still ends at its true final state). Several runners of one
	 * project share the plan: give each its part. `false`: no pacing.
	 * @default { messagesPerSecond: 100, viewersPerTopic: 1 } (the Free plan)
	 */
	realtimeBudget?: { messagesPerSecond?: number; viewersPerTopic?: number } | false;
	/** Longest silence before the runner ticks by itself (heartbeat and cancel check). @default 5000 */
	heartbeatMs?: number;
	/** How long a plan fitted from history is reused. @default 300_000 */
	planTtlMs?: number;
	/** @default console */
	logger?: WorkerLogger;
	/** Called after every run with its outcome (metrics, tests). */
	onJobSettled?: (job: Job, outcome: JobOutcome) => void;
	/**
	 * Close successful jobs in batches: completions that arrive while one is
	 * being written go out together in one statement (each job keeps its own
	 * result, timings and broadcast). A lone job is written at once.
	 * @default true
	 */
	batchCompletions?: boolean;
}

/**
 * Options of {@link WorkerRunner.stop}.
 */
export interface StopOptions {
	/** Wait this long for running jobs to finish; then release the rest (their attempt is given back). @default 30_000 */
	graceMs?: number;
}

/**
 * A started runner.
 */
export interface WorkerRunner {
	/** Stops claiming, waits for running jobs up to the grace, releases the rest. Idempotent. */
	stop(options?: StopOptions): Promise<void>;
	/** Resolves once the runner has stopped and nothing is running. */
	readonly done: Promise<void>;
	/**
	 * Resolves once the runner is connected: its LISTEN is in place (or it fell
	 * back to polling) and its first claim has answered. A job enqueued after
	 * this wakes it at once.
	 */
	readonly ready: Promise<void>;
	/** Jobs running right now. */
	readonly running: number;
	/** Jobs claimed and started (a job claimed ahead and given back unstarted is not counted), and how their runs ended, since start. */
	readonly stats: { claimed: number; outcomes: Partial<Record<JobOutcome, number>> };
}

/**
 * Runs handlers in this Node process until stopped: claims with claimNext
 * (FOR UPDATE SKIP LOCKED, so any number of runners share a table) up to
 * `concurrency` jobs at once, wakes on NOTIFY `supabase_jobs` (the notify
 * triggers fire on insert, requeue and reschedule; a job announced for later,
 * like a retry after its backoff, wakes it by a timer set for the nearest such
 * time) and polls every `pollMs` as the backstop. On SIGTERM/SIGINT it stops claiming, lets running jobs finish
 * within the grace, and releases the rest, so nothing is lost and nothing
 * spends an attempt.
 *
 * @example
 * ```ts
 * // worker.ts — `node --import tsx worker.ts` on any machine that reaches the database
 * import postgres from 'postgres';
 * import { JobStore, postgresAdapter } from 'supabase-jobs';
 * import { runWorkers } from 'supabase-jobs/node';
 * import { handlers } from './functions/jobs-worker/handlers.ts';
 *
 * const sql = postgres(process.env.DATABASE_URL!, { max: 4 });
 * const runner = runWorkers({ sql, store: new JobStore(postgresAdapter(sql)), handlers, concurrency: 4 });
 * await runner.done;
 * await sql.end();
 * ```
 */
export function runWorkers(options: RunWorkersOptions): WorkerRunner {
	const logger = options.logger ?? console;
	const { registry, kinds, concurrency, pollMs } = checkedOptions(options);
	const { store } = options;
	const stats: WorkerRunner['stats'] = { claimed: 0, outcomes: {} };
	const loop = new ClaimLoop({
		store,
		kinds,
		concurrency,
		pollMs,
		logger,
		stats,
		runner: (onWorked) => nodeJobRunner(options, registry, logger, stats, onWorked),
	});
	const listening = options.sql
		.listen(
			options.channel ?? 'supabase_jobs',
			(text) => loop.onNotify(text),
			() => loop.lookAgain(),
		)
		.catch((e: unknown) => {
			logger.warn(`${PREFIX} LISTEN failed; the runner polls every ${pollMs} ms instead`, e);
			return null;
		});
	loop.start();

	const removeSignals =
		options.handleSignals === false
			? () => {}
			: onStopSignals((signal) => {
					logger.info(
						`${PREFIX} ${signal}: stopping (running jobs get ${options.graceMs ?? 30_000} ms, then go back to the queue)`,
					);
					void stopNow({ graceMs: options.graceMs });
				});

	let resolveDone!: () => void;
	const done = new Promise<void>((resolve) => (resolveDone = resolve));
	let stopped: Promise<void> | null = null;

	function stopNow(stopOptions: StopOptions = {}): Promise<void> {
		stopped ??= (async () => {
			const stopping = loop.stop(stopOptions.graceMs ?? 30_000);
			removeSignals();
			await stopping;
			await (await listening)?.unlisten().catch(() => {});
			resolveDone();
		})();
		return stopped;
	}

	return {
		stop: stopNow,
		done,
		ready: Promise.all([listening, Promise.race([loop.claimedOnce, done])]).then(() => undefined),
		get running() {
			return loop.runner.running.size;
		},
		stats,
	};
}

/** The options runWorkers checks before it starts: a handler per kind, a positive concurrency and poll. */
function checkedOptions(options: RunWorkersOptions) {
	const registry = new HandlerRegistry(options.handlers);
	const kinds = options.kinds ? [...options.kinds] : registry.kinds;
	for (const kind of kinds)
		if (!registry.get(kind)) throw new TypeError(`runWorkers: no handler for the kind "${kind}"`);
	const concurrency = options.concurrency ?? 4;
	if (!(Number.isInteger(concurrency) && concurrency >= 1))
		throw new RangeError(`concurrency must be a positive integer; got ${String(concurrency)}`);
	const pollMs = options.pollMs ?? 2000;
	if (!(pollMs > 0)) throw new RangeError(`pollMs must be positive; got ${String(pollMs)}`);
	return { registry, kinds, concurrency, pollMs };
}

/** The runner of the Node process: batched completions unless turned off, outcomes counted in `stats`. */
function nodeJobRunner(
	options: RunWorkersOptions,
	registry: HandlerRegistry,
	logger: WorkerLogger,
	stats: WorkerRunner['stats'],
	onWorked: () => void,
): JobRunner {
	const batcher = options.batchCompletions === false ? null : new SucceedBatcher(options.store);
	return new JobRunner({
		...(batcher ? { succeed: (_store: JobStore, id: string, o: SucceedOptions) => batcher.succeed(id, o) } : {}),
		handlers: registry,
		plans: new PlanSource({
			ttlMs: options.planTtlMs,
			onError: (kind, e) =>
				logger.warn(`${PREFIX} could not fit a plan for ${kind} from history; using the default`, e),
		}),
		backoff: options.retry ?? {},
		tickIntervalMs: options.tickIntervalMs ?? 1000,
		realtimeBudget: resolveRealtimeBudget(options.realtimeBudget),
		heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
		logger,
		onWorked,
		onSettled: (job, outcome) => {
			stats.outcomes[outcome] = (stats.outcomes[outcome] ?? 0) + 1;
			options.onJobSettled?.(job, outcome);
		},
	});
}

/** Calls `onSignal` once on SIGTERM or SIGINT; returns what stops listening. */
function onStopSignals(onSignal: (signal: string) => void): () => void {
	process.once('SIGTERM', onSignal);
	process.once('SIGINT', onSignal);
	return () => {
		process.off('SIGTERM', onSignal);
		process.off('SIGINT', onSignal);
	};
}
