/**
 * The edge worker: an HTTP handler that a kick (pg_net from the insert
 * trigger, the cron backstop, or anyone holding the secret) wakes up. It
 * answers 202 at once and works in the background, within the isolate's
 * wall clock.
 */
import { isJobError } from '../errors.ts';
import type { Job } from '../store/job.ts';
import { JobStore } from '../store/job-store.ts';
import type { RetryBackoff } from './backoff.ts';
import { bearerChecker } from './bearer-secret.ts';
import { edgeWaitUntil, onBeforeUnload } from './edge-runtime.ts';
import { HandlerRegistry, type JobHandler } from './job-handler.ts';
import { DEFAULT_HEARTBEAT_MS, JobRunner, type JobOutcome } from './job-runner.ts';
import { parseKickRequest, type KickRequest } from './kick-request.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';
import { pickLocale, TOO_LONG_FOR_WORKER } from './messages.ts';
import { estimateSeconds, PlanSource } from './plan-source.ts';
import { Slots } from './slots.ts';
import { WallClockBudget } from './wall-clock.ts';

/**
 * Options of {@link createWorker}.
 */
export interface CreateWorkerOptions {
	/** Claims and closes jobs. Its adapter also serves the other job tables a kick names. */
	store: JobStore;
	/** One per kind, from defineJobHandler. The worker never claims a kind it has no handler for. */
	handlers: readonly JobHandler[];
	/** The Bearer secret callers must present (at least 16 characters). Not the publishable key. */
	secret: string;
	/** Jobs running at once in this isolate, across all requests. @default 2 */
	concurrency?: number;
	/** The isolate's wall-clock limit; Infinity for none (a long-lived server). @default 150_000 */
	wallClockMs?: number;
	/** Kept free at the end of the wall clock. @default 15_000 */
	marginMs?: number;
	/** When the isolate started on the performance.now() clock. @default 0 (performance.now() counts from the isolate's start) */
	startedAtMs?: number;
	/** Backoff of retries after an unexpected error. @default { baseSeconds: 2, maxSeconds: 300 } */
	retry?: RetryBackoff;
	/** How often a running tracker phase ticks. @default 1000 */
	tickIntervalMs?: number;
	/** Longest silence before the worker ticks by itself (heartbeat and cancel check). @default 5000 */
	heartbeatMs?: number;
	/** How long a plan fitted from history is reused. @default 300_000 */
	planTtlMs?: number;
	/** Give running jobs back with release on `beforeunload`. @default true */
	releaseOnUnload?: boolean;
	/** @default console */
	logger?: WorkerLogger;
	/** Called after every run with its outcome (metrics, tests). */
	onJobSettled?: (job: Job, outcome: JobOutcome) => void;
}

/**
 * Why a wake-up stopped claiming (or did not claim):
 * `empty` nothing left; `over_budget` the next job would not fit in the wall
 * clock; `shutdown` the worker is giving work back; `not_found`, `not_queued`,
 * `no_handler`, `not_claimed` (another worker was faster, or not available yet),
 * `unknown_table` for a named job.
 */
export type KickStop =
	| 'empty'
	| 'over_budget'
	| 'shutdown'
	| 'not_found'
	| 'not_queued'
	| 'no_handler'
	| 'not_claimed'
	| 'unknown_table'
	| 'done';

/**
 * What one wake-up did.
 */
export interface KickReport {
	/** Ids of the jobs claimed, in claim order. */
	claimed: string[];
	/** How many runs ended each way. */
	outcomes: Partial<Record<JobOutcome, number>>;
	stoppedBy: KickStop;
}

/**
 * The worker: call it (or its `fetch`) with a Request. The extra members are
 * for servers and tests that want to wait on it.
 */
export interface JobWorker {
	(req: Request): Promise<Response>;
	/** Same as calling the worker. */
	fetch(req: Request): Promise<Response>;
	/** Does what a wake-up asks and resolves when every job it claimed has closed (no HTTP, no auth). */
	process(kick?: Partial<KickRequest>): Promise<KickReport>;
	/** Resolves when no wake-up is being worked on. */
	idle(): Promise<void>;
	/** Stops claiming and gives every running job back (release: the attempt is not spent). */
	releaseAll(reason?: string): Promise<void>;
	/** Jobs running right now. */
	readonly running: number;
	/** Stops listening for beforeunload. */
	close(): void;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
	new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/**
 * Builds the edge worker's fetch handler. It authenticates the caller with
 * its own Bearer secret (constant-time; 401 otherwise), then either claims the
 * job named in the body (`{"job_id": ...}`) or drains queued jobs of the kinds
 * it handles, answers 202 at once and works under `EdgeRuntime.waitUntil`
 * (kept alive by itself under the Deno CLI). It never starts a job its wall
 * clock cannot fit, estimated from the kind's PhasePlan at the job's size, and
 * gives running jobs back on `beforeunload`. Handler outcomes: a returned id
 * -> succeed (with the tracker's timings); JobUserError -> fail with its
 * sentence; a cancellation -> nothing to write; anything else -> retry with
 * exponential backoff, the user reading a generic sentence in their language
 * and the trace going to the log.
 *
 * @example
 * ```ts
 * // functions/jobs-worker/index.ts
 * import postgres from 'npm:postgres@3';
 * import { createWorker, JobStore, postgresAdapter } from 'npm:supabase-jobs';
 * import { handlers } from './handlers.ts';
 *
 * const sql = postgres(Deno.env.get('SUPABASE_DB_URL')!, { max: 1, prepare: false });
 * const worker = createWorker({
 *   store: new JobStore(postgresAdapter(sql)),
 *   handlers,
 *   secret: Deno.env.get('JOBS_WORKER_SECRET')!,
 * });
 * Deno.serve(worker);
 * ```
 */
export function createWorker(options: CreateWorkerOptions): JobWorker {
	const logger = options.logger ?? console;
	const authorized = bearerChecker(options.secret);
	const registry = new HandlerRegistry(options.handlers);
	const plans = new PlanSource({
		ttlMs: options.planTtlMs,
		onError: (kind, e) => logger.warn(`${PREFIX} could not fit a plan for ${kind} from history; using the default`, e),
	});
	const runner = new JobRunner({
		handlers: registry,
		plans,
		backoff: options.retry ?? {},
		tickIntervalMs: options.tickIntervalMs ?? 1000,
		heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
		logger,
		onSettled: options.onJobSettled,
	});
	const budget = new WallClockBudget({
		wallClockMs: options.wallClockMs,
		marginMs: options.marginMs,
		startedAtMs: options.startedAtMs,
	});
	const slots = new Slots(options.concurrency ?? 2);
	const stores = new Map<string, JobStore>([[options.store.table, options.store]]);
	const inFlight = new Set<Promise<unknown>>();
	let stopping = false;

	const storeFor = (table: string | null): JobStore => {
		const name = table ?? options.store.table;
		let store = stores.get(name);
		if (!store) {
			store = new JobStore(options.store.adapter, { table: name, staleAfterMs: options.store.staleAfterMs });
			stores.set(name, store);
		}
		return store;
	};

	/** Seconds the job is expected to take, from its kind's plan at its size. */
	const estimate = async (job: Job, store: JobStore): Promise<number> => {
		const handler = registry.get(job.kind);
		if (!handler) return 0;
		return estimateSeconds(await plans.planFor(handler, store), runner.sizeOf(handler, job));
	};

	const count = (report: KickReport, outcome: JobOutcome) => {
		report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
	};

	/** Closes a job no isolate could finish in time, with a sentence for its user. */
	async function failTooLong(job: Job, store: JobStore, seconds: number): Promise<JobOutcome> {
		logger.warn(
			`${PREFIX} job ${job.id} (${job.kind}) needs ~${seconds.toFixed(1)} s, more than a whole isolate allows: failed (run this kind on the Node runner)`,
		);
		try {
			await store.fail(job.id, pickLocale(TOO_LONG_FOR_WORKER, job.locale), {
				errorCode: 'too_long_for_worker',
				attempt: job.attempts,
			});
			return 'failed';
		} catch (e) {
			logger.warn(`${PREFIX} job ${job.id}: could not fail it`, e);
			return 'lost';
		}
	}

	async function claimNamed(store: JobStore, id: string, report: KickReport): Promise<KickReport> {
		let seen: Job;
		try {
			seen = await store.get(id);
		} catch (e) {
			if (isJobError(e, 'job_not_found')) return { ...report, stoppedBy: 'not_found' };
			throw e;
		}
		if (seen.status !== 'queued') return { ...report, stoppedBy: 'not_queued' };
		if (!registry.get(seen.kind)) {
			logger.warn(`${PREFIX} job ${id}: no handler for the kind "${seen.kind}" here; not claimed`);
			return { ...report, stoppedBy: 'no_handler' };
		}
		const seconds = await estimate(seen, store);
		await slots.acquire();
		try {
			if (stopping) return { ...report, stoppedBy: 'shutdown' };
			if (!budget.fits(seconds) && budget.couldEverFit(seconds)) {
				logger.info(
					`${PREFIX} job ${id} needs ~${seconds.toFixed(1)} s; ${Math.max(0, budget.remainingMs() / 1000).toFixed(1)} s left in this isolate: not claimed`,
				);
				return { ...report, stoppedBy: 'over_budget' };
			}
			const job = await store.claim(id, { heartbeatMs: runner.heartbeatMs });
			if (!job) return { ...report, stoppedBy: 'not_claimed' };
			if (!budget.couldEverFit(seconds)) {
				report.claimed.push(job.id);
				count(report, await failTooLong(job, store, seconds));
				return { ...report, stoppedBy: 'done' };
			}
			report.claimed.push(job.id);
			count(report, await runner.run(job, store));
			return { ...report, stoppedBy: 'done' };
		} finally {
			slots.release();
		}
	}

	async function drain(store: JobStore, kind: string | null, report: KickReport): Promise<KickReport> {
		const kinds = kind === null ? registry.kinds : registry.get(kind) ? [kind] : [];
		if (kinds.length === 0) return { ...report, stoppedBy: 'no_handler' };
		const runs: Promise<void>[] = [];
		let stoppedBy: KickStop;
		for (;;) {
			if (stopping) {
				stoppedBy = 'shutdown';
				break;
			}
			// The smallest job of a kind (no size) must fit, or claiming one is pointless —
			// unless no isolate could ever fit it: then it is claimed to be failed, not left to block.
			const fitting: string[] = [];
			for (const k of kinds) {
				const smallest = estimateSeconds(await plans.planFor(registry.get(k)!, store));
				if (budget.fits(smallest) || !budget.couldEverFit(smallest)) fitting.push(k);
			}
			if (fitting.length === 0) {
				stoppedBy = 'over_budget';
				break;
			}
			await slots.acquire();
			let job: Job | undefined;
			try {
				if (!stopping) [job] = await store.claimNext({ kinds: fitting, limit: 1, heartbeatMs: runner.heartbeatMs });
			} catch (e) {
				slots.release();
				throw e;
			}
			if (stopping || !job) {
				slots.release();
				stoppedBy = stopping ? 'shutdown' : 'empty';
				break;
			}
			const seconds = await estimate(job, store);
			if (!budget.couldEverFit(seconds)) {
				// No isolate could finish it: given back, it would stop every drain after it.
				report.claimed.push(job.id);
				count(report, await failTooLong(job, store, seconds));
				slots.release();
				continue;
			}
			if (!budget.fits(seconds)) {
				// Its size only shows once claimed: give it back unspent and stop here.
				logger.info(
					`${PREFIX} job ${job.id} needs ~${seconds.toFixed(1)} s, more than this isolate has left: released`,
				);
				await store
					.release(job.id, { attempt: job.attempts })
					.catch((e: unknown) => logger.warn(`${PREFIX} job ${job!.id}: release failed`, e));
				slots.release();
				stoppedBy = 'over_budget';
				break;
			}
			report.claimed.push(job.id);
			const claimed = job;
			runs.push(
				runner
					.run(claimed, store)
					.then((outcome) => count(report, outcome))
					.finally(() => slots.release()),
			);
		}
		await Promise.all(runs);
		return { ...report, stoppedBy };
	}

	async function process(kick: Partial<KickRequest> = {}): Promise<KickReport> {
		const report: KickReport = { claimed: [], outcomes: {}, stoppedBy: 'empty' };
		if (stopping) return { ...report, stoppedBy: 'shutdown' };
		const store = storeFor(kick.jobTable ?? null);
		try {
			return kick.jobId ? await claimNamed(store, kick.jobId, report) : await drain(store, kick.kind ?? null, report);
		} catch (e) {
			if (isJobError(e, 'unknown_job_table')) {
				logger.warn(`${PREFIX} a wake-up named the job table "${store.table}", which does not exist`);
				return { ...report, stoppedBy: 'unknown_table' };
			}
			throw e;
		}
	}

	function keepAlive(work: Promise<unknown>): void {
		inFlight.add(work);
		work.finally(() => inFlight.delete(work)).catch(() => {});
		// On the edge runtime the isolate would otherwise end with the response.
		edgeWaitUntil()?.(work);
	}

	async function handle(req: Request): Promise<Response> {
		if (req.method !== 'POST') return json(405, { error: 'method_not_allowed' }, { allow: 'POST' });
		if (!(await authorized(req))) return json(401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer' });
		let kick: KickRequest;
		try {
			kick = parseKickRequest(await req.text());
		} catch (e) {
			return json(400, { error: 'bad_request', message: (e as Error).message });
		}
		if (stopping) return json(503, { error: 'shutting_down' });
		const work = process(kick).then(
			(report) => {
				if (report.claimed.length > 0 || report.stoppedBy === 'over_budget') {
					logger.info(
						`${PREFIX} wake-up (${kick.reason ?? 'direct'}): claimed ${report.claimed.length}, stopped by ${report.stoppedBy}`,
						report.outcomes,
					);
				}
			},
			(e: unknown) =>
				logger.error(
					`${PREFIX} wake-up (${kick.reason ?? 'direct'}${kick.jobId ? `, job ${kick.jobId}` : ''}) failed`,
					e,
				),
		);
		keepAlive(work);
		return json(202, { accepted: true, mode: kick.jobId ? 'claim' : 'drain', job_id: kick.jobId });
	}

	async function releaseAll(reason = 'the worker is shutting down'): Promise<void> {
		stopping = true;
		await runner.releaseAll(reason);
	}

	const unlisten =
		options.releaseOnUnload === false
			? () => {}
			: onBeforeUnload(() => {
					if (runner.running.size === 0) return;
					const work = releaseAll('the isolate is about to end');
					keepAlive(work);
				});

	const worker = ((req: Request) => handle(req)) as JobWorker;
	Object.defineProperties(worker, {
		fetch: { value: handle },
		process: { value: process },
		idle: {
			value: async () => {
				while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
			},
		},
		releaseAll: { value: releaseAll },
		running: { get: () => runner.running.size },
		close: { value: unlisten },
	});
	return worker;
}
