/**
 * The Node runner: the same handlers as the edge worker, on any machine that
 * reaches the database, with no wall clock. For work that outgrows edge
 * limits. Node only (it listens for process signals): the Deno function never
 * imports this file.
 */
import process from 'node:process';
import type postgres from 'postgres';
import type { Job } from '../store/job.ts';
import { tableLabel } from '../store/job-summary.ts';
import type { JobStore, SucceedOptions } from '../store/job-store.ts';
import type { RetryBackoff } from './backoff.ts';
import { HandlerRegistry, type JobHandler } from './job-handler.ts';
import { DEFAULT_HEARTBEAT_MS, JobRunner, type JobOutcome } from './job-runner.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';
import { PlanSource } from './plan-source.ts';
import { CLAIM_MAX, PrefetchSizer } from './prefetch.ts';
import { SucceedBatcher } from './succeed-batcher.ts';

/** Times of jobs announced as claimable later that the runner keeps a wake-up for (the nearest ones). */
const DUE_KEPT = 1024;

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

interface NotifyPayload {
	job_table?: string | null;
	kind?: string | null;
	kinds?: string[] | null;
	/** Set when the statement was about one job. */
	job_id?: string | null;
	available_at?: string;
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
	const registry = new HandlerRegistry(options.handlers);
	const kinds = options.kinds ? [...options.kinds] : registry.kinds;
	for (const kind of kinds)
		if (!registry.get(kind)) throw new TypeError(`runWorkers: no handler for the kind "${kind}"`);
	const concurrency = options.concurrency ?? 4;
	if (!(Number.isInteger(concurrency) && concurrency >= 1))
		throw new RangeError(`concurrency must be a positive integer; got ${String(concurrency)}`);
	const pollMs = options.pollMs ?? 2000;
	if (!(pollMs > 0)) throw new RangeError(`pollMs must be positive; got ${String(pollMs)}`);
	const { store } = options;
	const stats: WorkerRunner['stats'] = { claimed: 0, outcomes: {} };
	const batcher = options.batchCompletions === false ? null : new SucceedBatcher(store);
	const runner = new JobRunner({
		...(batcher ? { succeed: (_store: JobStore, id: string, o: SucceedOptions) => batcher.succeed(id, o) } : {}),
		handlers: registry,
		plans: new PlanSource({
			ttlMs: options.planTtlMs,
			onError: (kind, e) =>
				logger.warn(`${PREFIX} could not fit a plan for ${kind} from history; using the default`, e),
		}),
		backoff: options.retry ?? {},
		tickIntervalMs: options.tickIntervalMs ?? 1000,
		heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
		logger,
		// A slot is free once the handler is done: the next claim overlaps the close in flight.
		onWorked: () => {
			busy--;
			dispatch();
			poke();
		},
		onSettled: (job, outcome) => {
			stats.outcomes[outcome] = (stats.outcomes[outcome] ?? 0) + 1;
			options.onJobSettled?.(job, outcome);
		},
	});
	/** Runs not yet settled (their close may still be in flight), and who waits for them all to settle. */
	let runs = 0;
	const idleWaiters: (() => void)[] = [];
	const runEnded = () => {
		runs--;
		if (runs === 0) for (const resolve of idleWaiters.splice(0)) resolve();
		poke();
	};
	const allRunsEnded = () => (runs === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r)));
	/** Jobs whose handler is running: what `concurrency` bounds. */
	let busy = 0;
	let stopping = false;
	/** Claimed jobs waiting in memory for a free slot (the local queue), in claim order. */
	const local: Job[] = [];
	const prefetch = new PrefetchSizer();
	/** The last claim came back full (or a notification or poll came since): the table may hold more. */
	let moreMayWait = true;
	// The wake-up's fast path: when the last claim came back short (the table held nothing more for
	// us) and then exactly one notification named exactly one job, that job is the only one there
	// can be, and it is claimed by id: a primary-key read instead of the claim order's index walk
	// (docs/architecture.md, "The wake-up path"). Anything else announced since (a second
	// notification, one naming no job, the poll, a reconnect) leaves it to claimNext.
	let dry = false;
	/** Since the last claim: nothing announced (undefined), one job by id, or anything else (null). */
	let announced: string | null | undefined;
	const announceUnknown = () => {
		announced = null;
	};

	// Wake-ups: a notification, a finished job, the poll timer or stop(). `pending`
	// keeps a wake-up that arrives while claiming from being lost.
	let pending = false;
	let wake: (() => void) | null = null;
	const poke = () => {
		pending = true;
		wake?.();
	};
	const waitForWake = async (ms: number) => {
		if (!pending) {
			let timer: ReturnType<typeof setTimeout> | undefined;
			await new Promise<void>((resolve) => {
				wake = resolve;
				timer = setTimeout(() => {
					moreMayWait = true; // the poll backstop: look again whatever the last claim said
					announceUnknown();
					resolve();
				}, ms);
			});
			clearTimeout(timer);
			wake = null;
		}
		pending = false;
	};
	// Jobs announced as claimable later (run_at, a retry's backoff): one timer,
	// armed for the nearest of their times; when it fires it wakes the claim
	// loop and re-arms for the next. The farthest times beyond DUE_KEPT are
	// dropped: the poll finds those.
	const due: number[] = [];
	let dueTimer: ReturnType<typeof setTimeout> | undefined;
	const armDue = () => {
		clearTimeout(dueTimer);
		dueTimer = undefined;
		const now = Date.now();
		while (due.length && due[0]! <= now) due.shift();
		if (!due.length || stopping) return;
		dueTimer = setTimeout(
			() => {
				dueTimer = undefined;
				moreMayWait = true;
				announceUnknown();
				poke();
				armDue();
			},
			Math.min(due[0]! - now + 5, 2 ** 31 - 1),
		);
	};
	const wakeAt = (at: number) => {
		let i = due.length;
		while (i > 0 && due[i - 1]! > at) i--;
		if (due[i - 1] === at) return;
		due.splice(i, 0, at);
		if (due.length > DUE_KEPT) due.pop();
		if (i === 0) armDue();
	};

	const onNotify = (text: string) => {
		let payload: NotifyPayload = {};
		try {
			payload = JSON.parse(text) as NotifyPayload;
		} catch {
			// A payload we cannot read is still a hint that something changed.
		}
		// One notification per statement: job_table/kind are null when it mixed several.
		if (typeof payload.job_table === 'string' && payload.job_table !== tableLabel(store.table)) return;
		const forKinds = payload.kinds ?? (typeof payload.kind === 'string' ? [payload.kind] : null);
		if (forKinds && !forKinds.some((k) => kinds.includes(k))) return;
		const at = payload.available_at ? Date.parse(payload.available_at) : NaN;
		if (!(at > Date.now())) {
			moreMayWait = true;
			announced = announced === undefined && typeof payload.job_id === 'string' ? payload.job_id : null;
			return poke();
		}
		// Claimable later: wake then rather than at the next poll.
		wakeAt(at);
	};
	const listening = options.sql
		.listen(options.channel ?? 'supabase_jobs', onNotify, () => {
			moreMayWait = true;
			announceUnknown();
			poke();
		})
		.catch((e: unknown) => {
			logger.warn(`${PREFIX} LISTEN failed; the runner polls every ${pollMs} ms instead`, e);
			return null;
		});

	const start = (job: Job) => {
		stats.claimed++;
		busy++;
		prefetch.started++;
		runs++;
		// One callback for every run, not a closure and a finally() each.
		runner.run(job, store).then(runEnded, runEnded);
	};
	/** Hands claimed jobs waiting in memory to the free slots, oldest first. */
	const dispatch = () => {
		while (busy < concurrency && local.length > 0 && !stopping) start(local.shift()!);
	};
	/** Gives claimed jobs that never started back to the queue, unspent. */
	const giveBack = async (jobs: Job[]) => {
		await Promise.all(
			jobs.map((j) =>
				store
					.release(j.id, { attempt: j.attempts })
					.catch((e: unknown) => logger.warn(`${PREFIX} job ${j.id}: release failed`, e)),
			),
		);
	};

	let firstClaim!: () => void;
	const claimedOnce = new Promise<void>((resolve) => (firstClaim = resolve));
	const loop = (async () => {
		while (!stopping) {
			dispatch();
			const free = concurrency - busy;
			const ahead = prefetch.target();
			// Claim when a slot waits with nothing in hand, or when the jobs in hand run low
			// while the table still had more (a short claim means it ran dry: wait for a wake).
			const low = local.length <= ahead / 2 && (moreMayWait || local.length === 0);
			if (free > 0 && local.length === 0 && dry && typeof announced === 'string') {
				const id = announced;
				announced = undefined;
				moreMayWait = false;
				const job = await store.claim(id, { heartbeatMs: runner.heartbeatMs }).catch((e: unknown) => {
					logger.warn(`${PREFIX} job ${id}: claiming the announced job failed; claiming in order instead`, e);
					return null;
				});
				if (job && stopping) {
					await giveBack([job]);
					break;
				}
				if (job) {
					local.push(job);
					dispatch();
					// Nothing else was announced: wait, as after a short claim.
					await waitForWake(pollMs);
					continue;
				}
				// Taken by another runner, or not claimable: the usual claim decides.
				moreMayWait = true;
			}
			if ((free > 0 && local.length === 0) || (ahead > 0 && low)) {
				const limit = Math.min(free + ahead - local.length, CLAIM_MAX);
				if (limit > 0) {
					moreMayWait = false;
					announced = undefined;
					prefetch.mark();
					let jobs: Job[];
					try {
						jobs = await store.claimNext({ kinds, limit, heartbeatMs: runner.heartbeatMs });
						dry = jobs.length < limit;
						firstClaim();
					} catch (e) {
						firstClaim(); // answered, with an error: it polls from here
						logger.error(`${PREFIX} claiming failed; trying again in ${pollMs} ms`, e);
						await waitForWake(pollMs);
						continue;
					}
					if (stopping) {
						// Claimed while stop() was called: give them straight back, unspent.
						await giveBack(jobs);
						break;
					}
					local.push(...jobs);
					dispatch();
					if (jobs.length === limit) {
						moreMayWait = true;
						continue; // more may be waiting: claim again as soon as a slot frees or the hand runs low
					}
				}
			}
			await waitForWake(pollMs);
		}
	})();

	const removeSignals = (() => {
		if (options.handleSignals === false) return () => {};
		const onSignal = (signal: string) => {
			logger.info(
				`${PREFIX} ${signal}: stopping (running jobs get ${options.graceMs ?? 30_000} ms, then go back to the queue)`,
			);
			void stopNow({ graceMs: options.graceMs });
		};
		process.once('SIGTERM', onSignal);
		process.once('SIGINT', onSignal);
		return () => {
			process.off('SIGTERM', onSignal);
			process.off('SIGINT', onSignal);
		};
	})();

	let resolveDone!: () => void;
	const done = new Promise<void>((resolve) => (resolveDone = resolve));
	let stopped: Promise<void> | null = null;

	function stopNow(stopOptions: StopOptions = {}): Promise<void> {
		stopped ??= (async () => {
			stopping = true;
			poke();
			removeSignals();
			clearTimeout(dueTimer);
			await loop;
			// Claimed but never started: back to the queue, unspent, before waiting for the running ones.
			await giveBack(local.splice(0));
			const graceMs = stopOptions.graceMs ?? 30_000;
			if (runs > 0) {
				let timer: ReturnType<typeof setTimeout> | undefined;
				await Promise.race([allRunsEnded(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
				clearTimeout(timer);
			}
			if (runs > 0) {
				logger.info(`${PREFIX} ${runs} job(s) still running after the grace; releasing them`);
				await runner.releaseAll('the runner is stopping');
				await allRunsEnded();
			}
			await (await listening)?.unlisten().catch(() => {});
			resolveDone();
		})();
		return stopped;
	}

	return {
		stop: stopNow,
		done,
		ready: Promise.all([listening, Promise.race([claimedOnce, done])]).then(() => undefined),
		get running() {
			return runner.running.size;
		},
		stats,
	};
}
