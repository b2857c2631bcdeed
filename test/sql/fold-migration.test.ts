/**
 * `npm run fold:migration`: a migration's functions, their comments and
 * their `alter function ... set` settings folded into a copy of
 * supabase/schemas give the database that the baseline plus that migration
 * gives; what it cannot place (a grant, a new function) is listed, not lost.
 */
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { catalogDiff, catalogLines } from '../../src/local/postgres/catalog.ts';
import { foldMigration, statements } from '../../src/local/postgres/fold.ts';
import {
	applyCompat,
	applyMigrations,
	applySchemaFiles,
	migrationsDir,
	schemasDir,
	withDatabase,
} from '../../src/local/postgres/migrate.ts';

/** A later migration as one is written: functions replaced, a setting, a comment. */
const MIGRATION = `-- A later change: the silent reclaim answers in one statement, and plans once.
create or replace function public.job_reclaim_silent(job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  -- a body that differs from the one in the schema; ';' inside it is not an end
  return query select * from supabase_jobs.reclaim_jobs(supabase_jobs.job_table_label(job_table), null);
end
$$;
alter function public.job_reclaim_silent(text) set plan_cache_mode = force_generic_plan;
comment on function public.job_reclaim_silent(text) is 'Folded: readmits the running jobs whose worker went silent.';
create or replace function supabase_jobs.kind_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 64; end $$;
comment on function supabase_jobs.kind_max() is 'Folded: the longest kind name.';
`;

const scratch: string[] = [];
const databases: string[] = [];
afterAll(async () => {
	const admin = postgres(inject('adminUrl'), { max: 1, onnotice: () => {} });
	try {
		for (const name of databases) await admin.unsafe(`drop database if exists ${name} with (force)`);
	} finally {
		await admin.end();
	}
	await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
});

async function database(build: (url: string) => Promise<unknown>): Promise<string> {
	const name = `sj_fold_${randomUUID().slice(0, 8)}_${process.pid}`;
	const admin = postgres(inject('adminUrl'), { max: 1, onnotice: () => {} });
	try {
		await admin.unsafe(`create database ${name}`);
	} finally {
		await admin.end();
	}
	databases.push(name);
	const url = withDatabase(inject('adminUrl'), name);
	await applyCompat(url);
	await build(url);
	return url;
}

describe('folding a migration into supabase/schemas', () => {
	it('splits statements at top-level semicolons only (not in bodies, strings or comments)', () => {
		const parts = statements(
			`-- a; comment\nselect 'a;b';\ncreate function f() returns int as $x$ select 1; $x$;\n/* c; */ select 2;`,
		);
		expect(parts.map((p) => p.text)).toEqual([
			"select 'a;b';",
			'create function f() returns int as $x$ select 1; $x$;',
			'select 2;',
		]);
	});

	it('gives the catalog the baseline plus the migration gives', async () => {
		const dir = await mkdtemp(join(tmpdir(), 'sj-fold-'));
		scratch.push(dir);
		await cp(schemasDir, dir, { recursive: true });
		const result = await foldMigration(MIGRATION, dir);
		expect(result.left).toEqual([]);
		expect(result.replaced.map((r) => r.name)).toEqual(['public.job_reclaim_silent', 'supabase_jobs.kind_max']);
		const folded = await readFile(join(dir, '12c_reclaim.sql'), 'utf8');
		expect(folded.match(/create or replace function public\.job_reclaim_silent\(/g)).toHaveLength(1);
		expect(folded.match(/comment on function public\.job_reclaim_silent\b/g)).toHaveLength(1);
		expect(folded).toContain("set search_path = ''\nset plan_cache_mode = force_generic_plan\nas $$");

		const migrated = await mkdtemp(join(tmpdir(), 'sj-fold-migrations-'));
		scratch.push(migrated);
		await cp(migrationsDir, migrated, { recursive: true });
		await writeFile(join(migrated, '29991231000000_later_change.sql'), MIGRATION);
		const [a, b] = await Promise.all([
			database((url) => applyMigrations(url, migrated)),
			database((url) => applySchemaFiles(url, dir)),
		]);
		const [ca, cb] = await Promise.all([catalogLines(a), catalogLines(b)]);
		expect(ca.some((l) => l.includes('Folded: readmits'))).toBe(true);
		const diff = catalogDiff(ca, cb, ['baseline + migration', 'folded schema']);
		expect(diff, diff).toBe('');
	});

	it('lists what it cannot place: a grant and a new function', async () => {
		const dir = await mkdtemp(join(tmpdir(), 'sj-fold-'));
		scratch.push(dir);
		await cp(schemasDir, dir, { recursive: true });
		const result = await foldMigration(
			`grant execute on function public.job_claim(uuid, text, integer) to authenticated;
create or replace function supabase_jobs.brand_new() returns int language sql set search_path = '' as $$ select 1 $$;`,
			dir,
		);
		expect(result.replaced).toEqual([]);
		expect(result.left).toEqual([
			'grant execute on function public.job_claim(uuid, text, integer) to authenticated;',
			'new function supabase_jobs.brand_new: add it to the file of its concern, its revoke and grants at the end of that file',
		]);
	});
});
