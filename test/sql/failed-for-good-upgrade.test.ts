/**
 * The failed-for-good migration over a database already at the baseline, with
 * a job table of its own and finished jobs: every job table gets the column
 * (false on the rows it had, with the parent's comment), the old jobs are
 * tried again as before, and job_fail takes permanent at once.
 */
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { baselineFile } from '../../src/local/postgres/baseline.ts';
import { applyCompat, applyMigrations, listMigrations, withDatabase } from '../../src/local/postgres/migrate.ts';

const name = `sj_upgrade_${randomUUID().slice(0, 8)}_${process.pid}`;
let sql: postgres.Sql;
let failedBefore: string;

beforeAll(async () => {
	const admin = postgres(inject('adminUrl'), { max: 1, onnotice: () => {} });
	try {
		await admin.unsafe(`create database ${name}`);
	} finally {
		await admin.end();
	}
	const url = withDatabase(inject('adminUrl'), name);
	await applyCompat(url);
	// The database as 0.2.0's baseline left it: only that migration applied.
	const baseline = (await baselineFile())!;
	const onlyBaseline = await mkdtemp(join(tmpdir(), 'sj-baseline-'));
	try {
		await copyFile(baseline, join(onlyBaseline, basename(baseline)));
		expect(await applyMigrations(url, onlyBaseline)).toHaveLength(1);
	} finally {
		await rm(onlyBaseline, { recursive: true, force: true });
	}
	sql = postgres(url, { max: 1, onnotice: () => {} });
	await sql`select supabase_jobs.create_job_table('exports')`;
	const [{ id }] = await sql`select id from job_enqueue('export', job_table => 'exports')`;
	await sql`select job_claim(${id}, 'exports')`;
	await sql`select job_fail(${id}, 'Failed.', error_code => 'empty_file', job_table => 'exports')`;
	failedBefore = id as string;
	// Every migration after the baseline, this one among them.
	const ours = (await listMigrations()).find((m) => m.name === 'failed_for_good');
	expect(await applyMigrations(url)).toContain(ours?.version);
}, 120_000);

afterAll(async () => {
	await sql?.end();
	const admin = postgres(inject('adminUrl'), { max: 1, onnotice: () => {} });
	try {
		await admin.unsafe(`drop database if exists ${name} with (force)`);
	} finally {
		await admin.end();
	}
});

describe('the failed-for-good migration over a baseline database', () => {
	it('gives every job table the column with the parent comment, false on the rows it had', async () => {
		const columns = await sql`
			select c.relname as table_name, a.attnotnull as not_null, pg_catalog.col_description(c.oid, a.attnum) as note
			  from pg_catalog.pg_attribute a join pg_catalog.pg_class c on c.oid = a.attrelid
			 where a.attname = 'failed_for_good' and c.oid in ('supabase_jobs.job'::regclass, 'public.jobs'::regclass, 'public.exports'::regclass)
			 order by c.relname`;
		expect(columns.map((c) => c.table_name)).toEqual(['exports', 'job', 'jobs']);
		const parent = columns.find((c) => c.table_name === 'job')!;
		expect(parent.note).toMatch(/^The job failed for good/);
		for (const c of columns) expect(c, c.table_name as string).toMatchObject({ not_null: true, note: parent.note });
		const [row] = await sql`select status, failed_for_good from exports where id = ${failedBefore}`;
		expect(row).toEqual({ status: 'failed', failed_for_good: false });
	});

	it('a job failed before it is tried again as before; a job failed with permanent after it is refused (SJ002)', async () => {
		const [again] = await sql`select retry_of from job_try_again(${failedBefore}, 'exports')`;
		expect(again?.retry_of).toBe(failedBefore);
		const [{ id }] = await sql`select id from job_enqueue('export', job_table => 'exports')`;
		await sql`select job_claim(${id}, 'exports')`;
		const [closed] =
			await sql`select failed_for_good from job_fail(${id}, 'Empty.', error_code => 'empty_file', job_table => 'exports', permanent => true)`;
		expect(closed?.failed_for_good).toBe(true);
		const refused = await sql`select job_try_again(${id}, 'exports')`.catch((e: { code: string }) => e);
		expect(refused).toMatchObject({ code: 'SJ002' });
	});
});
