/**
 * The package as a user gets it: `npm pack` (which builds dist/ through
 * prepack), the tarball installed into a throwaway project from the local file
 * (the driver and zod as the README installs them, the registry's latest; its
 * other dependencies at the repository's own versions), then tried the
 * ways people use it: plain Node, strict TypeScript, a SvelteKit app built and
 * served, `init` followed by the generated function under `deno run`, `doctor`
 * from the installed bin. npm installs it on the floor of `engines` (Node
 * 22.x.y exactly, as a user on that Node would: no EBADENGINE); plain Node
 * and the built app's server run on this machine's Node, on that floor and on
 * Node 24. What the tarball holds and how npm and the linters judge it:
 * tarball.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { startChild, type Child } from '../../src/local/demo/processes.ts';
import { freePort } from '../../src/local/postgres/embedded.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { NODE_FLOOR, SERVER_NODES } from '../helpers/nodes.ts';
import { FUNCTION_NPM_IMPORTS } from '../../bin/npm-pins.mjs';
import { readmeRange } from '../readme/quick-start-blocks.ts';
import { packInto } from './pack.ts';
import {
	CONSUMER_DEPENDENCIES,
	consumerTsconfig,
	DENO_CHECK,
	KIT_APP,
	NODE_CHECK,
	SUPABASE_CONFIG,
	TYPED_CONSUMER,
} from './consumer-files.ts';

const exec = promisify(execFile);
const repo = resolve('.');
const SECRET = 'consumer-worker-secret-0123456789abcdef';
/** tsc over every declaration, a Vite build, a cold Deno start: each can take a minute on a busy 2-core machine. */
const SLOW = 180_000;

let db: TestDatabase;
let work: string;
let app: string;
let tarball: string;
let initOutput: string;
/** What `npm install` of the consumer printed, on the floor of `engines`. */
let installLog: string;
const children: Child[] = [];
/** What the app's client is created with (nothing contacts it during server rendering). */
const PUBLIC_ENV = { PUBLIC_SUPABASE_URL: 'http://127.0.0.1:9', PUBLIC_SUPABASE_PUBLISHABLE_KEY: 'publishable-key' };

/** Runs a command to completion; its output, or a failure that shows it. */
async function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
	try {
		return await exec(command, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
	} catch (e) {
		const { stdout, stderr } = e as { stdout?: string; stderr?: string };
		throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: e });
	}
}

async function writeFiles(root: string, files: Record<string, string>) {
	for (const [path, text] of Object.entries(files)) {
		await mkdir(dirname(join(root, path)), { recursive: true });
		await writeFile(join(root, path), text);
	}
}

async function installedVersion(name: string): Promise<string> {
	return JSON.parse(await readFile(join(repo, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** The version the README's `npm i` line installs of `name` today, asked of the registry afresh. */
async function readmeVersion(name: string): Promise<string> {
	const { stdout } = await sh(
		'npm',
		['view', `${name}@${await readmeRange(name)}`, 'version', '--json', '--prefer-online'],
		repo,
	);
	const versions: string | string[] = JSON.parse(stdout);
	return Array.isArray(versions) ? versions.at(-1)! : versions;
}

beforeAll(async () => {
	db = await useTestDatabase();
	work = await mkdtemp(join(tmpdir(), 'sj-consumer-'));
	// Packed once per run; prepack builds dist/ from src/lib (one pack at a time: pack.ts).
	tarball = await packInto(work, repo);

	app = join(work, 'app');
	const dependencies: Record<string, string> = { 'supabase-jobs': `file:${tarball}` };
	// The driver and zod as the README's npm i line installs them (unpinned: the registry's latest);
	// the rest at the repository's own versions.
	const asTheReadme = new Set<string>(FUNCTION_NPM_IMPORTS);
	for (const name of CONSUMER_DEPENDENCIES)
		dependencies[name] = asTheReadme.has(name) ? await readmeVersion(name) : await installedVersion(name);
	await writeFiles(app, {
		'package.json': JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module', dependencies }),
		'node-check.mjs': NODE_CHECK,
		'typed.ts': TYPED_CONSUMER,
		'tsconfig.nodenext.json': consumerTsconfig('nodenext'),
		'tsconfig.bundler.json': consumerTsconfig('bundler'),
		'supabase/config.toml': SUPABASE_CONFIG,
		...KIT_APP,
	});
	// npm runs on the Node first on PATH: the floor of `engines`, whose engine checks it applies.
	const onFloor = { PATH: `${dirname(NODE_FLOOR)}${delimiter}${process.env.PATH}` };
	const install = await sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app, onFloor);
	installLog = `${install.stdout}\n${install.stderr}`;
	// The project as `supabase init` + `npx supabase-jobs init` leave it (the app imports its kinds module).
	initOutput = (await sh(join(app, 'node_modules/.bin/supabase-jobs'), ['init'], app)).stdout;
}, 300_000);

afterAll(async () => {
	await Promise.all(children.map((c) => c.stop()));
	if (work) await rm(work, { recursive: true, force: true });
});

function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Child {
	const child = startChild(name, command, args, {
		cwd: app,
		env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', ...env },
	});
	children.push(child);
	return child;
}

describe('the packed package', () => {
	it('npm install on the floor of engines, with the app dependencies of the README, warns of no engine', () => {
		expect(installLog).not.toMatch(/EBADENGINE/);
		expect(installLog).toMatch(/added \d+ packages/);
	});

	for (const node of SERVER_NODES) {
		it(`plain node on ${node.name} (no loader) imports every entry but svelte, runs enqueue → claim → succeed → get, and creates a server's supabase-js client`, async () => {
			const { stdout } = await sh(node.path, ['node-check.mjs'], app, { DATABASE_URL: db.url });
			const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
			expect(out.node).toMatch(new RegExp(`^v${node.major}\\.`));
			expect(out.entries).toEqual({
				main: expect.any(Number),
				worker: 'function',
				node: 'function',
				kit: 'function',
				adapter: 'function',
			});
			expect(out.entries.main).toBeGreaterThan(20);
			expect(out.entries.main).toBeLessThanOrEqual(60);
			expect(out.statuses).toEqual(['queued', 'running', 'done', 'done']);
			const [row] = await db.sql`select status, params from jobs where id = ${out.id}`;
			expect(row).toEqual({ status: 'done', params: { n: 7 } });
		});
	}

	for (const resolution of ['nodenext', 'bundler'] as const) {
		it(
			`tsc --noEmit, strict + exactOptionalPropertyTypes + noPropertyAccessFromIndexSignature, moduleResolution ${resolution}: 0 errors`,
			async () => {
				const tsc = join(app, 'node_modules/typescript/bin/tsc');
				const stdout = await exec(process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`, '--pretty', 'false'], {
					cwd: app,
					maxBuffer: 64 << 20,
				}).then(
					(r) => r.stdout,
					(e: { stdout?: string }) => e.stdout ?? String(e),
				);
				// Every diagnostic counts but one upstream clash: @sveltejs/kit 2's
				// declarations read `cookie` as @types/cookie 0.6 describes it, while
				// @supabase/ssr hoists cookie 1 with types of its own, which TypeScript
				// finds first. Any app with both and skipLibCheck: false sees it, with
				// or without this package (SvelteKit's own tsconfig skips lib checks).
				const kitCookieClash =
					/^node_modules\/@sveltejs\/kit\/types\/index\.d\.ts\(\d+,\d+\): error TS2694: Namespace '"[^"]*\/node_modules\/cookie\/dist\/index"' has no exported member 'Cookie(Parse|Serialize)Options'\.$/;
				const problems = stdout.split('\n').filter((line) => line.trim() !== '' && !kitCookieClash.test(line.trim()));
				expect(problems).toEqual([]);
			},
			SLOW,
		);
	}

	it(
		'vite build of the SvelteKit app, on the floor of engines (the build every Node below serves)',
		async () => {
			await sh(NODE_FLOOR, ['node_modules/vite/bin/vite.js', 'build'], app);
			await expect(readFile(join(app, 'build/index.js'), 'utf8')).resolves.toContain('Listening on');
		},
		SLOW,
	);

	for (const node of SERVER_NODES) {
		it(
			`a SvelteKit app in the README's shape (createServerClient in hooks, WatchedJob over a browser-only client): node build on ${node.name} renders the bar on the server`,
			async () => {
				const port = await freePort();
				const server = start(`node build (${node.name})`, node.path, ['build'], {
					PORT: String(port),
					HOST: '127.0.0.1',
					...PUBLIC_ENV,
				});
				await server.waitForLine(/Listening on/, 30_000);
				const res = await fetch(`http://127.0.0.1:${port}/`);
				const html = await res.text();
				expect(res.status, html).toBe(200);
				expect(html).toContain('<h1>example.word-count</h1>');
				expect(html).toMatch(/role="progressbar"[^>]*aria-valuenow="42"|aria-valuenow="42"[^>]*role="progressbar"/);
				expect(html).toContain('Counting words');
				await server.stop();
				expect(server.lines.filter((l) => /Error|WebSocket/.test(l))).toEqual([]);
			},
			SLOW,
		);
	}

	it(
		'the same app under vite dev: the page is served (HTTP 200) and the optimised supabase-jobs/svelte loads',
		async () => {
			const port = await freePort();
			const dev = start(
				'vite dev',
				process.execPath,
				['node_modules/vite/bin/vite.js', 'dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
				PUBLIC_ENV,
			);
			await dev.waitForLine(/Local:/, 60_000);
			const base = `http://127.0.0.1:${port}`;
			const page = await fetch(`${base}/`);
			expect(page.status).toBe(200);
			expect(await page.text()).toMatch(/aria-valuenow="42"/);
			// The browser's copy of the page imports the package through Vite's dependency optimiser.
			const component = await (await fetch(`${base}/src/routes/+page.svelte`)).text();
			const optimised = /["'](\/node_modules\/\.vite\/deps\/supabase-jobs_svelte\.js[^"']*)["']/.exec(component)?.[1];
			expect(optimised).toBeDefined();
			const dep = await fetch(`${base}${optimised}`);
			expect(dep.status).toBe(200);
			expect(await dep.text()).toContain('WatchedJob');
			expect(dev.lines.filter((l) => /error/i.test(l))).toEqual([]);
			await dev.stop();
		},
		SLOW,
	);

	it(
		'npx supabase-jobs init, then deno run of the generated function: 401 without the secret; with it a queued job is claimed and finished',
		async () => {
			expect(initOutput).toContain('supabase/functions/jobs-worker/deno.json');
			expect(initOutput.match(/^ {4}[A-Za-z0-9_-]{43}$/gm)).toHaveLength(1); // the secret, once
			const denoJson = JSON.parse(await readFile(join(app, 'supabase/functions/jobs-worker/deno.json'), 'utf8'));
			const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
			expect(denoJson.imports['supabase-jobs']).toBe(`npm:supabase-jobs@${version}`);

			const port = await freePort();
			const deno = start(
				'deno',
				join(repo, 'node_modules/.bin/deno'),
				['run', '-A', 'supabase/functions/jobs-worker/index.ts'],
				{
					SUPABASE_DB_URL: db.url,
					JOBS_WORKER_SECRET: SECRET,
					PORT: String(port),
				},
			);
			await deno.waitForLine(/jobs-worker listening on/, 60_000);
			const post = (body: unknown, secret?: string) =>
				fetch(`http://127.0.0.1:${port}/`, {
					method: 'POST',
					headers: { 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
					body: JSON.stringify(body),
				});
			expect((await post({})).status).toBe(401);

			const store = new JobStore(postgresAdapter(db.sql));
			const job = await store.enqueue('example.word-count', { params: { text: 'one two three\nfour five' } });
			expect((await post({ job_id: job.id, job_table: 'jobs', kind: job.kind }, SECRET)).status).toBe(202);
			let last = job;
			for await (const j of store.watch(job.id, { emitOn: ['status'] })) last = j;
			expect(last).toMatchObject({ status: 'done', attempts: 1, error: null });
			await deno.stop();
		},
		SLOW,
	);

	it(
		"deno run through the function's import map: supabase-jobs, /worker, /adapter and /kit import by their bare names",
		async () => {
			const fn = join(app, 'supabase/functions/jobs-worker');
			await writeFile(join(fn, 'deno-check.ts'), DENO_CHECK);
			const { stdout } = await sh(join(repo, 'node_modules/.bin/deno'), ['run', '-A', 'deno-check.ts'], fn, {
				NO_COLOR: '1',
				DENO_NO_UPDATE_CHECK: '1',
			});
			expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
				main: 'function',
				worker: 'function',
				adapter: 'function',
				kit: 'function',
			});
		},
		SLOW,
	);

	it('npx supabase-jobs doctor runs from the installed package: its own migrations, the app kinds.ts, one line per check', async () => {
		// The test database has every migration and check but the Vault secrets (none set here).
		const run = await exec(join(app, 'node_modules/.bin/supabase-jobs'), ['doctor', '--db-url', db.url], {
			cwd: app,
		}).then(
			(r) => ({ code: 0, stdout: r.stdout }),
			(e: { code: number; stdout: string }) => e,
		);
		const marks = run.stdout.match(/^[✓✗–] [^:]+/gm);
		expect(marks, run.stdout).toEqual([
			'✓ migrations',
			'✓ pg_net',
			'✓ pg_cron',
			'✓ schedules',
			'✗ Vault secrets',
			'– worker function',
			'✓ kinds',
			'✓ worker packages',
			'✓ Realtime policies',
			'✓ realtime.messages partitions',
			'✓ max_rows',
			'✓ anonymous sign-ins',
		]);
		expect(run.stdout).toContain('example.word-count');
		expect(run.code).toBe(1);
	});
});
