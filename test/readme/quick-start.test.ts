/**
 * The README's quick start, followed as written. A SvelteKit app is made of
 * the section's code blocks verbatim (a block whose first line names a path
 * becomes that file, so editing the README changes this test) plus only what a user
 * has anyway: the SvelteKit skeleton (config, app.html, .env). The worker runs
 * init's own handlers.ts, unchanged. The package comes from `npm pack`, installed as a
 * dependency; `npx supabase-jobs init` writes the function and the
 * migrations, which are applied to a fresh database as `supabase db push`
 * would; the Vault secrets are the README's SQL. Supabase's services are the
 * local stand-in (REST, Realtime, Auth, functions) and pg_net/pg_cron the
 * local dispatcher; the worker is init's function under Deno.
 *
 * Then chromium signs in (the form's anonymous sign-in), enqueues, sees the
 * bar move through at least three values before Done, and cancels a second
 * job. The same build, served by Node 24, runs a job to Done too. Last, the
 * same function boots under Deno 2.1.4, what hosted Edge Functions run, with
 * the package resolved as a registry install leaves it.
 *
 * The user's Node is the floor of `engines` (exactly the version it names):
 * npm, npx, svelte-check, vite and the app's server all run on it, and the
 * README's `npm i` prints no EBADENGINE there.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDispatcher, type Dispatcher } from '../../src/local/dispatcher.ts';
import { startChild, type Child } from '../../src/local/demo/processes.ts';
import { freePort } from '../../src/local/postgres/embedded.ts';
import { applyCompat, applyMigrations, listMigrations, withDatabase } from '../../src/local/postgres/migrate.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { HANDLERS_TEMPLATE, KINDS_TEMPLATE } from '../../bin/templates.mjs';
import { launchChromium, snap } from '../e2e/browser.ts';
import { FLOOR_VERSION, NODE24, NODE_FLOOR, nodeVersion } from '../helpers/nodes.ts';
import { SUPABASE_CONFIG } from '../package/consumer-files.ts';
import { packInto } from '../package/pack.ts';
import { APP_DEPENDENCIES, SKELETON } from './quick-start-app.ts';
import { FUNCTION_NPM_IMPORTS } from '../../bin/npm-pins.mjs';
import {
	codeBlocks,
	packageName,
	readmeInstallLine,
	readmeQuickStart,
	readmeRange,
	type CodeBlock,
} from './quick-start-blocks.ts';

const exec = promisify(execFile);
const repo = resolve('.');
const JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';
/** The user's Node, the floor of `engines`; npm and npx run on it through PATH. */
const USER_NODE = NODE_FLOOR;
const ON_USER_NODE = { PATH: `${dirname(USER_NODE)}${delimiter}${process.env.PATH}` };
/** An install, a Vite build, a cold Deno start: each can take a minute on a busy 2-core machine. */
const SLOW = 240_000;

let work: string;
let app: string;
let blocks: CodeBlock[];
let initOutput: string;
let secret: string;
/** What the README's `npm i` line printed. */
let installLog = '';
let databaseUrl: string;
let dbName: string;
let standin: Standin | null = null;
let dispatcher: Dispatcher | null = null;
let browser: { browser: Browser; close(): Promise<void> } | null = null;
const children: Child[] = [];
/** Milliseconds of each step from `npm i` on, for the closing figures. */
const steps: [string, number][] = [];

async function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
	try {
		return await exec(command, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
	} catch (e) {
		const { stdout, stderr } = e as { stdout?: string; stderr?: string };
		throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: e });
	}
}

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
	const started = performance.now();
	const value = await fn();
	steps.push([name, performance.now() - started]);
	return value;
}

async function write(path: string, text: string) {
	await mkdir(dirname(join(app, path)), { recursive: true });
	await writeFile(join(app, path), text);
}

async function installedVersion(name: string): Promise<string> {
	return JSON.parse(await readFile(join(repo, 'node_modules', name, 'package.json'), 'utf8')).version;
}

function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Child {
	const child = startChild(name, command, args, {
		cwd: app,
		env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', ...env },
	});
	children.push(child);
	return child;
}

/** Starts init's function under `deno`; its base URL once it listens. */
async function startFunction(deno: string, env: NodeJS.ProcessEnv = {}): Promise<{ url: string; child: Child }> {
	const port = await freePort();
	const child = start('jobs-worker', deno, ['run', '-A', 'supabase/functions/jobs-worker/index.ts'], {
		SUPABASE_DB_URL: databaseUrl,
		JOBS_WORKER_SECRET: secret,
		PORT: String(port),
		...env,
	});
	await child.waitForLine(/jobs-worker listening on/, 120_000);
	return { url: `http://127.0.0.1:${port}`, child };
}

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), 'sj-readme-'));
	app = join(work, 'app');
	blocks = codeBlocks(await readmeQuickStart());
	const tarball = await packInto(work, repo);

	// The app as the user has it before the quick start: SvelteKit, and `supabase init` done.
	const dependencies: Record<string, string> = {};
	for (const name of APP_DEPENDENCIES) dependencies[name] = await installedVersion(name);
	await write(
		'package.json',
		JSON.stringify({ name: 'readme-app', version: '1.0.0', private: true, type: 'module', dependencies }, null, 2),
	);
	for (const [path, text] of Object.entries(SKELETON)) await write(path, text);
	await write('supabase/config.toml', SUPABASE_CONFIG);
	const npm = ['--prefer-offline', '--no-audit', '--no-fund'];
	await timed('npm i (the app’s own dependencies)', () => sh('npm', ['install', ...npm], app, ON_USER_NODE));

	// The README's commands, in order: its `npm i` line, the package from the tarball. The driver
	// and zod exactly as the line names them (unpinned: the registry's latest, asked afresh), as the
	// user gets them; the others at the repository's versions (already in the npm cache).
	const packages = await readmeInstallLine();
	expect(packages[0]).toBe('supabase-jobs');
	const asWritten = new Set<string>(FUNCTION_NPM_IMPORTS);
	const others = await Promise.all(
		packages.slice(1).map(async (n) => (asWritten.has(packageName(n)) ? n : `${n}@${await installedVersion(n)}`)),
	);
	const online = ['--prefer-online', '--no-audit', '--no-fund'];
	const readmeInstall = await timed(`npm i ${packages.join(' ')}`, () =>
		sh('npm', ['install', ...online, tarball, ...others], app, ON_USER_NODE),
	);
	installLog = `${readmeInstall.stdout}\n${readmeInstall.stderr}`;
	initOutput = await timed(
		'npx supabase-jobs init',
		async () => (await sh('npx', ['--no-install', 'supabase-jobs', 'init'], app, ON_USER_NODE)).stdout,
	);
	secret = /^ {4}([A-Za-z0-9_-]{43})$/m.exec(initOutput)?.[1] ?? '';

	// The README's files, verbatim (what it shows of kinds.ts is checked against init's below); init's handlers.ts as written.
	for (const block of blocks) {
		if (block.file && !block.file.startsWith('supabase/')) await write(block.file, block.code);
	}

	// `supabase db push`: init's migrations, in order, on a database with what a Supabase project has.
	dbName = `sj_readme_${process.pid}_${Date.now()}`;
	const admin = postgres(inject('adminUrl'), { max: 1, onnotice: () => {} });
	await admin.unsafe(`create database ${dbName}`);
	await admin.end();
	databaseUrl = withDatabase(inject('adminUrl'), dbName);
	await timed('supabase db push', async () => {
		await applyCompat(databaseUrl);
		await applyMigrations(databaseUrl, join(app, 'supabase/migrations'));
	});
}, 600_000);

afterAll(async () => {
	await browser?.close();
	await Promise.all(children.map((c) => c.stop()));
	await dispatcher?.stop();
	await standin?.close();
	if (dbName) {
		const admin = postgres(inject('adminUrl'), { max: 1, onnotice: () => {} });
		await admin.unsafe(`drop database if exists ${dbName} with (force)`);
		await admin.end();
	}
	if (work) await rm(work, { recursive: true, force: true });
}, 120_000);

describe('the README quick start, as written', () => {
	it(`runs on the floor of engines, Node ${FLOOR_VERSION}, whose npm i of the README's line warns of no engine`, () => {
		expect(nodeVersion(USER_NODE)).toBe(`v${FLOOR_VERSION}`);
		expect(installLog).not.toMatch(/EBADENGINE/);
		expect(installLog).toMatch(/added \d+ packages/);
	});

	it('installs the driver and zod as its npm i line names them, and init pins those in the function deno.json', async () => {
		const denoJson = JSON.parse(await readFile(join(app, 'supabase/functions/jobs-worker/deno.json'), 'utf8'));
		for (const name of FUNCTION_NPM_IMPORTS) {
			const { version } = JSON.parse(await readFile(join(app, 'node_modules', name, 'package.json'), 'utf8'));
			const range = await readmeRange(name);
			// Named unpinned: the registry's latest, whatever the repository itself installed.
			if (range === 'latest')
				expect(version).toBe((await sh('npm', ['view', `${name}@latest`, 'version'], app)).stdout.trim());
			expect(denoJson.imports[name]).toBe(`npm:${name}@^${version}`);
		}
		expect(initOutput).not.toMatch(/^ {2}! /m);
	});

	it('names every file it shows, and what it shows of kinds.ts is what init writes', async () => {
		expect(blocks.filter((b) => b.file).map((b) => b.file)).toEqual([
			'supabase/functions/jobs-worker/kinds.ts',
			'src/hooks.server.ts',
			'src/lib/jobs.ts',
			'src/routes/+page.server.ts',
			'src/routes/+page.svelte',
			'src/routes/jobs/[id]/+page.svelte',
		]);
		const kinds = blocks.find((b) => b.file === 'supabase/functions/jobs-worker/kinds.ts')!;
		const written = await readFile(join(app, 'supabase/functions/jobs-worker/kinds.ts'), 'utf8');
		expect(written).toBe(KINDS_TEMPLATE);
		// The worker runs init's handlers, as init wrote them: the bar the test watches is theirs.
		expect(await readFile(join(app, 'supabase/functions/jobs-worker/handlers.ts'), 'utf8')).toBe(HANDLERS_TEMPLATE);
		// Shown as init writes it, its comments left out (the first line, its path, too).
		const uncommented = (text: string) =>
			text
				.split('\n')
				.filter((l) => !/^\s*\/\//.test(l))
				.join('\n');
		expect(uncommented(written)).toContain(uncommented(kinds.code));
		// The commands it lists are the ones this test ran, and init printed the steps it lists.
		const commands = blocks.find((b) => b.lang === 'sh')!.code;
		expect(commands).toMatch(/^npx supabase-jobs init\b/m);
		expect(commands).toMatch(/^supabase db push\b/m);
		expect(commands).toMatch(/^supabase secrets set JOBS_WORKER_SECRET=/m);
		expect(commands).toMatch(/^supabase functions deploy jobs-worker\b/m);
		expect(secret).toHaveLength(43);
		const vault = blocks.find((b) => b.lang === 'sql')!.code;
		for (const name of ['supabase_jobs_worker_url', 'supabase_jobs_worker_secret']) {
			expect(vault).toContain(`'${name}'`);
			expect(initOutput).toContain(`'${name}'`);
		}
	});

	it(
		'svelte-check (strict) finds no error in its code',
		async () => {
			await write('.env', 'PUBLIC_SUPABASE_URL=https://project-ref.supabase.co\nPUBLIC_SUPABASE_PUBLISHABLE_KEY=key\n');
			await sh(USER_NODE, ['node_modules/@sveltejs/kit/svelte-kit.js', 'sync'], app);
			const check = await exec(
				USER_NODE,
				['node_modules/svelte-check/bin/svelte-check', '--tsconfig', './tsconfig.json', '--output', 'machine'],
				{ cwd: app, maxBuffer: 64 << 20 },
			).catch((e: { stdout: string }) => e);
			expect(check.stdout.split('\n').filter((l) => / (ERROR|WARNING) /.test(l))).toEqual([]);
			expect(check.stdout).toMatch(/COMPLETED \d+ FILES 0 ERRORS 0 WARNINGS/);
		},
		SLOW,
	);

	it(
		'in chromium: a visitor is signed in, enqueues, sees the bar take at least 3 values before Done, and cancels a second job',
		async () => {
			// Users may enqueue only registered kinds: init's own migration registers the template's,
			// and `supabase db push` applied it.
			const migrations = await listMigrations(join(app, 'supabase/migrations'));
			const texts = await Promise.all(migrations.map((m) => readFile(m.path, 'utf8')));
			expect(texts.some((t) => t.includes("register_job_kind('example.word-count'"))).toBe(true);
			const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
			const [registered] = await sql`
				select count(*)::int as n from supabase_jobs.job_kinds where kind = 'example.word-count'`.finally(() => sql.end());
			expect(registered).toEqual({ n: 1 });

			// Secrets + deploy: the function, under Deno, behind the stand-in's /functions/v1.
			const worker = await timed('supabase functions deploy jobs-worker (deno run)', () =>
				startFunction(join(repo, 'node_modules/.bin/deno'), {
					JOBS_WORKER_TICK_MS: '100',
					JOBS_WORKER_WALL_CLOCK_MS: 'Infinity',
				}),
			);
			standin = await createStandin({
				databaseUrl,
				jwtSecret: JWT_SECRET,
				functions: { 'jobs-worker': { url: worker.url, verifyJwt: false } },
			});
			// The README's Vault statements, with this project's URL and init's secret.
			const vault = blocks
				.find((b) => b.lang === 'sql')!
				.code.replace('https://<project-ref>.supabase.co', standin.url)
				.replace('<the secret init printed>', secret);
			const owner = postgres(databaseUrl, { max: 1, onnotice: () => {} });
			await owner.unsafe(vault).finally(() => owner.end());
			dispatcher = await startDispatcher({ url: databaseUrl, pollIntervalMs: 200 });

			await write('.env', `PUBLIC_SUPABASE_URL=${standin.url}\nPUBLIC_SUPABASE_PUBLISHABLE_KEY=${standin.anonKey}\n`);
			await timed('vite build', () => sh(USER_NODE, ['node_modules/vite/bin/vite.js', 'build'], app));
			const port = await freePort();
			const origin = `http://localhost:${port}`;
			const server = start('app', USER_NODE, ['build'], {
				PORT: String(port),
				HOST: '127.0.0.1',
				ORIGIN: origin,
			});
			await server.waitForLine(/Listening on/, 30_000);

			browser = await launchChromium();
			const page = await browser.browser.newPage();
			const pageErrors: string[] = [];
			page.on('pageerror', (e) => pageErrors.push(e.message));
			// What Realtime answers the browser: the private topic's join must be accepted.
			const received: string[] = [];
			page.on('websocket', (ws) => ws.on('framereceived', (f) => received.push(String(f.payload))));

			// Enqueue: twelve lines, a quarter second each (init's handler, as it comes).
			const enqueuedAt = Date.now();
			const first = await submit(page, origin, Array.from({ length: 12 }, (_, i) => `line ${i} of words`).join('\n'));
			const cookies = await page.context().cookies();
			expect(cookies.map((c) => c.name)).toContain('sb-127-auth-token');
			const frames = await recordBar(page);
			await page.waitForSelector('.sj-progress[data-status=done]', { timeout: 60_000 });
			const seen = await frames();
			const movedAt = seen.find((f) => f.status === 'running' && f.value !== null && f.value > 0)?.t;
			steps.push(['from the form submitted to a moving bar', movedAt === undefined ? NaN : movedAt - enqueuedAt]);
			const values = [...new Set(seen.filter((f) => f.status === 'running' && f.value !== null).map((f) => f.value))];
			await snap(page, 'readme-quick-start-done');
			// At least three values above 0 while it runs, never going back.
			expect(values.filter((v) => v! > 0).length, JSON.stringify(seen)).toBeGreaterThanOrEqual(3);
			expect(values).toEqual([...values].sort((a, b) => a! - b!));
			expect(seen.at(-1)).toMatchObject({ status: 'done', value: 100 });
			// Over Realtime, not the polling fallback: the owner's private topic joined.
			const joins = received.filter((f) => f.includes('phx_reply') && f.includes('realtime:jobs:'));
			expect(
				joins.some((f) => f.includes('"ok"')),
				received.slice(0, 5).join('\n'),
			).toBe(true);
			expect(joins.filter((f) => f.includes('"error"'))).toEqual([]);

			// The job is the visitor's own, in the database.
			const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
			try {
				const [row] = await db`
					select j.status, u.is_anonymous from public.jobs j join auth.users u on u.id = j.owner_id
					where j.id = ${first}`;
				expect(row).toEqual({ status: 'done', is_anonymous: true });

				// A second job, long enough to be cancelled while it runs.
				const second = await submit(page, origin, Array.from({ length: 400 }, (_, i) => `line ${i}`).join('\n'));
				await page.waitForSelector('.sj-progress[data-status=running]', { timeout: 60_000 });
				await page.getByRole('button', { name: 'Cancel' }).click();
				await page.waitForSelector('.sj-progress[data-status=cancelled]', { timeout: 30_000 });
				const owners = await db`select id, status, owner_id from public.jobs where id in (${first}, ${second})`;
				expect(owners.find((r) => r.id === second)?.status).toBe('cancelled');
				// The same visitor: the session the form's sign-in set is the one both requests carried.
				expect(new Set(owners.map((r) => r.owner_id)).size).toBe(1);
			} finally {
				await db.end();
			}
			expect(pageErrors).toEqual([]);
			expect(server.lines.filter((l) => /error/i.test(l) && !/deprecated/i.test(l))).toEqual([]);
			console.log(
				`[figures] README quick start: the bar took ${values.join(', ')} then Done; from npm i to a moving bar:\n${steps
					.map(([name, ms]) => `  ${name}: ${(ms / 1000).toFixed(1)} s`)
					.join('\n')}`,
			);
		},
		SLOW * 2,
	);

	it(
		'the same build served by Node 24: the visitor enqueues and the bar reaches Done',
		async () => {
			expect(nodeVersion(NODE24)).toMatch(/^v24\./);
			expect(browser).not.toBeNull();
			const port = await freePort();
			const origin = `http://localhost:${port}`;
			const server = start('app (Node 24)', NODE24, ['build'], {
				PORT: String(port),
				HOST: '127.0.0.1',
				ORIGIN: origin,
			});
			await server.waitForLine(/Listening on/, 30_000);
			const page = await browser!.browser.newPage();
			const pageErrors: string[] = [];
			page.on('pageerror', (e) => pageErrors.push(e.message));
			const id = await submit(page, origin, 'one two\nthree four five');
			await page.waitForSelector('.sj-progress[data-status=done]', { timeout: 60_000 });
			const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
			const [row] = await db`select status from public.jobs where id = ${id}`.finally(() => db.end());
			expect(row).toEqual({ status: 'done' });
			expect(pageErrors).toEqual([]);
			await server.stop();
			expect(server.lines.filter((l) => /error/i.test(l) && !/deprecated/i.test(l))).toEqual([]);
		},
		SLOW,
	);

	it(
		'init’s function boots under Deno 2.1.4 (hosted Edge Functions), the package resolved as a registry install leaves it, and answers 401 without the secret',
		async () => {
			const d214 = join(work, 'deno-2.1.4');
			await mkdir(d214, { recursive: true });
			await writeFile(join(d214, 'package.json'), '{"name":"d","version":"1.0.0","private":true}');
			await sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', 'deno@2.1.4'], d214);
			const deno = join(d214, 'node_modules/.bin/deno');
			expect((await sh(deno, ['--version'], d214)).stdout).toMatch(/^deno 2\.1\.4\b/);
			// npm wrote `file:<tarball>`; a registry install writes the range. Deno 2.1 with
			// nodeModulesDir "manual" resolves only the latter (node_modules is the same).
			const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8'));
			const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
			expect(manifest.dependencies['supabase-jobs']).toMatch(/^file:/);
			manifest.dependencies['supabase-jobs'] = `^${version}`;
			await writeFile(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
			const { url, child } = await startFunction(deno);
			const res = await fetch(`${url}/`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: '{}',
			});
			expect(res.status).toBe(401);
			await child.stop();
		},
		SLOW,
	);
});

/** Fills the README's form and submits it; the new job's id, from the page it lands on. */
async function submit(page: Page, origin: string, text: string): Promise<string> {
	await page.goto(`${origin}/`);
	await page.locator('textarea[name=text]').fill(text);
	await Promise.all([
		page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/),
		page.getByRole('button', { name: 'Count the words' }).click(),
	]);
	return page.url().split('/').at(-1)!;
}

interface BarFrame {
	t: number;
	status: string;
	value: number | null;
}

/** Records every change of the bar (status and aria-valuenow) in the page, with a MutationObserver: nothing sampled. */
async function recordBar(page: Page): Promise<() => Promise<BarFrame[]>> {
	await page.waitForSelector('.sj-progress [role=progressbar]');
	await page.evaluate(() => {
		const w = window as unknown as { __bar: BarFrame[] };
		w.__bar = [];
		const root = document.querySelector('.sj-progress')!;
		const read = () => {
			const now = root.querySelector('[role=progressbar]')!.getAttribute('aria-valuenow');
			const frame = {
				t: performance.timeOrigin + performance.now(),
				status: root.getAttribute('data-status') ?? '',
				value: now === null ? null : Number(now),
			};
			const last = w.__bar.at(-1);
			if (!last || last.status !== frame.status || last.value !== frame.value) w.__bar.push(frame);
		};
		read();
		new MutationObserver(read).observe(root, { attributes: true, subtree: true });
	});
	return () => page.evaluate(() => (window as unknown as { __bar: BarFrame[] }).__bar);
}
