/**
 * `npx supabase-jobs init` / `upgrade` into scratch Supabase-shaped folders:
 * the package's migrations (not the demo's) with fresh timestamps, the worker
 * function on bare imports mapped by its deno.json (exact version), the config
 * entry through a TOML parser; a second version adds only what is missing; it
 * never overwrites; and what it wrote applies cleanly to a fresh database.
 */
import postgres from 'postgres';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
	init,
	migrationTimestamp,
	nextSteps,
	packageEntries,
	packageMigrations,
	rewriteImports,
} from '../../bin/init.mjs';
import { kindNamesIn } from '../../bin/kinds-file.mjs';
import { newestAlternative } from '../../bin/npm-pins.mjs';
import { HANDLERS_TEMPLATE, KINDS_TEMPLATE, kindsMigration } from '../../bin/templates.mjs';
import { applyCompat, applyMigrations, withDatabase } from '../../src/local/postgres/migrate.ts';

const run = promisify(execFile);
const bin = resolve('bin/supabase-jobs.mjs');
const USER_MIGRATION = '20250101000000_create_profiles.sql';
const USER_CONFIG = 'project_id = "scratch"\n\n[api]\nport = 54321\n';
const { version, dependencies } = JSON.parse(await readFile('package.json', 'utf8')) as {
	version: string;
	dependencies: Record<string, string>;
};

const scratch: string[] = [];
let project: string;

async function scratchProject(config = USER_CONFIG): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), 'sj-init-'));
	scratch.push(dir);
	await mkdir(join(dir, 'supabase/migrations'), { recursive: true });
	await writeFile(join(dir, 'supabase/config.toml'), config);
	await writeFile(
		join(dir, 'supabase/migrations', USER_MIGRATION),
		'create table public.profiles (id uuid primary key, name text);\n',
	);
	return dir;
}

beforeAll(async () => {
	project = await scratchProject();
});
afterAll(async () => {
	await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
});

describe('npx supabase-jobs init', () => {
	it('writes the package migrations (not the demo one) after the project own, then its extensions and kinds migrations, the worker and the config entry', async () => {
		const result = await init({ cwd: project, now: new Date('2024-06-01T12:00:00Z'), secret: 's3cret-for-the-test' });
		const migrations = (await readdir(join(project, 'supabase/migrations'))).sort();
		const ours = await packageMigrations();
		expect(ours.some((m) => m.name.includes('demo'))).toBe(false);
		expect(migrations[0]).toBe(USER_MIGRATION);
		// The project's last migration is newer than `now`: ours come right after it, one second apart, in
		// order, then the two init writes: pg_net + pg_cron with the schedules, and the app's kinds.
		const stamp = (i: number) => migrationTimestamp(new Date(Date.UTC(2025, 0, 1, 0, 0, i + 1)));
		expect(migrations.slice(1)).toEqual([
			...ours.map((m, i) => `${stamp(i)}_supabase_jobs_${m.name}.sql`),
			`${stamp(ours.length)}_supabase_jobs_extensions_and_schedules.sql`,
			`${stamp(ours.length + 1)}_register_job_kinds.sql`,
		]);
		const written = (suffix: string) =>
			readFile(
				join(
					project,
					'supabase/migrations',
					migrations.find((f) => f.endsWith(suffix))!,
				),
				'utf8',
			);
		const extensions = await written('_supabase_jobs_extensions_and_schedules.sql');
		expect(extensions).toContain('create extension if not exists pg_net with schema extensions;');
		expect(extensions).toContain('create extension if not exists pg_cron with schema pg_catalog;');
		// The package's own schedule installer: its cadence is the installed version's, never repeated here.
		expect(extensions).toContain('select supabase_jobs.install_schedules();');
		expect(extensions).not.toMatch(/cron\.schedule\s*\(\s*'/);
		expect(await written('_register_job_kinds.sql')).toContain(
			"select supabase_jobs.register_job_kind('example.word-count');",
		);
		expect(result.addedMigrations).toEqual(migrations.slice(1).map((f) => `supabase/migrations/${f}`));
		expect(result.writtenFunctionFiles.sort()).toEqual(
			['deno.json', 'handlers.ts', 'index.ts', 'kinds.ts', 'serve.ts'].map(
				(f) => `supabase/functions/jobs-worker/${f}`,
			),
		);

		const fn = (file: string) => readFile(join(project, 'supabase/functions/jobs-worker', file), 'utf8');
		for (const file of ['index.ts', 'serve.ts', 'handlers.ts', 'kinds.ts']) {
			const text = await fn(file);
			expect(text).not.toMatch(/src\/lib|npm:/);
			if (file !== 'index.ts') expect(text).toMatch(/from 'supabase-jobs(\/worker)?'/);
		}
		// One kinds module for app and worker: bare specifiers, mapped for Deno to the exact version installed.
		// This scratch project has no node_modules: the driver and zod at the newest the package supports.
		expect(JSON.parse(await fn('deno.json'))).toEqual({
			nodeModulesDir: 'manual',
			imports: {
				'supabase-jobs': `npm:supabase-jobs@${version}`,
				'supabase-jobs/': `npm:/supabase-jobs@${version}/`,
				postgres: `npm:postgres@${newestAlternative(dependencies.postgres!)}`,
				zod: `npm:zod@${newestAlternative(dependencies.zod!)}`,
			},
		});

		const config = await readFile(join(project, 'supabase/config.toml'), 'utf8');
		expect(config.startsWith(USER_CONFIG)).toBe(true);
		expect(parseToml(config)).toMatchObject({
			project_id: 'scratch',
			functions: {
				'jobs-worker': {
					enabled: true,
					verify_jwt: false,
					entrypoint: './functions/jobs-worker/index.ts',
					import_map: './functions/jobs-worker/deno.json',
				},
			},
		});
		// Every step, numbered in the order the user acts.
		const order = [
			'1. Link the project',
			'supabase link --project-ref <project-ref>',
			'2. Apply the migrations',
			'supabase db push',
			'3. Give the worker its secret',
			'supabase secrets set JOBS_WORKER_SECRET=<the secret above>',
			'supabase functions deploy jobs-worker',
			'4. Tell the database where the worker is',
			"select vault.create_secret('https://<project-ref>.supabase.co/functions/v1/jobs-worker', 'supabase_jobs_worker_url');",
			"select vault.create_secret('<the secret above>', 'supabase_jobs_worker_secret');",
			'5. Check everything',
			"npx supabase-jobs doctor --db-url '<connection string>'",
		];
		const at = order.map((line) => result.nextSteps.indexOf(line));
		expect(at.every((i) => i >= 0)).toBe(true);
		expect(at).toEqual([...at].sort((a, b) => a - b));
		// The secret is shown once, with a warning; the steps refer to it.
		expect(result.nextSteps.split('s3cret-for-the-test')).toHaveLength(2);
		expect(result.nextSteps).toMatch(/shown only this once/);
		expect(result.nextSteps.indexOf('s3cret-for-the-test')).toBeLessThan(at[0]!);
	});

	it('a linked project gets its own function URL and no link step', () => {
		const steps = nextSteps({ secret: 'x', ref: 'abcdefghijklmnop', migrations: 3, redeploy: false });
		expect(steps).not.toContain('supabase link');
		expect(steps).toMatch(/^ {2}1\. Apply the migrations/m);
		expect(steps).toContain("'https://abcdefghijklmnop.supabase.co/functions/v1/jobs-worker'");
	});

	it('the kinds migration registers exactly the kinds the kinds template declares', () => {
		const kinds = kindNamesIn(KINDS_TEMPLATE);
		expect(kinds).toEqual({ names: ['example.word-count'], unreadable: [] });
		const registered = [
			...kindsMigration({ version: '0', kinds: kinds.names }).matchAll(/register_job_kind\('([^']+)'\)/g),
		];
		expect(registered.map((m) => m[1])).toEqual(kinds.names);
	});

	it('reads kind names as literals, ignoring comments and nested keys, and flags computed ones', () => {
		const text = `// defineJobKind({ name: 'commented.out' })
export const a = defineJobKind({ params: z.object({ name: z.literal('nested') }), label: name, name: "a.one" });
const n = 'x';
export const b = defineJobKind({ name: n, params });
export const c = defineJobKind<'c'>({
	name: \`c.three\`, params });`;
		expect(kindNamesIn(text)).toEqual({ names: ['a.one', 'c.three'], unreadable: [4] });
	});

	it('a second run on the same version writes nothing, says so and exits 0', async () => {
		const before = await snapshot(project);
		const { stdout } = await run(process.execPath, [bin, 'init', '--cwd', project]);
		expect(stdout).toContain('none added');
		expect(stdout).toContain('kept as they are');
		expect(stdout).toContain('Nothing to do');
		expect(stdout).not.toMatch(/secret, generated now/);
		expect(await snapshot(project)).toEqual(before);
	});

	it('upgrade to a version with a new migration adds only that one, after the project latest, and moves the pin', async () => {
		const next = await newerPackage('20991231000000_next_capability.sql', '9.9.9');
		// The project wrote a migration of its own since init: the new one must sort after it.
		const own = '20300101000000_add_avatars.sql';
		await writeFile(join(project, 'supabase/migrations', own), 'alter table public.profiles add column avatar text;\n');
		const before = await snapshot(project);
		const { stdout } = await run(process.execPath, [join(next, 'bin/supabase-jobs.mjs'), 'upgrade', '--cwd', project]);
		const after = await snapshot(project);

		const added = Object.keys(after).filter((f) => !(f in before));
		expect(added).toHaveLength(1);
		expect(added[0]).toMatch(/^\/supabase\/migrations\/(\d{14})_supabase_jobs_next_capability\.sql$/);
		expect(added[0]!.slice('/supabase/migrations/'.length, -1) > own).toBe(true);
		expect(stdout).toContain(`added migrations:\n    ${added[0]!.slice(1)}`);
		// Applied migrations and the user's function files are untouched; only the pin moved.
		const changed = Object.keys(before).filter((f) => after[f] !== before[f]);
		expect(changed).toEqual(['/supabase/functions/jobs-worker/deno.json']);
		// In place: the pin's value changes, every other byte stays as the user left it.
		expect(after['/supabase/functions/jobs-worker/deno.json']).toBe(
			before['/supabase/functions/jobs-worker/deno.json']!.replace(
				`"npm:supabase-jobs@${version}"`,
				'"npm:supabase-jobs@9.9.9"',
			).replace(`"npm:/supabase-jobs@${version}/"`, '"npm:/supabase-jobs@9.9.9/"'),
		);
		expect(stdout).toContain('the supabase-jobs pin moved to 9.9.9 (nothing else changed)');
		expect(stdout).toMatch(/1\. Apply the new migrations:\n\s+supabase db push\n\n\s+2\. Deploy the worker again/);
	});

	it('finds an existing [functions.jobs-worker] however it is written, and keeps config.toml valid TOML', async () => {
		for (const header of [
			'[functions.jobs-worker] # ours',
			'[functions."jobs-worker"]',
			'  [ functions.jobs-worker ]',
		]) {
			const config = `${USER_CONFIG}\n${header}\nenabled = true\nverify_jwt = false\n`;
			const dir = await scratchProject(config);
			const result = await init({ cwd: dir, secret: 'x' });
			expect(result.configAppended).toBe(false);
			expect(await readFile(join(dir, 'supabase/config.toml'), 'utf8')).toBe(config);
		}
	});

	it('refuses a config.toml that is not TOML, writing nothing', async () => {
		const dir = await scratchProject('[api\nport = 1\n');
		const before = await snapshot(dir);
		const failed = await run(process.execPath, [bin, 'init', '--cwd', dir]).then(
			() => null,
			(e: { code: number; stdout: string }) => e,
		);
		expect(failed?.code).toBe(1);
		expect(failed?.stdout).toContain('is not valid TOML');
		expect(await snapshot(dir)).toEqual(before);
	});

	it('with a kinds.ts of the project own, writes no kinds migration and leaves kinds.ts as it is', async () => {
		const dir = await scratchProject();
		const kinds = "export const mine = defineJobKind({ name: 'mine.only', params });\n";
		await mkdir(join(dir, 'supabase/functions/jobs-worker'), { recursive: true });
		await writeFile(join(dir, 'supabase/functions/jobs-worker/kinds.ts'), kinds);
		const result = await init({ cwd: dir, secret: 'x' });
		expect(result.addedMigrations.some((f) => f.endsWith('_register_job_kinds.sql'))).toBe(false);
		expect(result.addedMigrations.some((f) => f.endsWith('_supabase_jobs_extensions_and_schedules.sql'))).toBe(true);
		expect(result.keptFunctionFiles).toContain('supabase/functions/jobs-worker/kinds.ts');
		expect(await readFile(join(dir, 'supabase/functions/jobs-worker/kinds.ts'), 'utf8')).toBe(kinds);
	});

	it('refuses a folder that is not a Supabase project', async () => {
		const empty = await mkdtemp(join(tmpdir(), 'sj-init-empty-'));
		scratch.push(empty);
		await expect(init({ cwd: empty })).rejects.toThrow(/supabase init/);
		expect(await readdir(empty)).toEqual([]);
	});

	it('the handler templates make no network call', () => {
		expect(`${KINDS_TEMPLATE}\n${HANDLERS_TEMPLATE}`).not.toMatch(/fetch\s*\(|https?:\/\/|Deno\.connect|WebSocket/);
	});

	it('the files it wrote apply cleanly to a fresh database', async () => {
		const adminUrl = inject('adminUrl');
		const name = `sj_init_${randomUUID().slice(0, 8)}`;
		const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
		await admin.unsafe(`create database ${name}`);
		const url = withDatabase(adminUrl, name);
		try {
			await applyCompat(url);
			const applied = await applyMigrations(url, join(project, 'supabase/migrations'));
			// The package's, init's two, the user's two and the upgrade's stand-in (a comment only).
			expect(applied).toHaveLength((await packageMigrations()).length + 5);
			const sql = postgres(url, { max: 1, onnotice: () => {} });
			try {
				const [row] = await sql<{ jobs: string | null; analyses: string | null; enqueue: string | null }[]>`
					select to_regclass('public.jobs')::text as jobs,
					       to_regclass('public.document_analyses')::text as analyses,
					       to_regproc('public.job_enqueue')::text as enqueue`;
				expect(row).toEqual({ jobs: 'jobs', analyses: null, enqueue: expect.stringContaining('job_enqueue') });
				const [job] = await sql`select status from public.job_enqueue('extract', '{"filename":"a.txt"}'::jsonb)`;
				expect(job!.status).toBe('queued');
				// init's own two: the template's kind registered, the schedules installed (here in the pg_cron stand-in).
				const kinds = await sql`select kind from supabase_jobs.job_kinds where job_table = 'jobs'`;
				expect(kinds.map((k) => k.kind)).toEqual(['example.word-count']);
				const schedules = await sql`select jobname from cron.job where jobname like 'supabase-jobs-%'`;
				expect(schedules.length).toBeGreaterThanOrEqual(3);
			} finally {
				await sql.end();
			}
		} finally {
			await admin.unsafe(`drop database if exists ${name} with (force)`);
			await admin.end();
		}
	});

	it('rewrites imports of the package sources to the entry that exports them, and npm: specifiers to bare ones (the import map resolves them)', () => {
		const source =
			"import postgres from 'npm:postgres@^3';\nimport { JobStore } from " +
			"'../../src/lib/store/job-store.ts';\nimport type { JobHandler } from " +
			'"../../src/lib/worker/job-handler.ts";\nimport { handlers } from \'./handlers.ts\';';
		expect(rewriteImports(source)).toBe(
			"import postgres from 'postgres';\nimport { JobStore } from 'supabase-jobs';\nimport type { JobHandler } from 'supabase-jobs/worker';\nimport { handlers } from './handlers.ts';",
		);
	});

	it('takes its entries from package.json exports, and maps an import to the entry that exports every name it takes', async () => {
		const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { exports: Record<string, unknown> };
		const specifiers = Object.keys(pkg.exports)
			.filter((key) => key !== './package.json')
			.map((key) => (key === '.' ? 'supabase-jobs' : `supabase-jobs${key.slice(1)}`));
		expect(packageEntries('.').map((e) => e.specifier)).toEqual(specifiers);
		const source = [
			"import { runWorkers } from '../../src/lib/worker/node-runner.ts';",
			"import type { JobAdapter } from '../../src/lib/store/adapter.ts';",
			"import { JOB_FUNCTIONS, type JobAdapter as Adapter } from '../../src/lib/store/adapter.ts';",
		].join('\n');
		expect(rewriteImports(source).split('\n')).toEqual([
			"import { runWorkers } from 'supabase-jobs/node';",
			"import type { JobAdapter } from 'supabase-jobs';",
			"import { JOB_FUNCTIONS, type JobAdapter as Adapter } from 'supabase-jobs/adapter';",
		]);
	});

	it('refuses to rewrite an import of what no entry exports, naming it', () => {
		expect(() => rewriteImports("import { claimLoop } from '../../src/lib/worker/job-runner.ts';")).toThrow(
			/No entry of the package exports \{ claimLoop \} from src\/lib\/worker\/job-runner\.ts/,
		);
	});
});

/** A copy of this package as a later version would ship it: one more migration, another version number. */
async function newerPackage(migration: string, nextVersion: string): Promise<string> {
	const root = await mkdtemp(join(tmpdir(), 'sj-next-'));
	scratch.push(root);
	for (const dir of ['bin', 'functions/jobs-worker', 'supabase/migrations'])
		await cp(dir, join(root, dir), { recursive: true });
	// Its bin needs its runtime dependencies (smol-toml) as an installed package would.
	await symlink(resolve('node_modules'), join(root, 'node_modules'));
	const pkg = JSON.parse(await readFile('package.json', 'utf8'));
	await writeFile(join(root, 'package.json'), JSON.stringify({ ...pkg, version: nextVersion }));
	await writeFile(join(root, 'supabase/migrations', migration), '-- a capability of the next version\nselect 1;\n');
	return root;
}

async function snapshot(dir: string): Promise<Record<string, string>> {
	const out: Record<string, string> = {};
	const walk = async (d: string) => {
		for (const e of await readdir(d, { withFileTypes: true })) {
			const p = join(d, e.name);
			if (e.isDirectory()) await walk(p);
			else out[p.slice(dir.length)] = await readFile(p, 'utf8');
		}
	};
	await walk(dir);
	return out;
}
