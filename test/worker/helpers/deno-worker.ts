/**
 * Starts the worker edge function under the real Deno (the npm `deno`
 * package), exactly as `deno run -A` would run it locally, and follows its
 * output line by line so tests can wait on what it logs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const WORKER_SECRET = 'test-jobs-worker-secret-0123456789';
export const FUNCTION_ENTRY = 'functions/jobs-worker/index.ts';
/** The same worker plus test-only kinds (one that exits its process, one that ignores its signal). */
export const TEST_ENTRY = 'test/worker/fixtures/test-worker.ts';

export async function freePort(): Promise<number> {
	const server = createServer();
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	const { port } = server.address() as { port: number };
	server.close();
	await once(server, 'close');
	return port;
}

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
	const child = spawn(
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
			stdio: ['ignore', 'pipe', 'pipe'],
		},
	);
	const lines: string[] = [];
	const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
	const onLine = (line: string) => {
		lines.push(line);
		if (process.env.DEBUG_DENO_WORKER) console.log(`[deno ${child.pid}] ${line}`);
		for (const w of [...waiters]) {
			if (w.pattern.test(line)) {
				waiters.splice(waiters.indexOf(w), 1);
				w.resolve(line);
			}
		}
	};
	createInterface({ input: child.stdout! }).on('line', onLine);
	createInterface({ input: child.stderr! }).on('line', onLine);
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
		child.once('exit', (code, signal) => resolveExit({ code, signal })),
	);

	const waitForLine = (pattern: RegExp, timeoutMs = 30_000) => {
		const seen = lines.find((l) => pattern.test(l));
		if (seen) return Promise.resolve(seen);
		return new Promise<string>((resolveLine, reject) => {
			const timer = setTimeout(
				() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${lines.join('\n')}`)),
				timeoutMs,
			);
			waiters.push({
				pattern,
				resolve: (line) => {
					clearTimeout(timer);
					resolveLine(line);
				},
			});
			void exited.then(({ code, signal }) => {
				clearTimeout(timer);
				reject(
					new Error(`deno exited (${code ?? signal}) before a line matching ${pattern}; output:\n${lines.join('\n')}`),
				);
			});
		});
	};

	await waitForLine(/jobs-worker listening on/);
	const startMs = performance.now() - started;
	const url = `http://127.0.0.1:${port}/`;
	return {
		url,
		process: child,
		lines,
		startMs,
		waitForLine,
		exited,
		post: (body, secret = WORKER_SECRET) =>
			fetch(url, {
				method: 'POST',
				headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
				body: JSON.stringify(body),
			}),
		async stop() {
			if (child.exitCode === null && child.signalCode === null) {
				child.kill('SIGTERM');
				await exited;
			}
		},
	};
}
