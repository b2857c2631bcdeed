/**
 * `npx supabase-jobs init` into a scratch Supabase-shaped folder: it writes the
 * package's migrations (not the demo's) with fresh timestamps, the worker
 * function importing the published package, a handler template and the
 * config entry; it never overwrites; and what it wrote applies cleanly to a
 * fresh database.
 */
import postgres from 'postgres';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { init, migrationTimestamp, packageMigrations, rewriteImports } from '../../bin/init.mjs';
import { applyCompat, applyMigrations, withDatabase } from '../../src/local/postgres/migrate.ts';

const run = promisify(execFile);
const USER_MIGRATION = '20250101000000_create_profiles.sql';
const USER_CONFIG = 'project_id = "scratch"\n\n[api]\nport = 54321\n';

let project: string;

async function scratchProject(): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), 'sj-init-'));
	await mkdir(join(dir, 'supabase/migrations'), { recursive: true });
	await writeFile(join(dir, 'supabase/config.toml'), USER_CONFIG);
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
	await rm(project, { recursive: true, force: true });
});

describe('npx supabase-jobs init', () => {
	it('writes the package migrations (not the demo one) after the project own, the worker and the config entry', async () => {
		const result = await init({ cwd: project, now: new Date('2024-06-01T12:00:00Z'), secret: 's3cret-for-the-test' });
		const migrations = (await readdir(join(project, 'supabase/migrations'))).sort();
		const ours = await packageMigrations();
		expect(ours.some((m) => m.name.includes('demo'))).toBe(false);
		expect(migrations[0]).toBe(USER_MIGRATION);
		// The project's last migration is newer than `now`: ours come right after it, one second apart, in order.
		expect(migrations.slice(1)).toEqual(
			ours.map(
				(m, i) => `${migrationTimestamp(new Date(Date.UTC(2025, 0, 1, 0, 0, i + 1)))}_supabase_jobs_${m.name}.sql`,
			),
		);
		expect(migrations.some((f) => f.includes('document_analyses'))).toBe(false);
		expect(result.written).toContain('supabase/functions/jobs-worker/handlers.ts');

		for (const file of ['index.ts', 'serve.ts', 'handlers.ts']) {
			const text = await readFile(join(project, 'supabase/functions/jobs-worker', file), 'utf8');
			expect(text).not.toMatch(/src\/lib/);
			if (file !== 'index.ts') expect(text).toMatch(/from 'npm:supabase-jobs@\^\d+\.\d+\.\d+'/);
		}
		const config = await readFile(join(project, 'supabase/config.toml'), 'utf8');
		expect(config.startsWith(USER_CONFIG)).toBe(true);
		expect(config).toMatch(
			/\[functions\.jobs-worker\]\nenabled = true\nverify_jwt = false\nentrypoint = "\.\/functions\/jobs-worker\/index\.ts"/,
		);
		expect(result.nextSteps).toContain('supabase db push');
		expect(result.nextSteps).toContain('supabase functions deploy jobs-worker');
		expect(result.nextSteps).toContain(
			"select vault.create_secret('https://<project-ref>.supabase.co/functions/v1/jobs-worker', 'supabase_jobs_worker_url');",
		);
		expect(result.nextSteps).toContain(
			"select vault.create_secret('s3cret-for-the-test', 'supabase_jobs_worker_secret');",
		);
		expect(result.nextSteps).toContain('JOBS_WORKER_SECRET=s3cret-for-the-test');
	});

	it('refuses to overwrite: a second run writes nothing and exits 1', async () => {
		const before = await snapshot(project);
		const bin = resolve('bin/supabase-jobs.mjs');
		const failed = await run(process.execPath, [bin, 'init', '--cwd', project]).then(
			() => null,
			(e: { code: number; stdout: string }) => e,
		);
		expect(failed?.code).toBe(1);
		expect(failed?.stdout).toContain('Nothing was written');
		expect(failed?.stdout).toContain('supabase/functions/jobs-worker/index.ts');
		expect(await snapshot(project)).toEqual(before);
	});

	it('refuses a folder that is not a Supabase project', async () => {
		const empty = await mkdtemp(join(tmpdir(), 'sj-init-empty-'));
		try {
			await expect(init({ cwd: empty })).rejects.toThrow(/supabase init/);
			expect(await readdir(empty)).toEqual([]);
		} finally {
			await rm(empty, { recursive: true, force: true });
		}
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
			expect(applied).toHaveLength((await packageMigrations()).length + 1);
			const sql = postgres(url, { max: 1, onnotice: () => {} });
			try {
				const [row] = await sql<{ jobs: string | null; analyses: string | null; enqueue: string | null }[]>`
					select to_regclass('public.jobs')::text as jobs,
					       to_regclass('public.document_analyses')::text as analyses,
					       to_regprocedure('public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text)')::text as enqueue`;
				expect(row).toEqual({ jobs: 'jobs', analyses: null, enqueue: expect.stringContaining('job_enqueue') });
				const [job] = await sql`select status from public.job_enqueue('extract', '{"filename":"a.txt"}'::jsonb)`;
				expect(job!.status).toBe('queued');
			} finally {
				await sql.end();
			}
		} finally {
			await admin.unsafe(`drop database if exists ${name} with (force)`);
			await admin.end();
		}
	});

	it('rewrites imports of the package sources to the published package', () => {
		const source =
			"import { JobStore } from '../../src/lib/store/job-store.ts';\nimport type { JobHandler } from \"../../src/lib/worker/job-handler.ts\";\nimport { handlers } from './handlers.ts';";
		expect(rewriteImports(source, 'npm:supabase-jobs@^1.2.3')).toBe(
			"import { JobStore } from 'npm:supabase-jobs@^1.2.3';\nimport type { JobHandler } from 'npm:supabase-jobs@^1.2.3';\nimport { handlers } from './handlers.ts';",
		);
	});
});

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
