/**
 * Wires a worker from the environment and serves it. Kept apart from
 * index.ts so a test can serve the same worker with extra kinds.
 *
 * Environment:
 *   SUPABASE_DB_URL      direct Postgres connection. On Supabase it is set for
 *                        every function and connects as a privileged role that
 *                        holds service_role's grants on the job_* worker
 *                        functions (claim, tick, succeed, fail, retry, release).
 *                        Never hand it a user's connection: RLS would hide the
 *                        jobs and the worker functions would refuse (42501).
 *                        Locally and in the tests it is the superuser URL.
 *   JOBS_WORKER_SECRET   the Bearer secret callers present (the same value as the
 *                        Vault secret supabase_jobs_worker_secret); own secrets
 *                        may not start with SUPABASE_
 *   PORT                 listen port for local runs (`deno run -A`; 0: a free one, printed); hosted
 *                        functions ignore it
 *   JOBS_WORKER_WALL_CLOCK_MS  the isolate's wall clock: 150000 (Supabase Free, the
 *                        default) or 400000 (paid plans); the worker gives its
 *                        jobs back JOBS_WORKER_MARGIN_MS (default 15000) before it
 *   JOBS_WORKER_CONCURRENCY, JOBS_WORKER_HEARTBEAT_MS, JOBS_WORKER_TICK_MS,
 *   JOBS_WORKER_RETRY_BASE_SECONDS  optional tuning (see createWorker)
 */
import postgres from 'postgres';
import { JobStore, postgresAdapter } from 'supabase-jobs';
import { createWorker, type JobHandler, type JobWorker } from 'supabase-jobs/worker';

function env(name: string): string | undefined {
	const value = Deno.env.get(name);
	return value === undefined || value === '' ? undefined : value;
}

function required(name: string): string {
	const value = env(name);
	if (value === undefined) throw new Error(`jobs-worker: set the ${name} environment variable`);
	return value;
}

function number(name: string): number | undefined {
	const value = env(name);
	if (value === undefined) return undefined;
	const n = Number(value);
	if (!Number.isFinite(n) && n !== Infinity) throw new Error(`jobs-worker: ${name} must be a number; got ${value}`);
	return n;
}

/**
 * Builds the worker over SUPABASE_DB_URL and serves it with Deno.serve.
 *
 * @example
 * ```ts
 * import { handlers } from './handlers.ts';
 * serveWorker([...handlers, myTestOnlyHandler]);
 * ```
 */
export function serveWorker(handlers: JobHandler[]): JobWorker {
	// Module scope, one connection: an isolate serves many requests, and a
	// function must not open a pool per request. prepare:false keeps it usable
	// through the transaction pooler too.
	const sql = postgres(required('SUPABASE_DB_URL'), { max: 1, prepare: false, onnotice: () => {} });
	const worker = createWorker({
		store: new JobStore(postgresAdapter(sql)),
		handlers,
		secret: required('JOBS_WORKER_SECRET'),
		wallClockMs: number('JOBS_WORKER_WALL_CLOCK_MS'),
		marginMs: number('JOBS_WORKER_MARGIN_MS'),
		concurrency: number('JOBS_WORKER_CONCURRENCY'),
		heartbeatMs: number('JOBS_WORKER_HEARTBEAT_MS'),
		tickIntervalMs: number('JOBS_WORKER_TICK_MS'),
		retry: { baseSeconds: number('JOBS_WORKER_RETRY_BASE_SECONDS') },
	});
	const port = number('PORT');
	const onListen = ({ hostname, port }: { hostname: string; port: number }) =>
		console.log(`jobs-worker listening on http://${hostname}:${port}/`);
	if (port === undefined) Deno.serve({ onListen }, worker);
	else Deno.serve({ port, hostname: '127.0.0.1', onListen }, worker);
	return worker;
}
