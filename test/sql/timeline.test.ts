/**
 * A job's timeline at the SQL level (supabase/schemas/18_timeline.sql): the
 * transitions a later change would erase are recorded (and claims and closes
 * record nothing), job_log is attempt-guarded, bounded and names the bad field,
 * and job_timeline shows admins everything, the owner only the user-facing
 * lines, anyone else nothing; no write of it sends a Realtime message.
 */
import type postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import {
	anon,
	as,
	claimsFor,
	createUser,
	serviceRole,
	useTestDatabase,
	type Caller,
	type TestDatabase,
} from '../helpers/db.ts';

let db: TestDatabase;
let alice: Caller & { sub: string };
let bob: Caller & { sub: string };
let admin: Caller & { sub: string };

type Row = Record<string, any>;

beforeAll(async () => {
	db = await useTestDatabase();
	[alice, bob, admin] = [await createUser(db.sql), await createUser(db.sql), await createUser(db.sql)];
});

const worker = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> => as(db.sql, serviceRole, fn);

/** As an admin: app_metadata.role = 'admin' in the JWT, as GoTrue puts it there. */
async function asAdmin<T>(fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
	const claims = { ...claimsFor(admin), app_metadata: { role: 'admin' } };
	return (await db.sql.begin(async (tx) => {
		await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
		return await fn(tx);
	})) as T;
}

async function enqueue(): Promise<Row> {
	return await as(db.sql, alice, async (tx) => (await tx`select * from job_enqueue('extract')`)[0]!);
}

async function claim(id: string): Promise<Row> {
	return await worker(async (tx) => (await tx`select * from job_claim(${id})`)[0]!);
}

const timeline = (caller: Caller | 'admin', id: string): Promise<Row[]> =>
	caller === 'admin'
		? asAdmin((tx) => tx`select * from job_timeline(${id})`)
		: as(db.sql, caller, (tx) => tx`select * from job_timeline(${id})`);

const events = async (id: string) =>
	(await db.sql`select event, attempt from supabase_jobs.job_events where job_id = ${id} order by seq`).map(
		(r) => `${r.event}:${r.attempt}`,
	);

async function sqlError(p: Promise<unknown>): Promise<{ code: string; detail?: string }> {
	try {
		await p;
	} catch (e) {
		return e as { code: string; detail?: string };
	}
	throw new Error('expected the call to fail');
}

const messages = async () => Number((await db.sql`select count(*)::int as n from realtime.messages`)[0]!.n);

describe('transitions', () => {
	it('a claim and a succeed record no event: the timeline derives them from the row', async () => {
		const job = await enqueue();
		await claim(job.id);
		await worker((tx) => tx`select * from job_succeed(${job.id}, attempt => 1)`);
		expect(await events(job.id)).toEqual([]);
		const entries = await timeline('admin', job.id);
		expect(entries.map((e) => `${e.event}:${e.attempt}`)).toEqual(['queued:0', 'claimed:1', 'done:1']);
	});

	it('a retry, a reclaim and a cancel are recorded, each with the attempt it ended and why', async () => {
		const job = await enqueue();
		await claim(job.id);
		await worker((tx) => tx`select * from job_retry(${job.id}, 'The parser crashed.', attempt => 1)`);
		await claim(job.id);
		await db.sql`update jobs set heartbeat_at = now() - interval '1 hour' where id = ${job.id}`;
		await worker((tx) => tx`select * from job_reclaim_stale(interval '1 minute')`);
		await claim(job.id);
		await as(db.sql, alice, (tx) => tx`select * from job_cancel(${job.id}, 'Not needed any more.')`);
		expect(await events(job.id)).toEqual(['retried:1', 'reclaimed:2', 'cancelled:3']);
		const entries = await timeline('admin', job.id);
		expect(entries.map((e) => `${e.event}:${e.attempt}`)).toEqual([
			'queued:0',
			'claimed:1',
			'retried:1',
			'claimed:2',
			'reclaimed:2',
			'claimed:3',
			'cancelled:3',
		]);
		const retried = entries.find((e) => e.event === 'retried')!;
		expect(retried.message).toBe('The parser crashed.');
		expect(retried.fields).toMatchObject({ error_code: 'retrying' });
		const cancelled = entries.find((e) => e.event === 'cancelled')!;
		expect(cancelled.message).toBe('Not needed any more.');
		expect(cancelled.actor, 'who cancelled: the owner').toBe(alice.sub);
	});

	it('a release gives the attempt back and says so', async () => {
		const job = await enqueue();
		await claim(job.id);
		await worker((tx) => tx`select * from job_release(${job.id}, attempt => 1)`);
		expect(await events(job.id)).toEqual(['released:1']);
	});
});

describe('job_log', () => {
	it('stores the lines of the attempt that holds the job, and refuses any other attempt (PT409)', async () => {
		const job = await enqueue();
		await claim(job.id);
		const lines = [{ level: 'info', message: 'Page 1 read', fields: { page: 1 }, user_facing: true }];
		expect((await worker((tx) => tx`select job_log(${job.id}, ${tx.json(lines)}, 1) as n`))[0]!.n).toBe(1);
		expect((await sqlError(worker((tx) => tx`select job_log(${job.id}, ${tx.json(lines)}, 2)`))).code).toBe('PT409');
	});

	it('a cancelled attempt may still write its last lines', async () => {
		const job = await enqueue();
		await claim(job.id);
		await as(db.sql, alice, (tx) => tx`select * from job_cancel(${job.id})`);
		const lines = [{ level: 'warn', message: 'stopped at page 3' }];
		expect((await worker((tx) => tx`select job_log(${job.id}, ${tx.json(lines)}, 1) as n`))[0]!.n).toBe(1);
	});

	it('keeps at most 500 lines per job; the rest are counted in one marker line', async () => {
		const job = await enqueue();
		await claim(job.id);
		const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ level: 'debug', message: `line ${i}` }));
		await worker((tx) => tx`select job_log(${job.id}, ${tx.json(batch(400))}, 1)`);
		const [second] = await worker((tx) => tx`select job_log(${job.id}, ${tx.json(batch(150))}, 1, dropped => 7) as n`);
		expect(second!.n).toBe(100);
		const rows =
			await db.sql`select seq, message, fields from supabase_jobs.job_logs where job_id = ${job.id} order by seq`;
		expect(rows.length).toBe(501);
		expect(rows[0]!.fields).toEqual({ dropped: 57 });
		expect(rows[0]!.message).toContain('57 log lines dropped');
		await worker((tx) => tx`select job_log(${job.id}, ${tx.json(batch(3))}, 1)`);
		const [marker] = await db.sql`select fields from supabase_jobs.job_logs where job_id = ${job.id} and seq = 0`;
		expect(marker!.fields).toEqual({ dropped: 60 });
	});

	it.each([
		['lines[0].level', [{ level: 'trace', message: 'x' }]],
		[
			'lines[1].message',
			[
				{ level: 'info', message: 'ok' },
				{ level: 'info', message: 'x'.repeat(2001) },
			],
		],
		['lines[0].fields', [{ level: 'info', message: 'x', fields: { blob: 'x'.repeat(5000) } }]],
		['lines[0].fields', [{ level: 'info', message: 'x', fields: [1] }]],
		['lines[0].user_facing', [{ level: 'info', message: 'x', user_facing: 'yes' }]],
		['lines[0]', ['just text']],
		['lines[0].at', [{ level: 'info', message: 'x', at: '2026-13-45T00:00:00Z' }]],
		['lines[0].at', [{ level: 'info', message: 'x', at: '0000-01-01T00:00:00Z' }]],
		[
			'lines[1].at',
			[
				{ level: 'info', message: 'ok' },
				{ level: 'info', message: 'x', at: '2026-01-01T00:00:00+99:99' },
			],
		],
		['lines[0].at', [{ level: 'info', message: 'x', at: 1767225600000 }]],
	])('refuses a bad line with 22023 naming the field %s', async (field, lines) => {
		const job = await enqueue();
		await claim(job.id);
		const e = await sqlError(worker((tx) => tx`select job_log(${job.id}, ${tx.json(lines as never)}, 1)`));
		expect(e.code).toBe('22023');
		expect(e.detail).toBe(`field=${field}`);
	});

	it('job_log refuses a malformed at with 22023 naming at, and stores nothing', async () => {
		const job = await enqueue();
		await claim(job.id);
		const lines = [
			{ level: 'info', message: 'fine', at: '2026-01-01T00:00:00Z' },
			{ level: 'info', message: 'bad', at: '2026-02-30T25:61:00Z' },
		];
		const e = await sqlError(worker((tx) => tx`select job_log(${job.id}, ${tx.json(lines)}, 1)`));
		expect({ code: e.code, detail: e.detail }).toEqual({ code: '22023', detail: 'field=lines[1].at' });
		expect(await db.sql`select seq from supabase_jobs.job_logs where job_id = ${job.id}`).toEqual([]);
	});

	it("job_log's dropped count saturates at the largest integer instead of overflowing", async () => {
		const job = await enqueue();
		await claim(job.id);
		const line = [{ level: 'info', message: 'x' }];
		const max = 2147483647;
		await worker((tx) => tx`select job_log(${job.id}, ${tx.json(line)}, 1, dropped => ${max})`);
		await worker((tx) => tx`select job_log(${job.id}, ${tx.json(line)}, 1, dropped => ${max})`);
		const [marker] =
			await db.sql`select message, fields from supabase_jobs.job_logs where job_id = ${job.id} and seq = 0`;
		expect(marker!.fields).toEqual({ dropped: max });
		expect(marker!.message).toContain(`${max} log lines dropped`);
		expect(
			(await db.sql`select count(*)::int as n from supabase_jobs.job_logs where job_id = ${job.id} and seq > 0`)[0]!.n,
		).toBe(2);
	});

	it('only workers write lines: users and anon are refused (42501)', async () => {
		const job = await enqueue();
		const lines = db.sql.json([{ level: 'info', message: 'x' }]);
		for (const caller of [alice, anon])
			expect((await sqlError(as(db.sql, caller, (tx) => tx`select job_log(${job.id}, ${lines})`))).code).toBe('42501');
	});

	it('writing lines and the timeline send no Realtime message', async () => {
		const job = await enqueue();
		await claim(job.id);
		const before = await messages();
		await worker((tx) => tx`select job_log(${job.id}, ${tx.json([{ level: 'info', message: 'quiet' }])}, 1)`);
		await timeline('admin', job.id);
		expect(await messages()).toBe(before);
	});
});

describe('who reads a timeline', () => {
	let id: string;
	beforeAll(async () => {
		const job = await enqueue();
		id = job.id;
		await claim(id);
		const lines = [
			{ level: 'info', message: 'Page 3 read', user_facing: true },
			{ level: 'debug', message: 'cache miss on page 3', fields: { key: 'p3' } },
		];
		await worker((tx) => tx`select job_log(${id}, ${tx.json(lines)}, 1)`);
	});

	it('an admin reads every transition and line', async () => {
		const entries = await timeline('admin', id);
		expect(entries.map((e) => `${e.source}:${e.event}`)).toEqual([
			'transition:queued',
			'transition:claimed',
			'log:info',
			'log:debug',
		]);
	});

	it('the owner reads only the lines marked user-facing', async () => {
		const entries = await timeline(alice, id);
		expect(entries.map((e) => e.message)).toEqual(['Page 3 read']);
		const direct = await as(db.sql, alice, (tx) => tx`select message from supabase_jobs.job_logs where job_id = ${id}`);
		expect(direct.map((r) => r.message)).toEqual(['Page 3 read']);
	});

	it('another user reads nothing, by the function or the tables', async () => {
		expect(await timeline(bob, id)).toEqual([]);
		expect(await as(db.sql, bob, (tx) => tx`select * from supabase_jobs.job_logs where job_id = ${id}`)).toEqual([]);
		expect(await as(db.sql, alice, (tx) => tx`select * from supabase_jobs.job_events`)).toEqual([]);
	});

	it('anon may not call it (42501)', async () => {
		expect((await sqlError(as(db.sql, anon, (tx) => tx`select * from job_timeline(${id})`))).code).toBe('42501');
	});

	it('deleting the job deletes its lines and events', async () => {
		const job = await enqueue();
		await claim(job.id);
		await worker((tx) => tx`select * from job_retry(${job.id}, 'x', attempt => 1)`);
		await db.sql`delete from jobs where id = ${job.id}`;
		const [left] =
			await db.sql`select (select count(*) from supabase_jobs.job_events where job_id = ${job.id})::int as n`;
		expect(left!.n).toBe(0);
		expect(id).toBeTruthy();
	});
});
