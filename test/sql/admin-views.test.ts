/**
 * The admin views (supabase/schemas/12b_admin_views.sql) over a known
 * history. The history is written straight into the job tables as the owner
 * with triggers off (session_replication_role = replica, one transaction):
 * the guard would otherwise derive every timestamp from now(), and these
 * figures need timestamps chosen exactly. Each view's figures are then checked
 * against what that history must give.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { anon, as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

const VIEWS = [
	'job_counts',
	'job_throughput_hourly',
	'job_latency',
	'job_failure_rates',
	'job_top_errors',
	'jobs_overrunning',
	'jobs_silent',
	'owner_usage',
];

interface Seed {
	job_table?: string;
	kind: string;
	status: 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
	owner_id: string | null;
	available_at: Date;
	started_at?: Date | null;
	finished_at?: Date | null;
	heartbeat_at?: Date | null;
	heartbeat_ms?: number | null;
	error?: string | null;
	error_code?: string | null;
	payload?: Buffer | null;
}

let db: TestDatabase;
let user1: string;
let user2: string;
/** The database's now() when the history was written, and the hour the recent done jobs finished in. */
let now: Date;
let hour: Date;
const ids: Record<string, string> = {};

const seconds = (s: number) => s * 1000;
const minutes = (m: number) => m * 60_000;
const at = (ms: number) => new Date(now.getTime() + ms);

async function seed(rows: Seed[]): Promise<string[]> {
	const full = rows.map((r) => ({
		id: randomUUID(),
		job_table: r.job_table ?? 'jobs',
		kind: r.kind,
		status: r.status,
		owner_id: r.owner_id,
		created_at: r.available_at,
		updated_at: r.finished_at ?? r.heartbeat_at ?? r.started_at ?? r.available_at,
		available_at: r.available_at,
		started_at: r.started_at ?? null,
		finished_at: r.finished_at ?? null,
		heartbeat_at: r.heartbeat_at ?? null,
		heartbeat_ms: r.heartbeat_ms ?? null,
		attempts: r.started_at ? 1 : 0,
		progress: r.status === 'done' ? 100 : 0,
		error: r.error ?? null,
		error_code: r.error_code ?? null,
		payload: r.payload ?? null,
	}));
	await db.sql.begin(async (tx) => {
		await tx`set local session_replication_role = replica`;
		await tx`insert into supabase_jobs.job ${tx(full)}`;
	});
	return full.map((r) => r.id);
}

beforeAll(async () => {
	db = await useTestDatabase();
	await db.sql`select supabase_jobs.create_job_table('exports')`;
	user1 = (await createUser(db.sql)).sub;
	user2 = (await createUser(db.sql)).sub;
	await db.sql`update supabase_jobs.job_tables set max_active_per_owner = 10, max_payload_bytes_per_owner = 2000 where label = 'jobs'`;
	const [clock] = await db.sql<{ now: Date; hour: Date }[]>`
		select now() as now, date_trunc('hour', now()) - interval '3 hours' as hour`;
	now = clock!.now;
	hour = clock!.hour;
	const inHour = (ms: number) => new Date(hour.getTime() + ms);
	// Two days ago, at 10 past an hour, so its failures share one hour.
	const twoDaysAgo = new Date(hour.getTime() - minutes(45 * 60) + minutes(10));
	const eightDaysAgo = at(-minutes(8 * 24 * 60));

	// thumb: 10 done jobs finished in one hour 3 hours ago; job i waited i s and ran 10 x i s.
	await seed(
		Array.from({ length: 10 }, (_, k) => {
			const i = k + 1;
			const finished = inHour(minutes(i));
			const started = new Date(finished.getTime() - seconds(10 * i));
			return {
				kind: 'thumb',
				status: 'done' as const,
				owner_id: user1,
				available_at: new Date(started.getTime() - seconds(i)),
				started_at: started,
				finished_at: finished,
			};
		}),
	);
	// thumb, two days ago: 2 failed unreadable, 1 failed worker_lost, 1 cancelled before it started.
	const failedAt = (m: number) => ({
		available_at: new Date(twoDaysAgo.getTime() - minutes(10)),
		started_at: new Date(twoDaysAgo.getTime() - minutes(5)),
		finished_at: new Date(twoDaysAgo.getTime() + minutes(m)),
	});
	await seed([
		{
			kind: 'thumb',
			status: 'failed',
			owner_id: user1,
			error: 'The image could not be read.',
			error_code: 'unreadable',
			...failedAt(1),
		},
		{
			kind: 'thumb',
			status: 'failed',
			owner_id: user1,
			error: 'The image could not be read.',
			error_code: 'unreadable',
			...failedAt(2),
		},
		{
			kind: 'thumb',
			status: 'failed',
			owner_id: user1,
			error: 'The worker stopped answering.',
			error_code: 'worker_lost',
			...failedAt(3),
		},
		{
			kind: 'thumb',
			status: 'cancelled',
			owner_id: user1,
			error: 'Cancelled.',
			error_code: 'cancelled',
			available_at: twoDaysAgo,
			finished_at: twoDaysAgo,
		},
	]);
	// thumb, eight days ago (outside every window): 1 done, 1 failed.
	await seed([
		{
			kind: 'thumb',
			status: 'done',
			owner_id: user1,
			available_at: eightDaysAgo,
			started_at: eightDaysAgo,
			finished_at: at(-minutes(8 * 24 * 60 - 1)),
		},
		{
			kind: 'thumb',
			status: 'failed',
			owner_id: user1,
			error: 'An old failure.',
			error_code: 'old',
			available_at: eightDaysAgo,
			started_at: eightDaysAgo,
			finished_at: at(-minutes(8 * 24 * 60 - 1)),
		},
	]);
	// thumb running: one for 5 minutes (past 110 s, what history predicts), one for 30 s; waits 0 s and 20 s.
	[ids.overrunning, ids.onTime] = await seed([
		{
			kind: 'thumb',
			status: 'running',
			owner_id: user1,
			available_at: at(-minutes(5)),
			started_at: at(-minutes(5)),
			heartbeat_at: at(-seconds(5)),
		},
		{
			kind: 'thumb',
			status: 'running',
			owner_id: user1,
			available_at: at(-seconds(50)),
			started_at: at(-seconds(30)),
			heartbeat_at: at(-seconds(5)),
		},
	]);
	// rare: too little history (2 done jobs) to call its hour-long run overdue; enqueued by a worker (no owner).
	await seed([
		{
			kind: 'rare',
			status: 'done',
			owner_id: null,
			available_at: at(-minutes(70)),
			started_at: at(-minutes(70)),
			finished_at: at(-minutes(69)),
		},
		{
			kind: 'rare',
			status: 'done',
			owner_id: null,
			available_at: at(-minutes(68)),
			started_at: at(-minutes(68)),
			finished_at: at(-minutes(67)),
		},
		{ kind: 'rare', status: 'running', owner_id: null, available_at: at(-minutes(60)), started_at: at(-minutes(60)) },
	]);
	// sync (user2), beating every 10 s: silent 60 s, never beat since a claim 40 s ago, beat 20 s ago, no contract.
	[ids.silent60, ids.neverBeat, ids.beating, ids.noContract] = await seed([
		{
			kind: 'sync',
			status: 'running',
			owner_id: user2,
			available_at: at(-minutes(10)),
			started_at: at(-minutes(10)),
			heartbeat_at: at(-seconds(60)),
			heartbeat_ms: 10_000,
		},
		{
			kind: 'sync',
			status: 'running',
			owner_id: user2,
			available_at: at(-seconds(40)),
			started_at: at(-seconds(40)),
			heartbeat_ms: 10_000,
		},
		{
			kind: 'sync',
			status: 'running',
			owner_id: user2,
			available_at: at(-minutes(10)),
			started_at: at(-minutes(10)),
			heartbeat_at: at(-seconds(20)),
			heartbeat_ms: 10_000,
		},
		{ kind: 'sync', status: 'running', owner_id: user2, available_at: at(-minutes(60)), started_at: at(-minutes(60)) },
	]);
	// Queued: user1 holds 600 payload bytes in jobs; user2 1000 bytes in exports.
	await seed([
		...[100, 200, 300].map((n) => ({
			kind: 'thumb',
			status: 'queued' as const,
			owner_id: user1,
			available_at: at(-seconds(1)),
			payload: Buffer.alloc(n),
		})),
		{
			job_table: 'exports',
			kind: 'report',
			status: 'queued',
			owner_id: user2,
			available_at: at(-seconds(1)),
			payload: Buffer.alloc(1000),
		},
	]);
});

/** Reads a view as service_role, the one role granted it. */
async function view<T = Record<string, unknown>>(name: string, where = 'true'): Promise<T[]> {
	const rows = await as(db.sql, serviceRole, (tx) => tx.unsafe(`select * from supabase_jobs.${name} where ${where}`));
	return rows.map((r) => ({ ...r })) as T[];
}

/** An interval column in seconds, read by the database. */
async function secondsOf(name: string, column: string, where: string): Promise<number> {
	const [row] = await db.sql.unsafe(
		`select extract(epoch from ${column})::float8 as s from supabase_jobs.${name} where ${where}`,
	);
	return row!.s as number;
}

describe('the admin views answer from the history they are given', () => {
	it('job_counts: jobs per job table, kind and status, however old', async () => {
		const rows = await view<{ job_table: string; kind: string; status: string; jobs: string }>('job_counts');
		expect(rows.map((r) => [r.job_table, r.kind, r.status, Number(r.jobs)])).toEqual([
			['exports', 'report', 'queued', 1],
			['jobs', 'rare', 'running', 1],
			['jobs', 'rare', 'done', 2],
			['jobs', 'sync', 'running', 4],
			['jobs', 'thumb', 'queued', 3],
			['jobs', 'thumb', 'running', 2],
			['jobs', 'thumb', 'done', 11],
			['jobs', 'thumb', 'failed', 4],
			['jobs', 'thumb', 'cancelled', 1],
		]);
	});

	it('job_throughput_hourly: finished per hour, kind and status over 7 days, nothing older', async () => {
		const rows = await view<{ hour: Date; kind: string; status: string; jobs: string }>('job_throughput_hourly');
		const twoDaysAgoHour = new Date(hour.getTime() - minutes(45 * 60));
		const rareHour = (await db.sql`select date_trunc('hour', ${now}::timestamptz - interval '69 minutes') as h`)[0]!
			.h as Date;
		const rareHour2 = (await db.sql`select date_trunc('hour', ${now}::timestamptz - interval '67 minutes') as h`)[0]!
			.h as Date;
		const got = rows.map((r) => [r.hour.toISOString(), r.kind, r.status, Number(r.jobs)]);
		const rare =
			rareHour.getTime() === rareHour2.getTime()
				? [[rareHour.toISOString(), 'rare', 'done', 2]]
				: [
						[rareHour2.toISOString(), 'rare', 'done', 1],
						[rareHour.toISOString(), 'rare', 'done', 1],
					];
		expect(got).toEqual([
			...rare,
			[hour.toISOString(), 'thumb', 'done', 10],
			[twoDaysAgoHour.toISOString(), 'thumb', 'failed', 3],
			[twoDaysAgoHour.toISOString(), 'thumb', 'cancelled', 1],
		]);
	});

	it('job_latency: queue wait and run time p50/p95 per kind over 24 hours (percentile_cont)', async () => {
		const [thumb] = await view<{ started: string; done: string }>('job_latency', `kind = 'thumb'`);
		// Started in 24 h: the 10 done (waits 1..10 s) and the 2 running (0 s, 20 s); done in 24 h: runs 10..100 s.
		expect(Number(thumb!.started)).toBe(12);
		expect(Number(thumb!.done)).toBe(10);
		const where = `job_table = 'jobs' and kind = 'thumb'`;
		expect(await secondsOf('job_latency', 'wait_p50', where)).toBeCloseTo(5.5, 6);
		expect(await secondsOf('job_latency', 'wait_p95', where)).toBeCloseTo(14.5, 6);
		expect(await secondsOf('job_latency', 'run_p50', where)).toBeCloseTo(55, 6);
		expect(await secondsOf('job_latency', 'run_p95', where)).toBeCloseTo(95.5, 6);
	});

	it('job_failure_rates: failed / (done + failed) per kind over 7 days, cancelled counted apart', async () => {
		const rows = await view<Record<string, string>>('job_failure_rates');
		expect(rows.map((r) => [r.kind, r.finished, r.done, r.failed, r.cancelled, r.failure_rate])).toEqual([
			['rare', '2', '2', '0', '0', '0.0000'],
			['thumb', '14', '10', '3', '1', '0.2308'],
		]);
	});

	it('job_top_errors: the most frequent error sentences per kind over 7 days, ranked', async () => {
		const rows = await view<Record<string, unknown>>('job_top_errors');
		expect(rows.map((r) => [r.kind, Number(r.rank), r.error_code, r.error, Number(r.jobs)])).toEqual([
			['thumb', 1, 'unreadable', 'The image could not be read.', 2],
			['thumb', 2, 'worker_lost', 'The worker stopped answering.', 1],
		]);
	});

	it('jobs_overrunning: only a running job past both p95 and twice the median of its kind, with enough history', async () => {
		const rows = await view<{ id: string; history_jobs: string }>('jobs_overrunning');
		expect(rows.map((r) => [r.id, Number(r.history_jobs)])).toEqual([[ids.overrunning, 10]]);
		const where = `id = '${ids.overrunning}'`;
		expect(await secondsOf('jobs_overrunning', 'expected_within', where)).toBeCloseTo(110, 6);
		expect(await secondsOf('jobs_overrunning', 'run_p95', where)).toBeCloseTo(95.5, 6);
		expect(await secondsOf('jobs_overrunning', 'running_for', where)).toBeGreaterThanOrEqual(300);
	});

	it('jobs_silent: running jobs whose declared heartbeat is 2.5 intervals late, with when reclaim takes them', async () => {
		const rows = await view<{ id: string; beats_missed: number; last_beat_at: Date; reclaimable_at: Date }>(
			'jobs_silent',
		);
		expect(rows.map((r) => [r.id, r.beats_missed])).toEqual([
			[ids.silent60, 6],
			[ids.neverBeat, 4],
		]);
		expect(rows[0]!.last_beat_at.getTime()).toBe(at(-seconds(60)).getTime());
		expect(rows[0]!.reclaimable_at.getTime()).toBe(at(-seconds(30)).getTime());
		expect(rows[1]!.reclaimable_at.getTime()).toBe(at(-seconds(10)).getTime());
	});

	it('owner_usage: queued + running jobs and payload bytes per owner and table, against the quotas', async () => {
		const rows = await view<Record<string, unknown>>('owner_usage');
		const pick = (r: Record<string, unknown>) => [
			r.owner_id,
			r.job_table,
			Number(r.queued),
			Number(r.running),
			Number(r.active_jobs),
			r.max_active_per_owner,
			r.active_pct,
			Number(r.payload_bytes),
			Number(r.max_payload_bytes_per_owner),
			r.payload_pct,
		];
		expect(rows.map(pick)).toEqual([
			[user1, 'jobs', 3, 2, 5, 10, '50.0', 600, 2000, '30.0'],
			[user2, 'jobs', 0, 4, 4, 10, '40.0', 0, 2000, '0.0'],
			[user2, 'exports', 1, 0, 1, 1000, '0.1', 1000, 104857600, '0.0'],
			[null, 'jobs', 0, 1, 1, 10, '10.0', 0, 2000, '0.0'],
		]);
	});
});

describe('the admin views are safe to leave in Studio', () => {
	it('each runs as its caller, and neither shows nor reads params or payload (payload only measured)', async () => {
		const rows = await db.sql<{ name: string; options: string[] | null; def: string; columns: string[] }[]>`
			select c.relname as name, c.reloptions as options, pg_get_viewdef(c.oid) as def,
			       array(select a.attname::text from pg_attribute a where a.attrelid = c.oid and a.attnum > 0) as columns
			from pg_class c where c.relnamespace = 'supabase_jobs'::regnamespace and c.relkind = 'v' order by c.relname`;
		// And job_messages, the Realtime message builder (09_realtime.sql), granted to no one: held to the same rules.
		expect(rows.map((r) => r.name).sort()).toEqual([...VIEWS, 'job_messages'].sort());
		for (const r of rows) {
			expect(r.options, r.name).toContain('security_invoker=true');
			expect(r.columns, r.name).not.toContain('params');
			expect(r.columns, r.name).not.toContain('payload');
			expect(r.def, r.name).not.toMatch(/\bparams\b/);
			expect(r.def.replace(/octet_length\(\w+\.payload\)/g, ''), r.name).not.toMatch(/\bpayload\b/);
		}
	});

	it('each view and each of its columns carries a comment for Studio', async () => {
		const missing = await db.sql`
			select c.relname || coalesce('.' || a.attname, '') as what
			from pg_class c left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0
			where c.relnamespace = 'supabase_jobs'::regnamespace and c.relkind = 'v'
			  and (obj_description(c.oid, 'pg_class') is null or (a.attname is not null and col_description(c.oid, a.attnum) is null))`;
		expect(missing.map((r) => r.what)).toEqual([]);
	});

	it('service_role and signed-in users may select them (admins through jobs_admin_overview), anon is refused', async () => {
		// 20261202300000_admin_overview.sql grants select to authenticated, so an admin reads them as themselves.
		for (const name of VIEWS) {
			const [priv] = await db.sql`
				select has_table_privilege('service_role', ${'supabase_jobs.' + name}, 'select') as service,
				       has_table_privilege('authenticated', ${'supabase_jobs.' + name}, 'select') as users,
				       has_table_privilege('anon', ${'supabase_jobs.' + name}, 'select') as anon`;
			expect({ name, ...priv }).toEqual({ name, service: true, users: true, anon: false });
		}
		await expect(as(db.sql, anon, (tx) => tx`select * from supabase_jobs.owner_usage`)).rejects.toMatchObject({
			code: '42501',
		});
	});

	it('a signed-in user who is not an admin counts only their own jobs in them (security_invoker: RLS applies)', async () => {
		const user = { role: 'authenticated' as const, sub: user1 };
		const [own] = await db.sql<{ n: number }[]>`
			select count(*)::int as n from supabase_jobs.job where owner_id = ${user1}`;
		const [all] = await db.sql<{ n: number }[]>`select count(*)::int as n from supabase_jobs.job`;
		const [seen] = await as(
			db.sql,
			user,
			(tx) => tx<{ n: number }[]>`select coalesce(sum(jobs), 0)::int as n from supabase_jobs.job_counts`,
		);
		expect(all!.n).toBeGreaterThan(own!.n);
		expect(seen!.n).toBe(own!.n);
		const owners = await as(
			db.sql,
			user,
			(tx) => tx<{ owner_id: string }[]>`select owner_id from supabase_jobs.owner_usage`,
		);
		expect(owners.every((o) => o.owner_id === user1)).toBe(true);
	});
});
