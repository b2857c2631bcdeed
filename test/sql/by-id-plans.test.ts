/**
 * Migration 20261205010000: a write to one job finds its row by id (the
 * primary key, or the running index led by job_table and id), even when the
 * table's statistics say no job is queued or running (a table of finished
 * jobs that filled since its last ANALYZE) — the case where the generic plans
 * walked the claim index, or every running job, instead.
 * The plans are read from auto_explain, which logs each statement the
 * functions run (nested statements included) to this session.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { createJobTable } from '../store/harness.ts';

const db = await useTestDatabase();
const sql = db.sql;
const logs: string[] = [];
const traced = db.connect({ max: 1, onnotice: (n) => void logs.push(String(n.message)) });

beforeAll(async () => {
	await createJobTable(sql, 'plans');
	// Statistics taken while the table held only finished jobs, and kept (no autovacuum may refresh
	// them): the partial indexes on queued and running jobs look empty, the primary key large.
	await sql`alter table public.plans set (autovacuum_enabled = false)`;
	await sql.begin(async (tx) => {
		await tx`set local session_replication_role = replica`;
		await tx`insert into public.plans (kind, status, params, attempts, started_at, finished_at, progress, job_table)
			select 'work', 'done', '{}', 1, now(), now(), 100, 'plans' from generate_series(1, 20000)`;
	});
	await sql`analyze public.plans`;
	await sql`select count(*) from public.job_enqueue_many('work', (select jsonb_agg('{}'::jsonb) from generate_series(1, 600)), 'plans')`;
	for (let i = 0; i < 3; i++) await sql`select count(*) from public.job_claim_next(null, 100, 'plans')`;
	await traced`load 'auto_explain'`;
	await traced`select set_config('auto_explain.log_min_duration', '0', false),
		set_config('auto_explain.log_nested_statements', 'on', false),
		set_config('client_min_messages', 'log', false)`;
});
afterAll(async () => {
	await traced.end();
});

/**
 * How the statements `call` runs read the job table (alias t or j, or those given): the index
 * of each scan (a bitmap scan's from its Bitmap Index Scan), or 'sequential'.
 */
async function byIdScans(call: () => Promise<unknown>, aliases = 'tj'): Promise<string[]> {
	const scan = new RegExp(`Scan.* on plans [${aliases}](_1)?$`);
	logs.length = 0;
	await call();
	const lines = logs.flatMap((l) => l.split('\n')).map((l) => l.trim().replace(/\s+\(cost=.*$/, ''));
	return lines.flatMap((line, i) => {
		if (!scan.test(line)) return [];
		if (line.includes('Seq Scan')) return ['sequential'];
		if (line.includes('Bitmap Heap Scan')) {
			const below = lines.slice(i + 1).find((l) => l.includes('Bitmap Index Scan on'));
			return [/Bitmap Index Scan on (\S+)/.exec(below ?? '')?.[1] ?? line];
		}
		return [/Index (?:Only )?Scan (?:Backward )?using (\S+)/.exec(line)?.[1] ?? line];
	});
}

const idsOf = async (status: string, n = 1) =>
	(await sql<{ id: string }[]>`select id from public.plans where status = ${status}::public.job_status limit ${n}`).map(
		(r) => r.id,
	);

/** Every by-id read is one probe: the primary key or the running index (id). */
const PROBES = /^(plans_pkey|plans_id_idx)$/;

describe('a write to one job finds its row by id, whatever the statistics say', () => {
	test('the statistics say 20,000 finished jobs and nothing else; the table holds 300 queued and 300 running too', async () => {
		const [stats] = await sql<
			{ n: number }[]
		>`select reltuples::int as n from pg_class where oid = 'public.plans'::regclass`;
		expect(stats!.n).toBe(20000);
		const counts = await sql<{ status: string; n: number }[]>`
			select status::text, count(*)::int as n from public.plans group by 1 order by 1`;
		expect(counts).toEqual([
			{ status: 'done', n: 20000 },
			{ status: 'queued', n: 300 },
			{ status: 'running', n: 300 },
		]);
	});

	test('claim(id), reschedule and the hold reasons of queued jobs probe the primary key, not the claim index', async () => {
		const [a, b, ...held] = await idsOf('queued', 5);
		const claim = await byIdScans(() => traced`select * from public.job_claim(${a!}, 'plans')`);
		const reschedule = await byIdScans(
			() => traced`select * from public.job_reschedule(${b!}, delay => '1 minute', job_table => 'plans')`,
		);
		const holds = await byIdScans(() => traced`select * from public.job_hold_reasons(${held}::uuid[], 'plans')`);
		for (const scans of [claim, reschedule, holds]) {
			expect(scans.length).toBeGreaterThan(0);
			for (const line of scans) expect(line).toMatch(PROBES);
		}
	});

	test('tick, succeed, fail, retry, release, wait-for-children and succeed_many of running jobs probe by id', async () => {
		const [tick, fail, retry, release, wait, ...many] = await idsOf('running', 8);
		const calls: Record<string, () => Promise<unknown>> = {
			job_tick: () => traced`select public.job_tick(${tick!}, 5, 'x', job_table => 'plans')`,
			job_succeed: () => traced`select * from public.job_succeed(${tick!}, job_table => 'plans')`,
			job_fail: () => traced`select * from public.job_fail(${fail!}, 'no', job_table => 'plans')`,
			job_retry: () => traced`select * from public.job_retry(${retry!}, 'again', job_table => 'plans')`,
			job_release: () => traced`select * from public.job_release(${release!}, job_table => 'plans')`,
			job_wait_for_children: () => traced`select * from public.job_wait_for_children(${wait!}, job_table => 'plans')`,
			job_succeed_many: () =>
				traced`select * from public.job_succeed_many(${sql.json(many.map((id) => ({ id })))}, 'plans')`,
		};
		for (const [fn, call] of Object.entries(calls)) {
			const scans = await byIdScans(call);
			expect(scans.length, fn).toBeGreaterThan(0);
			for (const line of scans) expect(line, fn).toMatch(PROBES);
		}
	});

	test('a claim on a table with concurrency limits updates the jobs it admitted by id', async () => {
		await sql`select public.job_set_concurrency('work', max_running => 1000, job_table => 'plans')`;
		const scans = await byIdScans(() => traced`select * from public.job_claim_next(null, 8, 'plans')`);
		expect(scans.length).toBeGreaterThan(0);
		for (const line of scans) expect(line).toMatch(PROBES);
	});
});

describe('a claim on a table with concurrency limits counts its running jobs by a plain index scan', () => {
	test('no bitmap scan, which would never mark the entries of finished jobs dead and revisit them at every claim', async () => {
		// Statistics taken while 3,000 jobs ran (a bitmap scan is what such statistics invite), then they finished.
		await createJobTable(sql, 'limited');
		await sql.begin(async (tx) => {
			await tx`set local session_replication_role = replica`;
			await tx`insert into public.limited (kind, status, params, attempts, started_at, job_table)
				select 'work', 'running', '{}', 1, now(), 'limited' from generate_series(1, 3000)`;
		});
		await sql`analyze public.limited`;
		await sql.begin(async (tx) => {
			await tx`set local session_replication_role = replica`;
			await tx`update public.limited set status = 'done', finished_at = now(), progress = 100`;
		});
		await sql`select count(*) from public.job_enqueue_many('work', '[{}, {}, {}]', 'limited')`;
		await sql`select public.job_set_concurrency('work', max_running => 1000, job_table => 'limited')`;
		logs.length = 0;
		await traced`select * from public.job_claim_next(null, 2, 'limited')`;
		const counts = logs
			.flatMap((l) => l.split('\n'))
			.map((l) => l.trim().replace(/\s+\(cost=.*$/, ''))
			.filter((l) => /Scan.* on limited s(_1)?$/.test(l));
		expect(counts.length).toBeGreaterThan(0);
		for (const line of counts)
			expect(line).toMatch(/^(->\s+)?Index (Only )?Scan using limited_id_idx on limited s(_1)?$/);
	});
});

describe('listings read newest first by id, with no sort, from an index that holds no job_table', () => {
	test("the table's newest jobs come from its primary key, a rare kind's from the kind index, a parent's children from the parent index", async () => {
		const recent = await byIdScans(() => traced`select * from public.job_list_recent(job_table => 'plans')`);
		const kind = await byIdScans(
			() => traced`select * from public.job_list_recent(kind => 'rare', job_table => 'plans')`,
		);
		const [parent] = await idsOf('done');
		const children = await byIdScans(() => traced`select * from public.job_children(${parent!}, 'plans')`, 'c');
		expect(recent).toEqual(['plans_pkey']);
		expect(kind).toEqual(['plans_kind_id_idx']);
		expect(children).toEqual(['plans_parent_id_id_idx']);
		const [{ cols }] = await sql<{ cols: string }[]>`
			select string_agg(pg_get_indexdef(indexrelid), ' ') as cols from pg_index where indrelid = 'public.plans'::regclass`;
		expect(cols).not.toMatch(/\(job_table/);
	});
});
