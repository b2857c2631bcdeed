/**
 * The edge worker: an HTTP handler that a kick (pg_net from the insert
 * trigger, the cron backstop, or anyone holding the secret) wakes up. It
 * answers 202 at once and works in the background, within the isolate's
 * wall clock.
 */
import type { Job } from '../store/job.ts';
import type { JobStore } from '../store/job-store.ts';
import type { RetryBackoff } from './backoff.ts';
import { bearerChecker } from './bearer-secret.ts';
import { edgeWaitUntil, onBeforeUnload } from './edge-runtime.ts';
import type { JobHandler } from './job-handler.ts';
import type { JobOutcome } from './job-runner.ts';
import { KickProcessor } from './kick-processor.ts';
import { parseKickRequest, type KickRequest } from './kick-request.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';

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
	/**
	 * The isolate's wall-clock limit, counted from its start: Supabase kills an
	 * isolate at 150 s on the Free plan and at 400 s on paid plans (set 400_000
	 * there). Infinity for none (a long-lived server). @default 150_000
	 */
	wallClockMs?: number;
	/**
	 * Kept free at the end of the wall clock: no job is claimed that would end
	 * in it, and a job still running when it begins is given back (released,
	 * its attempt not spent) for a fresh isolate. @default 15_000
	 */
	marginMs?: number;
	/** When the isolate started on the performance.now() clock. @default 0 (performance.now() counts from the isolate's start) */
	startedAtMs?: number;
	/** Backoff of retries after an unexpected error. @default { baseSeconds: 2, maxSeconds: 300 } */
	retry?: RetryBackoff;
	/** How often a running tracker phase ticks. @default 1000 */
	tickIntervalMs?: number;
	/**
	 * The project's Realtime plan, which progress ticks stay within (see
	 * runWorkers' `realtimeBudget`; each invocation paces its own jobs). `false`: no pacing.
	 * @default { messagesPerSecond: 100, viewersPerTopic: 1 } (the Free plan)
	 */
	realtimeBudget?: { messagesPerSecond?: number; viewersPerTopic?: number } | false;
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
	/** Stops listening for beforeunload and stops the wall-clock deadline timer. */
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
 * import postgres from 'postgres';
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
	const kicks = new KickProcessor(options, logger);
	const inFlight = new Set<Promise<unknown>>();

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
		if (kicks.stopping) return json(503, { error: 'shutting_down' });
		keepAlive(kicks.process(kick).then(logReport(logger, kick), logFailure(logger, kick)));
		return json(202, { accepted: true, mode: kick.jobId ? 'claim' : 'drain', job_id: kick.jobId });
	}

	const releaseAll = (reason?: string) => kicks.releaseAll(reason);
	const unlisten =
		options.releaseOnUnload === false
			? () => {}
			: onBeforeUnload(() => {
					if (kicks.runner.running.size === 0) return;
					const work = releaseAll('the isolate is about to end');
					keepAlive(work);
				});

	const worker = ((req: Request) => handle(req)) as JobWorker;
	Object.defineProperties(worker, {
		fetch: { value: handle },
		process: { value: (kick?: Partial<KickRequest>) => kicks.process(kick) },
		idle: {
			value: async () => {
				while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
			},
		},
		releaseAll: { value: releaseAll },
		running: { get: () => kicks.runner.running.size },
		close: {
			value: () => {
				unlisten();
				kicks.close();
			},
		},
	});
	return worker;
}

/** Logs what a wake-up did, when it claimed something or stopped for the wall clock. */
function logReport(logger: WorkerLogger, kick: KickRequest): (report: KickReport) => void {
	return (report) => {
		if (report.claimed.length > 0 || report.stoppedBy === 'over_budget') {
			logger.info(
				`${PREFIX} wake-up (${kick.reason ?? 'direct'}): claimed ${report.claimed.length}, stopped by ${report.stoppedBy}`,
				report.outcomes,
			);
		}
	};
}

/** Logs a wake-up that failed (the caller already had its 202). */
function logFailure(logger: WorkerLogger, kick: KickRequest): (e: unknown) => void {
	return (e) =>
		logger.error(`${PREFIX} wake-up (${kick.reason ?? 'direct'}${kick.jobId ? `, job ${kick.jobId}` : ''}) failed`, e);
}
