/**
 * Starts the worker edge function under the real Deno (the npm `deno`
 * package), exactly as `deno run -A` would run it locally, and follows its
 * output line by line so tests can wait on what it logs.
 */
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { startChild } from '../../../src/local/demo/processes.ts';
import { freePort } from '../../../src/local/postgres/embedded.ts';

export { freePort };

export const WORKER_SECRET = 'test-jobs-worker-secret-0123456789';
export const FUNCTION_ENTRY = 'functions/jobs-worker/index.ts';
/** The same worker plus test-only kinds (one that exits its process, one that ignores its signal). */
export const TEST_ENTRY = 'test/worker/fixtures/test-worker.ts';

export interface DenoWorker {
	url: string;
	process: ChildProcess;
	/** Every line written so far (stdout and stderr). */
	lines: string[];
	/** Milliseconds from spawn to "listening". */
	startMs: number;
	/** Resolves with the first line (already written or still to come) matching `pattern`. */
	waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
	/** Resolves with the exit code / signal once the process is gone. */
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	post(body: unknown, secret?: string): Promise<Response>;
	stop(): Promise<void>;
}

export async function startDenoWorker(
	dbUrl: string,
	options: { entry?: string; env?: Record<string, string> } = {},
): Promise<DenoWorker> {
	const port = await freePort();
	const started = performance.now();
	const child = startChild(
		'deno',
		resolve('node_modules/.bin/deno'),
		['run', '-A', '--config', 'functions/jobs-worker/deno.json', options.entry ?? FUNCTION_ENTRY],
		{
			cwd: resolve('.'),
			env: {
				...process.env,
				NO_COLOR: '1',
				DENO_NO_UPDATE_CHECK: '1',
				SUPABASE_DB_URL: dbUrl,
				JOBS_WORKER_SECRET: WORKER_SECRET,
				PORT: String(port),
				// Ticks often, so a test sees several progress frames within a short job.
				JOBS_WORKER_TICK_MS: '40',
				...options.env,
			},
			echo: process.env.DEBUG_DENO_WORKER ? (line) => console.log(`[deno] ${line}`) : undefined,
		},
	);
	await child.waitForLine(/jobs-worker listening on/, 30_000);
	const startMs = performance.now() - started;
	const url = `http://127.0.0.1:${port}/`;
	return {
		url,
		process: child.process,
		lines: child.lines,
		startMs,
		waitForLine: (pattern, timeoutMs = 30_000) => child.waitForLine(pattern, timeoutMs),
		exited: child.exited,
		post: (body, secret = WORKER_SECRET) =>
			fetch(url, {
				method: 'POST',
				headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
				body: JSON.stringify(body),
			}),
		stop: () => child.stop(),
	};
}
