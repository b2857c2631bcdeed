/**
 * What Supabase Studio lists for an admin, read from the same server Studio
 * reads it from: postgres-meta's HTTP API (/tables, /views with their columns)
 * over the migrated database. The job tables are there with RLS on, and the
 * admin views (supabase/schemas/12b_admin_views.sql) with the
 * comments Studio's table editor shows for each view and column.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startPostgresMeta, type PostgresMetaServer } from '../../src/local/typegen/postgres-meta.ts';

interface MetaColumn {
	name: string;
	comment: string | null;
	data_type: string;
}
interface MetaRelation {
	schema: string;
	name: string;
	comment: string | null;
	rls_enabled?: boolean;
	columns?: MetaColumn[];
}

const ADMIN_VIEWS = [
	'job_counts',
	'job_throughput_hourly',
	'job_latency',
	'job_failure_rates',
	'job_top_errors',
	'jobs_overrunning',
	'jobs_silent',
	'owner_usage',
];

let db: TestDatabase;
let meta: PostgresMetaServer;
let tables: MetaRelation[];
let views: MetaRelation[];

beforeAll(async () => {
	db = await useTestDatabase();
	meta = await startPostgresMeta(db.url);
	// The requests Studio's table editor sends for a schema's sidebar.
	tables = await meta.get<MetaRelation[]>('/tables?included_schemas=public,supabase_jobs&include_columns=true');
	views = await meta.get<MetaRelation[]>('/views?included_schemas=supabase_jobs&include_columns=true');
});

afterAll(async () => {
	await meta?.stop();
});

describe('what Studio lists (postgres-meta)', () => {
	it('lists the job tables with row level security on', () => {
		const listed = new Map(tables.map((t) => [`${t.schema}.${t.name}`, t]));
		for (const name of [
			'public.jobs',
			'supabase_jobs.job',
			'supabase_jobs.job_tables',
			'supabase_jobs.phase_timings',
		]) {
			expect(listed.has(name), `${name} listed`).toBe(true);
			expect(listed.get(name)!.rls_enabled, `${name} has RLS on`).toBe(true);
		}
	});

	it('lists every admin view in supabase_jobs, each with a comment saying what it answers', () => {
		const byName = new Map(views.map((v) => [v.name, v]));
		for (const name of ADMIN_VIEWS) {
			const view = byName.get(name);
			expect(view, `supabase_jobs.${name} listed`).toBeDefined();
			expect(view!.comment, `${name} has a comment`).toMatch(/\w{3,}.*\w{3,}/);
		}
	});

	it('explains every column of every admin view (the table editor shows the column comments)', () => {
		for (const name of ADMIN_VIEWS) {
			const view = views.find((v) => v.name === name)!;
			expect(view.columns?.length, `${name} has columns`).toBeGreaterThan(0);
			const bare = view.columns!.filter((c) => !c.comment?.trim()).map((c) => c.name);
			expect(bare, `columns of ${name} without a comment`).toEqual([]);
		}
	});

	it('shows the figures an admin reads with their types: latency percentiles as intervals, failure rate as a number', () => {
		const column = (view: string, name: string) =>
			views.find((v) => v.name === view)!.columns!.find((c) => c.name === name);
		expect(column('job_latency', 'wait_p95')?.data_type).toBe('interval');
		expect(column('job_latency', 'run_p50')?.data_type).toBe('interval');
		expect(column('job_failure_rates', 'failure_rate')?.data_type).toBe('numeric');
		expect(column('job_counts', 'jobs')?.comment).toBe('How many jobs of this table, kind and status.');
	});

	it('never shows a job payload or params in an admin view', () => {
		for (const name of ADMIN_VIEWS) {
			const names = views.find((v) => v.name === name)!.columns!.map((c) => c.name);
			expect(names, name).not.toContain('payload');
			expect(names, name).not.toContain('params');
		}
	});
});
