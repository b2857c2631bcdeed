/**
 * The whole demo, as functions `npm run demo` (scripts/demo.ts) and the
 * browser tests share:
 *
 *   embedded PostgreSQL (durable under .local/) -> compat bootstrap + migrations
 *   -> the Deno worker (real `deno` from node_modules running
 *   functions/jobs-worker/index.ts) -> the stand-in (REST, Realtime, functions
 *   proxy to the worker) on one port -> the Vault secrets the kick reads -> the
 *   dispatcher (pg_net and pg_cron, locally) -> the SvelteKit app (adapter-node
 *   build, built when stale).
 *
 * Against a real project (SUPABASE_URL + key) only the app runs: the worker
 * is the deployed jobs-worker function and the kick is pg_net. Local tooling only.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startDispatcher, type Dispatcher } from '../dispatcher.ts';
import { freePort } from '../postgres/embedded.ts';
import { applyCompat, applyDemoSql, applyMigrations, projectRoot } from '../postgres/migrate.ts';
import { createStandin, type Standin } from '../standin/server.ts';
import { startDurablePostgres, type DurablePostgres } from './postgres.ts';
import { run, startChild, supervise, type Child, type SupervisedChild } from './processes.ts';

/** The Supabase CLI's default JWT secret: with it the stand-in's keys are the CLI's well-known demo keys. */
export const DEMO_JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';

export interface DemoStep {
	name: string;
	ms: number;
	/** Ran alongside the others: its time is not on the way to "ready" (only the wait for it is). */
	parallel?: boolean;
}

/**
 * The ports the demo keeps across restarts (an open tab survives a restart:
 * the page's app and the Supabase URL it talks to stay where they were),
 * unless another program holds them.
 */
export const DEMO_PORTS = { app: 5180, standin: 5181 } as const;

/**
 * `preferred` when it is free on 127.0.0.1; otherwise a free port, and `log`
 * says which was taken and which is used instead.
 *
 * @example
 * const port = await portOrFree(5180, 'the app', console.log); // 5180, or e.g. 40321 with a sentence
 */
export async function portOrFree(preferred: number, what: string, log: (m: string) => void): Promise<number> {
	const free = await new Promise<boolean>((resolve) => {
		const probe = createServer();
		probe.unref();
		probe.once('error', () => resolve(false));
		probe.listen(preferred, '127.0.0.1', () => probe.close(() => resolve(true)));
	});
	if (free) return preferred;
	const port = await freePort();
	log(`port ${preferred} is taken (another program?): ${what} uses ${port} this time`);
	return port;
}

export interface DemoStack {
	/** The app. */
	url: string;
	/** 'local': embedded stack; 'supabase': a real project. */
	mode: 'local' | 'supabase';
	supabaseUrl: string;
	anonKey: string;
	/** Superuser connection string (local mode only). */
	databaseUrl: string | null;
	standin: Standin | null;
	dispatcher: Dispatcher | null;
	/** The Deno worker, started again whenever it dies (null against a real project). */
	worker: SupervisedChild | null;
	/** The app (null when started with `app: false`). */
	app: Child | null;
	/**
	 * Serves the same build again, on a free port, with the given Node binary
	 * (e.g. Node 24 beside the test's Node 20), against the same Supabase;
	 * stopped with the stack.
	 */
	serveAppWith(node: string): Promise<{ app: Child; url: string }>;
	/** How long each step took. */
	steps: DemoStep[];
	/** Sends SIGTERM to every child now (synchronous: for a signal handler). */
	killChildren(): void;
	/** Stops everything it started, in reverse order. */
	stop(): Promise<void>;
}

export interface LocalDemoOptions {
	/** Use this database (tests) instead of the durable embedded cluster. */
	databaseUrl?: string;
	/** The durable cluster's directory. @default <root>/.local/demo-postgres */
	dataDir?: string;
	/** App port; 0 or absent picks a free one. */
	appPort?: number;
	/** The Node binary that serves the app. @default this process's */
	appNode?: string;
	/** The stand-in's port (the Supabase URL the browser talks to); 0 or absent picks a free one. */
	standinPort?: number;
	/** The model-call stand-in per chunk (DEMO_MODEL_MS). @default 300 */
	modelMs?: number;
	/** The worker's tick interval (JOBS_WORKER_TICK_MS). @default 250 */
	workerTickMs?: number;
	/** The heartbeat the worker declares at claim (JOBS_WORKER_HEARTBEAT_MS). @default the worker's own (5000) */
	workerHeartbeatMs?: number;
	/** Serve the app; false starts everything but the app (no build): its `url` is then the stand-in's. @default true */
	app?: boolean;
	/** Progress messages. */
	log?: (message: string) => void;
	/** Every line the children print. */
	echo?: (name: string, line: string) => void;
	root?: string;
}

function stopwatch(steps: DemoStep[], log: (m: string) => void) {
	return async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
		const started = performance.now();
		const value = await fn();
		const ms = performance.now() - started;
		steps.push({ name, ms });
		log(`${name} (${duration(ms)})`);
		return value;
	};
}

/** "40 ms", "3.1 s". */
export function duration(ms: number): string {
	return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The app build, alongside the other steps: says what it did ("built the app
 * in 3.1 s" or "the app build is up to date") as a parallel step; the time
 * the start waits for it afterwards is a step of its own, so the steps on
 * the way to "ready" add up to the total.
 */
function buildAlongside(root: string, steps: DemoStep[], log: (m: string) => void): () => Promise<void> {
	const started = performance.now();
	const building = ensureAppBuilt(root).then((built) => {
		const ms = performance.now() - started;
		const name = built ? `built the app (vite build) in ${duration(ms)}` : 'the app build is up to date';
		steps.push({ name, ms, parallel: true });
		log(built ? name : `${name} (checked in ${duration(ms)})`);
	});
	building.catch(() => {});
	return async () => {
		const waitStarted = performance.now();
		await building;
		const ms = performance.now() - waitStarted;
		if (ms >= 1) {
			steps.push({ name: 'waited for the app build', ms });
			log(`waited for the app build (${duration(ms)})`);
		}
	};
}

async function newestMtime(path: string): Promise<number> {
	const s = await stat(path);
	if (!s.isDirectory()) return s.mtimeMs;
	let newest = s.mtimeMs;
	for (const entry of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, entry)));
	return newest;
}

/**
 * Builds the app (vite build, adapter-node) unless build/ is newer than every
 * source it comes from. Returns whether it built.
 */
export async function ensureAppBuilt(root = projectRoot): Promise<boolean> {
	const built = await stat(join(root, 'build/handler.js')).then(
		(s) => s.mtimeMs,
		() => 0,
	);
	const sources = await Promise.all(
		['src', 'svelte.config.js', 'vite.config.ts', 'package.json'].map((p) => newestMtime(join(root, p)).catch(() => 0)),
	);
	if (built > Math.max(...sources)) return false;
	await run(process.execPath, [resolve(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], {
		cwd: root,
	});
	return true;
}

/** Serves build/ with `node` (this process's by default), with the Supabase the browser talks to in its environment. */
async function startApp(
	root: string,
	port: number,
	env: Record<string, string>,
	echo?: (name: string, line: string) => void,
	node: string = process.execPath,
): Promise<{ app: Child; url: string }> {
	const url = `http://127.0.0.1:${port}`;
	const app = startChild('app', node, [join(root, 'build/index.js')], {
		cwd: root,
		env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ORIGIN: url, ...env },
		echo: echo && ((line) => echo('app', line)),
	});
	await app.waitForLine(/Listening on/);
	return { app, url };
}

/**
 * Starts the Deno worker on a free port, supervised as the edge runtime
 * would (a worker that dies is started again on the same port); resolves
 * once it listens. Its child and its stop join `children` and `cleanups`.
 */
async function startDemoWorker(
	at: {
		root: string;
		databaseUrl: string;
		workerSecret: string;
		options: LocalDemoOptions;
		log: (line: string) => void;
	},
	children: Child[],
	cleanups: (() => Promise<void>)[],
): Promise<{ child: SupervisedChild; url: string }> {
	const { root, databaseUrl, workerSecret, options, log } = at;
	const port = await freePort();
	const child = supervise(
		'worker',
		(keep) =>
			startChild(
				'worker',
				join(root, 'node_modules/.bin/deno'),
				['run', '-A', '--config', 'functions/jobs-worker/deno.json', 'functions/jobs-worker/index.ts'],
				{
					cwd: root,
					env: {
						...process.env,
						NO_COLOR: '1',
						DENO_NO_UPDATE_CHECK: '1',
						SUPABASE_DB_URL: databaseUrl,
						JOBS_WORKER_SECRET: workerSecret,
						PORT: String(port),
						// A long-lived local server, not an isolate with a wall clock.
						JOBS_WORKER_WALL_CLOCK_MS: 'Infinity',
						JOBS_WORKER_TICK_MS: String(options.workerTickMs ?? 250),
						...(options.workerHeartbeatMs ? { JOBS_WORKER_HEARTBEAT_MS: String(options.workerHeartbeatMs) } : {}),
						DEMO_MODEL_MS: String(options.modelMs ?? process.env.DEMO_MODEL_MS ?? 300),
					},
					echo: (line) => {
						keep(line);
						options.echo?.('worker', line);
					},
				},
			),
		{ log },
	);
	children.push(child);
	cleanups.push(() => child.stop());
	await child.waitForLine(/jobs-worker listening on/);
	return { child, url: `http://127.0.0.1:${port}` };
}

/** Points the database at the worker (Vault: its URL through the stand-in, its bearer secret): inserts kick it from then on. */
async function setWorkerSecrets(databaseUrl: string, standinUrl: string, workerSecret: string): Promise<void> {
	const { default: postgres } = await import('postgres');
	const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
	try {
		await sql.begin(async (tx) => {
			await tx`delete from vault.secrets where name in ('supabase_jobs_worker_url', 'supabase_jobs_worker_secret')`;
			await tx`select vault.create_secret(${`${standinUrl}/functions/v1/jobs-worker`}, 'supabase_jobs_worker_url', 'supabase-jobs worker endpoint (local demo)')`;
			await tx`select vault.create_secret(${workerSecret}, 'supabase_jobs_worker_secret', 'supabase-jobs worker bearer secret (local demo)')`;
		});
	} finally {
		await sql.end();
	}
}

/** The compat bootstrap, the package's migrations, then the demo's own table and kinds. */
async function applySchema(databaseUrl: string, log: (line: string) => void): Promise<void> {
	await applyCompat(databaseUrl);
	const applied = await applyMigrations(databaseUrl);
	if (applied.length) log(`  applied ${applied.join(', ')}`);
	// The demo's own table and kinds, after the package's schema.
	await applyDemoSql(databaseUrl);
}

/** The dispatcher (pg_net, pg_cron) on the database; its errors logged, its stop joining `cleanups`. */
async function startDemoDispatcher(
	databaseUrl: string,
	log: (line: string) => void,
	cleanups: (() => Promise<void>)[],
) {
	const d = await startDispatcher({ url: databaseUrl });
	d.on('error', (e: Error) => log(`dispatcher: ${e.message}`));
	cleanups.push(() => d.stop());
	return d;
}

/** The app's environment against the stand-in: its URL and anon key, and how the demo signs in. */
function demoAppEnv(standin: Standin, databaseUrl: string): Record<string, string> {
	return {
		PUBLIC_SUPABASE_URL: standin.url,
		PUBLIC_SUPABASE_ANON_KEY: standin.anonKey,
		DEMO_AUTH: 'standin',
		DEMO_STANDIN_JWT_SECRET: DEMO_JWT_SECRET,
		DEMO_STANDIN_DATABASE_URL: databaseUrl,
	};
}

/** Kills every child, then runs the cleanups newest first (a failing one is logged, the rest still run). */
async function stopEverything(children: Child[], cleanups: (() => Promise<void>)[], log: (line: string) => void) {
	for (const c of children) c.kill();
	while (cleanups.length) await cleanups.pop()!().catch((e: unknown) => log(`while stopping: ${String(e)}`));
}

/**
 * Starts the whole local stack and returns once the app answers.
 *
 * @example
 * const demo = await startLocalDemo({ log: console.log });
 * console.log(demo.url);
 * await demo.stop();
 */
export async function startLocalDemo(options: LocalDemoOptions = {}): Promise<DemoStack> {
	const root = options.root ?? projectRoot;
	const log = options.log ?? (() => {});
	const steps: DemoStep[] = [];
	const step = stopwatch(steps, log);
	const cleanups: (() => Promise<void>)[] = [];
	const children: Child[] = [];
	const stopAll = () => stopEverything(children, cleanups, log);
	try {
		const withApp = options.app !== false;
		const appBuilt = withApp ? buildAlongside(root, steps, log) : async () => {};

		let pg: DurablePostgres | null = null;
		const databaseUrl =
			options.databaseUrl ??
			(await step('PostgreSQL started', async () => {
				pg = await startDurablePostgres(options.dataDir ?? join(root, '.local/demo-postgres'));
				cleanups.push(() => pg!.stop());
				return pg.url;
			}));
		await step('compat bootstrap and migrations applied', () => applySchema(databaseUrl, log));

		const workerSecret = randomBytes(24).toString('base64url');
		const worker = await step('Deno worker listening', () =>
			startDemoWorker({ root, databaseUrl, workerSecret, options, log }, children, cleanups),
		);

		const standin = await step('stand-in (REST, Realtime, functions) listening', async () => {
			const s = await createStandin({
				port: options.standinPort,
				databaseUrl,
				jwtSecret: DEMO_JWT_SECRET,
				functions: { 'jobs-worker': { url: worker.url, verifyJwt: false } },
			});
			cleanups.push(() => s.close());
			return s;
		});

		await step('Vault secrets set (inserts kick the worker)', () =>
			setWorkerSecrets(databaseUrl, standin.url, workerSecret),
		);

		const dispatcher = await step('dispatcher (pg_net, pg_cron) running', () =>
			startDemoDispatcher(databaseUrl, log, cleanups),
		);

		await appBuilt();
		const appEnv = demoAppEnv(standin, databaseUrl);
		const serve = async (port: number, node?: string) => {
			const started = await startApp(root, port, appEnv, options.echo, node);
			children.push(started.app);
			cleanups.push(() => started.app.stop());
			return started;
		};
		const stack: DemoStack = {
			url: standin.url,
			mode: 'local',
			supabaseUrl: standin.url,
			anonKey: standin.anonKey,
			databaseUrl,
			standin,
			dispatcher,
			worker: worker.child,
			app: null,
			serveAppWith: async (node) => serve(await freePort(), node),
			steps,
			killChildren: () => children.forEach((c) => c.kill()),
			stop: stopAll,
		};
		if (!withApp) return stack;
		const { app, url } = await step('app listening', async () =>
			serve(options.appPort || (await freePort()), options.appNode),
		);
		return { ...stack, url, app };
	} catch (e) {
		await stopAll();
		throw e;
	}
}

/**
 * Serves the same app against a real Supabase project: no stand-in, no
 * embedded database, no local worker (deploy jobs-worker; the kick is pg_net).
 *
 * @example
 * await startRemoteDemo({ supabaseUrl: process.env.SUPABASE_URL!, anonKey: process.env.SUPABASE_ANON_KEY! });
 */
export async function startRemoteDemo(options: {
	supabaseUrl: string;
	anonKey: string;
	appPort?: number;
	log?: (message: string) => void;
	echo?: (name: string, line: string) => void;
	root?: string;
}): Promise<DemoStack> {
	const root = options.root ?? projectRoot;
	const steps: DemoStep[] = [];
	const step = stopwatch(steps, options.log ?? (() => {}));
	await buildAlongside(root, steps, options.log ?? (() => {}))();
	const env = { PUBLIC_SUPABASE_URL: options.supabaseUrl, PUBLIC_SUPABASE_ANON_KEY: options.anonKey };
	const { app, url } = await step('app listening', async () =>
		startApp(root, options.appPort || (await freePort()), env, options.echo),
	);
	const apps = [app];
	return {
		url,
		mode: 'supabase',
		supabaseUrl: options.supabaseUrl,
		anonKey: options.anonKey,
		databaseUrl: null,
		standin: null,
		dispatcher: null,
		worker: null,
		app,
		serveAppWith: async (node) => {
			const started = await startApp(root, await freePort(), env, options.echo, node);
			apps.push(started.app);
			return started;
		},
		steps,
		killChildren: () => apps.forEach((a) => a.kill()),
		stop: async () => void (await Promise.all(apps.map((a) => a.stop()))),
	};
}
