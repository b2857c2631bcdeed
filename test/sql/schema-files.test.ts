/**
 * supabase/schemas is the source and supabase/migrations what is generated from
 * it: a database built from the schema files and one built from the
 * migrations have the same catalog (functions by pg_get_functiondef, tables,
 * columns, constraints, indexes, triggers, policies, privileges, comments, the
 * configuration rows, the pg_cron entries), the baseline is exactly what
 * `npm run gen:migration` writes (from 0.2.0: unchanged, every change a
 * migration of its own), and no function shares its name with a type
 * (Studio would read `select public.<name>('<id>')` as a cast).
 */
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FROZEN_FROM, baselineFile, baselineText, isFrozen } from '../../src/local/postgres/baseline.ts';
import { catalogDiff, catalogLines, readCatalog } from '../../src/local/postgres/catalog.ts';
import {
	applyCompat,
	applyMigrations,
	applySchemaFiles,
	projectRoot,
	withDatabase,
} from '../../src/local/postgres/migrate.ts';

const run = promisify(execFile);

const adminUrl = () => inject('adminUrl');
const created: string[] = [];

/** A fresh database with the compat bootstrap, then `build` applied to it. */
async function database(label: string, build: (url: string) => Promise<unknown>): Promise<string> {
	const name = `sj_${label}_${randomUUID().slice(0, 8)}_${process.pid}`;
	const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
	try {
		await admin.unsafe(`create database ${name}`);
	} finally {
		await admin.end();
	}
	created.push(name);
	const url = withDatabase(adminUrl(), name);
	await applyCompat(url);
	await build(url);
	return url;
}

let fromSchemas: string;
let fromMigrations: string;

beforeAll(async () => {
	[fromSchemas, fromMigrations] = await Promise.all([
		database('schemas', (url) => applySchemaFiles(url)),
		database('migrations', (url) => applyMigrations(url)),
	]);
}, 120_000);

afterAll(async () => {
	const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
	try {
		for (const name of created) await admin.unsafe(`drop database if exists ${name} with (force)`);
	} finally {
		await admin.end();
	}
});

describe('supabase/schemas and supabase/migrations', () => {
	it('build databases with the same catalog (any difference is listed, object by object)', async () => {
		const [a, b] = await Promise.all([catalogLines(fromSchemas), catalogLines(fromMigrations)]);
		// The comparison sees the package's objects: a catalog without them would compare nothing.
		expect(a.filter((l) => l.startsWith('function public.job_')).length).toBeGreaterThan(25);
		expect(a.some((l) => l.startsWith('relation public.jobs:'))).toBe(true);
		expect(a.some((l) => l.startsWith('policy realtime.messages.'))).toBe(true);
		const diff = catalogDiff(a, b, ['supabase/schemas', 'supabase/migrations']);
		expect(diff, `the catalogs differ:\n\n${diff}`).toBe('');
	});

	it('the catalog comparison finds a changed function body, a grant and a comment', async () => {
		const before = await catalogLines(fromSchemas);
		const sql = postgres(fromSchemas, { max: 1, onnotice: () => {} });
		const rollback = new Error('rollback');
		let diff = '';
		try {
			await sql
				.begin(async (tx) => {
					await tx`create or replace function supabase_jobs.kind_max() returns integer language plpgsql immutable parallel safe set search_path = '' as $$ begin return 65; end $$`;
					await tx`grant execute on function public.job_claim(uuid, text, integer) to authenticated`;
					await tx`comment on column supabase_jobs.job.stage is 'changed'`;
					diff = catalogDiff(before, await readCatalog(tx));
					throw rollback;
				})
				.catch((e: unknown) => {
					if (e !== rollback) throw e;
				});
		} finally {
			await sql.end();
		}
		expect(diff).toContain('function supabase_jobs.kind_max():');
		expect(diff).toContain('function public.job_claim(uuid,text,integer):');
		expect(diff).toContain('column supabase_jobs.job.stage:');
	});

	it('the baseline is what `npm run gen:migration` writes until 0.2.0, and unchanged since the commit that froze it after', async () => {
		const file = await baselineFile();
		expect(file, 'supabase/migrations has no baseline: run npm run gen:migration').not.toBeNull();
		const { version } = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
		if (!isFrozen(version)) {
			expect(await readFile(file!, 'utf8')).toBe(await baselineText());
			return;
		}
		const path = relative(projectRoot, file!);
		const git = async (...args: string[]) => (await run('git', args, { cwd: projectRoot })).stdout.trim();
		// The last commit that wrote the frozen version into package.json; the baseline as it was then.
		const frozenAt = (
			await git('log', '-1', '--format=%H', `-G"version": "${FROZEN_FROM}"`, '--', 'package.json')
		).trim();
		expect(frozenAt, `no commit sets version ${FROZEN_FROM}`).toMatch(/^[0-9a-f]{40}$/);
		expect(
			await git('diff', '--stat', frozenAt, '--', path),
			`${path} changed after ${FROZEN_FROM}: write a new migration`,
		).toBe('');
	});

	it('no function shares its name with a type in its schema (Studio would read a one-argument call as a cast)', async () => {
		const sql = postgres(fromSchemas, { max: 1, onnotice: () => {} });
		try {
			const clashes = await sql<{ name: string }[]>`
				select n.nspname || '.' || p.proname as name
				  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
				 where n.nspname in ('public', 'supabase_jobs')
				   and exists (select 1 from pg_type t where t.typnamespace = p.pronamespace and t.typname = p.proname)
				 order by 1`;
			expect(clashes.map((c) => c.name)).toEqual([]);
			const [{ status }] = await sql.begin(async (tx) => {
				await tx`insert into public.jobs (kind) values ('studio.check')`;
				return await tx<{ status: string }[]>`
					select public.job_get_status((select id from public.jobs where kind = 'studio.check')) as status`;
			});
			expect(status).toBe('queued');
		} finally {
			await sql.end();
		}
	});
});
