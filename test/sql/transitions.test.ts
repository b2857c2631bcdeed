/**
 * Every transition and refusal of the state machine, at the SQL level, named after the
 * behaviour it holds. Calls go through the job_* functions as the roles that make
 * them in production (service_role for workers, the user for enqueue/cancel).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let alice: Caller & { sub: string };

beforeAll(async () => {
	db = await useTestDatabase();
	alice = await createUser(db.sql);
});

type Row = Record<string, any>;

const worker = (fn: (tx: any) => Promise<any>): Promise<any> => as(db.sql, serviceRole, fn);

async function enqueue(kind = 'extract', payload: Buffer | null = Buffer.from('%PDF-1.7 tender')): Promise<Row> {
	return await as(db.sql, alice, async (tx) => {
		const [row] = await tx`select * from job_enqueue(${kind}, ${tx.json({ filename: 'tender.pdf' })}, ${payload})`;
		return row!;
	});
}

async function claimed(kind = 'extract'): Promise<Row> {
	const job = await enqueue(kind);
	const [row] = await worker((tx) => tx`select * from job_claim(${job.id})`);
	return row!;
}

async function sqlstate(p: Promise<unknown>): Promise<string> {
	try {
		await p;
	} catch (e) {
		return (e as { code: string }).code;
	}
	throw new Error('expected the call to fail');
}

async function raw(id: string): Promise<Row> {
	const [row] = await db.sql`select * from jobs where id = ${id}`;
	return row!;
}

describe('Enqueue', () => {
	it('write the row, then send the task: enqueue returns a queued row with id before any worker sees it', async () => {
		const job = await enqueue();
		expect(job.id).toMatch(/^[0-9a-f-]{36}$/);
		expect(job.status).toBe('queued');
		expect(job.attempts).toBe(0);
		expect(job.owner_id).toBe(alice.sub);
		expect(job.payload, 'enqueue does not echo the payload back').toBeNull();
		const stored = await raw(job.id);
		expect(Buffer.from(stored.payload).toString()).toBe('%PDF-1.7 tender');
		expect(stored.params).toEqual({ filename: 'tender.pdf' });
	});
});

describe('The worker', () => {
	it('claim is what separates "queued" from "running"', async () => {
		const job = await enqueue();
		const [row] = await worker((tx) => tx`select * from job_claim(${job.id})`);
		expect(row.status).toBe('running');
		expect(row.attempts).toBe(1);
		expect(row.started_at).toBeInstanceOf(Date);
		expect(row.heartbeat_at).toBeInstanceOf(Date);
	});

	it('claim returns the payload with the job', async () => {
		const job = await enqueue();
		const [row] = await worker((tx) => tx`select * from job_claim(${job.id})`);
		expect(Buffer.from(row.payload).toString()).toBe('%PDF-1.7 tender');
	});

	it('claim returns None when the job is not yours: someone else claimed it', async () => {
		const job = await enqueue();
		await worker((tx) => tx`select * from job_claim(${job.id})`);
		const again = await worker((tx) => tx`select * from job_claim(${job.id})`);
		expect(again).toHaveLength(0);
		expect((await raw(job.id)).attempts).toBe(1);
	});

	it('claim returns None when the id does not exist', async () => {
		const rows = await worker((tx) => tx`select * from job_claim(gen_random_uuid())`);
		expect(rows).toHaveLength(0);
	});

	it('claim_next takes the oldest queued job of the given kinds', async () => {
		const a = await enqueue('kind-a-next');
		await enqueue('kind-b-next');
		const rows = await worker((tx) => tx`select * from job_claim_next(${['kind-a-next']}, 5)`);
		expect(rows.map((r: Row) => r.id)).toEqual([a.id]);
	});

	it('succeed drops the payload and records the result', async () => {
		const job = await claimed();
		const resultId = crypto.randomUUID();
		const [row] = await worker((tx) => tx`select * from job_succeed(${job.id}, ${resultId})`);
		expect(row.status).toBe('done');
		expect(row.result_id).toBe(resultId);
		expect(row.finished_at).toBeInstanceOf(Date);
		expect(row.progress).toBe(100);
		const stored = await raw(job.id);
		expect(stored.payload).toBeNull();
	});

	it('fail drops the payload and keeps the sentence for the user', async () => {
		const job = await claimed();
		const [row] = await worker(
			(tx) => tx`select * from job_fail(${job.id}, ${'I could not read the file: empty file'})`,
		);
		expect(row.status).toBe('failed');
		expect(row.error).toBe('I could not read the file: empty file');
		expect(row.error_code).toBe('failed');
		expect((await raw(job.id)).payload).toBeNull();
	});

	it('succeed on an unknown id raises JobNotFoundError (PT404)', async () => {
		expect(await sqlstate(worker((tx) => tx`select * from job_succeed(gen_random_uuid())`))).toBe('PT404');
		expect(await sqlstate(worker((tx) => tx`select * from job_fail(gen_random_uuid(), 'x')`))).toBe('PT404');
	});

	it('closing a job that is already terminal raises JobAlreadyFinishedError (PT409): two workers believe it is theirs', async () => {
		const job = await claimed();
		await worker((tx) => tx`select * from job_succeed(${job.id})`);
		expect(await sqlstate(worker((tx) => tx`select * from job_succeed(${job.id})`))).toBe('PT409');
		expect(await sqlstate(worker((tx) => tx`select * from job_fail(${job.id}, 'late')`))).toBe('PT409');
	});

	it('succeed on a job nobody claimed is refused (55000): claim it first', async () => {
		const job = await enqueue();
		expect(await sqlstate(worker((tx) => tx`select * from job_succeed(${job.id})`))).toBe('55000');
		expect((await raw(job.id)).status).toBe('queued');
	});

	it('a worker whose job was reclaimed and claimed again cannot close the new attempt', async () => {
		const job = await claimed();
		await db.sql`update jobs set heartbeat_at = now() - interval '1 hour' where id = ${job.id}`;
		await worker((tx) => tx`select * from job_reclaim_stale(interval '5 minutes')`);
		await worker((tx) => tx`select * from job_claim(${job.id})`);
		expect(await sqlstate(worker((tx) => tx`select * from job_succeed(${job.id}, null, 1)`))).toBe('PT409');
		const [row] = await worker((tx) => tx`select * from job_succeed(${job.id}, null, 2)`);
		expect(row.status).toBe('done');
	});
});

describe('The worker that died holding the job', () => {
	it('reclaim_stale refuses without stale_after', async () => {
		expect(await sqlstate(worker((tx) => tx`select * from job_reclaim_stale(null)`))).toBe('22004');
	});

	describe('the liveness contract: a heartbeat declared at claim, never a guessed threshold', () => {
		async function claimedWith(heartbeatMs: number | null): Promise<Row> {
			const job = await enqueue();
			const [row] = await worker((tx) => tx`select * from job_claim(${job.id}, 'jobs', ${heartbeatMs})`);
			return row!;
		}
		const silentFor = (id: string, interval: string) =>
			db.sql`update jobs set heartbeat_at = now() - ${interval}::interval where id = ${id}`;

		it('the claim stores the heartbeat interval the worker declared', async () => {
			expect((await claimedWith(2000)).heartbeat_ms).toBe(2000);
			expect((await claimedWith(null)).heartbeat_ms).toBeNull();
		});

		it('a heartbeat outside 10 ms..1 hour is refused at claim (22023, field heartbeat_ms) and the job stays queued', async () => {
			const job = await enqueue();
			const e = await worker((tx) => tx`select * from job_claim(${job.id}, 'jobs', 5)`).catch((x) => x);
			expect(e.code).toBe('22023');
			expect(e.detail).toBe('field=heartbeat_ms');
			expect((await raw(job.id)).status).toBe('queued');
			expect(await sqlstate(worker((tx) => tx`select * from job_claim_next(null, 1, 'jobs', 3600001)`))).toBe('22023');
		});

		it('reclaim_silent readmits a job whose worker missed three declared beats', async () => {
			const job = await claimedWith(1000);
			await silentFor(job.id, '3.5 seconds');
			const rows = await worker((tx) => tx`select * from job_reclaim_silent()`);
			expect(rows.map((r: Row) => r.id)).toContain(job.id);
			expect((await raw(job.id)).status).toBe('queued');
		});

		it('two missed beats are not yet a dead worker', async () => {
			const job = await claimedWith(1000);
			await silentFor(job.id, '2 seconds');
			await worker((tx) => tx`select * from job_reclaim_silent()`);
			expect((await raw(job.id)).status).toBe('running');
		});

		it('a job claimed without a declared heartbeat is never reclaimed by reclaim_silent, however long it is silent', async () => {
			const job = await claimedWith(null);
			await silentFor(job.id, '10 days');
			const rows = await worker((tx) => tx`select * from job_reclaim_silent()`);
			expect(rows.map((r: Row) => r.id)).not.toContain(job.id);
			expect((await raw(job.id)).status).toBe('running');
		});

		it('a job claimed without a declared heartbeat is reclaimed only with an explicit stale_after', async () => {
			const job = await claimedWith(null);
			await silentFor(job.id, '10 minutes');
			await worker((tx) => tx`select * from job_reclaim_stale(interval '5 minutes')`);
			expect((await raw(job.id)).status).toBe('queued');
		});

		it('the reclaim schedule guesses nothing: settings.stale_after is null by default and reclaim_all applies only declared heartbeats', async () => {
			const [settings] = await db.sql`select stale_after from supabase_jobs.settings`;
			expect(settings!.stale_after).toBeNull();
			const bare = await claimedWith(null);
			const declared = await claimedWith(500);
			await silentFor(bare.id, '1 hour');
			await silentFor(declared.id, '1 hour');
			const rows = await worker((tx) => tx`select * from supabase_jobs.reclaim_all(null)`);
			const ids = rows.map((r: Row) => r.id);
			expect(ids).toContain(declared.id);
			expect(ids).not.toContain(bare.id);
			expect((await raw(bare.id)).status).toBe('running');
		});

		it('users cannot call reclaim_silent (42501)', async () => {
			expect(await sqlstate(as(db.sql, alice, (tx) => tx`select * from job_reclaim_silent()`))).toBe('42501');
		});
	});

	it('rows whose last heartbeat is older than stale_after go back to queued', async () => {
		const job = await claimed();
		await db.sql`update jobs set heartbeat_at = now() - interval '10 minutes' where id = ${job.id}`;
		const rows = await worker((tx) => tx`select * from job_reclaim_stale(interval '5 minutes')`);
		expect(rows.map((r: Row) => r.id)).toContain(job.id);
		const stored = await raw(job.id);
		expect(stored.status).toBe('queued');
		expect(stored.started_at).toBeNull();
		expect(Buffer.from(stored.payload).toString(), 'a requeued job keeps its input').toBe('%PDF-1.7 tender');
	});

	it('started_at counts when the worker never ticked', async () => {
		const job = await claimed();
		await db.sql`update jobs set heartbeat_at = null, started_at = now() - interval '10 minutes' where id = ${job.id}`;
		await worker((tx) => tx`select * from job_reclaim_stale(interval '5 minutes')`);
		expect((await raw(job.id)).status).toBe('queued');
	});

	it('a running job with a fresh heartbeat is left alone', async () => {
		const job = await claimed();
		await db.sql`update jobs set started_at = now() - interval '1 hour' where id = ${job.id}`;
		await worker((tx) => tx`select job_tick(${job.id}, 10, 'pdf')`);
		await worker((tx) => tx`select * from job_reclaim_stale(interval '5 minutes')`);
		expect((await raw(job.id)).status).toBe('running');
	});

	it('once max_attempts is spent the job is closed as failed, with a sentence for the user in their language', async () => {
		const job = await as(db.sql, alice, async (tx) => {
			const [r] = await tx`select * from job_enqueue('extract', '{}', null, 1, 'pt-BR')`;
			return r!;
		});
		await worker((tx) => tx`select * from job_claim(${job.id})`);
		await db.sql`update jobs set heartbeat_at = now() - interval '1 hour' where id = ${job.id}`;
		await worker((tx) => tx`select * from job_reclaim_stale(interval '5 minutes')`);
		const stored = await raw(job.id);
		expect(stored.status).toBe('failed');
		expect(stored.error_code).toBe('worker_lost');
		expect(stored.error).toMatch(/parou inesperadamente 1 vez/);
		expect(stored.error).not.toMatch(/Error|at |stack/);
		expect(stored.payload).toBeNull();
	});

	it('without that budget a job that kills its worker would be readmitted forever: it ends after max_attempts', async () => {
		const job = await enqueue();
		for (let i = 0; i < 3; i++) {
			const claimedRows = await worker((tx) => tx`select * from job_claim(${job.id})`);
			expect(claimedRows).toHaveLength(1);
			await db.sql`update jobs set heartbeat_at = now() - interval '1 hour' where id = ${job.id}`;
			await worker((tx) => tx`select * from job_reclaim_stale(interval '5 minutes')`);
		}
		const stored = await raw(job.id);
		expect(stored.status).toBe('failed');
		expect(stored.attempts).toBe(3);
		expect(stored.error).toMatch(/stopped unexpectedly 3 time/);
	});
});

describe('Listing', () => {
	it('returns [] when nothing matches: "no jobs yet" is a successful answer, not a 404', async () => {
		const rows = await as(db.sql, alice, (tx) => tx`select * from job_list_recent(kind => 'never-enqueued')`);
		expect(rows).toEqual([]);
	});

	it('newest first, filtered by kind, keyset-paginated with a cursor', async () => {
		const ids: string[] = [];
		for (let i = 0; i < 5; i++) ids.push((await enqueue('paged')).id);
		const page1 = await as(
			db.sql,
			alice,
			(tx) =>
				tx`select *, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as c from job_list_recent(kind => 'paged', "limit" => 2)`,
		);
		expect(page1.map((r: Row) => r.id)).toEqual([ids[4], ids[3]]);
		const last = page1[1] as Row;
		const cursor = `${last.c}~${last.id}`;
		const page2 = await as(
			db.sql,
			alice,
			(tx) => tx`select * from job_list_recent(kind => 'paged', "limit" => 10, cursor => ${cursor})`,
		);
		expect(page2.map((r: Row) => r.id)).toEqual([ids[2], ids[1], ids[0]]);
		expect(page2.every((r: Row) => r.payload === null)).toBe(true);
	});

	it('plural statuses is one question: "queued or running"', async () => {
		const q = await enqueue('strip');
		const r = await claimed('strip');
		const done = await claimed('strip');
		await worker((tx) => tx`select * from job_succeed(${done.id})`);
		const rows = await as(
			db.sql,
			alice,
			(tx) => tx`select * from job_list_recent(kind => 'strip', statuses => '{queued,running}')`,
		);
		expect(rows.map((x: Row) => x.id).sort()).toEqual([q.id, r.id].sort());
	});

	it('a single status filters too', async () => {
		const r = await claimed('single-status');
		await enqueue('single-status');
		const rows = await as(
			db.sql,
			alice,
			(tx) => tx`select * from job_list_recent(kind => 'single-status', status => 'running')`,
		);
		expect(rows.map((x: Row) => x.id)).toEqual([r.id]);
	});
});

describe('Cancelling', () => {
	it('the request writes cancelled and answers immediately', async () => {
		const job = await claimed();
		const rows = await as(db.sql, alice, (tx) => tx`select * from job_cancel(${job.id}, 'cancelled by the user')`);
		expect(rows).toHaveLength(1);
		expect(rows[0]!.status).toBe('cancelled');
		expect(rows[0]!.error).toBe('cancelled by the user');
		expect(rows[0]!.error_code).toBe('cancelled');
		expect((await raw(job.id)).payload, 'cancel drops the payload').toBeNull();
	});

	it("cancel writes a sentence in the user's language when no reason is given", async () => {
		const job = await as(
			db.sql,
			alice,
			async (tx) => (await tx`select * from job_enqueue('extract', locale => 'pt-BR')`)[0]!,
		);
		const [row] = await as(db.sql, alice, (tx) => tx`select * from job_cancel(${job.id})`);
		expect(row!.error).toBe('Cancelado a pedido do usuário.');
	});

	it('idempotent on purpose: cancel returns None for an unknown id, a job already done, failed or cancelled', async () => {
		const done = await claimed();
		await worker((tx) => tx`select * from job_succeed(${done.id})`);
		const failed = await claimed();
		await worker((tx) => tx`select * from job_fail(${failed.id}, 'no')`);
		const cancelled = await enqueue();
		await as(db.sql, alice, (tx) => tx`select * from job_cancel(${cancelled.id})`);
		for (const id of [crypto.randomUUID(), done.id, failed.id, cancelled.id]) {
			const rows = await as(db.sql, alice, (tx) => tx`select * from job_cancel(${id})`);
			expect(rows).toEqual([]);
		}
		expect((await raw(done.id)).status).toBe('done');
		expect((await raw(failed.id)).status).toBe('failed');
	});

	it('succeed refuses to land on top of a cancellation (JobCancelledError, PT410)', async () => {
		const job = await claimed();
		await as(db.sql, alice, (tx) => tx`select * from job_cancel(${job.id})`);
		expect(await sqlstate(worker((tx) => tx`select * from job_succeed(${job.id})`))).toBe('PT410');
		expect(await sqlstate(worker((tx) => tx`select * from job_fail(${job.id}, 'late')`))).toBe('PT410');
		expect((await raw(job.id)).status).toBe('cancelled');
	});

	it('a cancelled queued job can no longer be claimed', async () => {
		const job = await enqueue();
		await as(db.sql, alice, (tx) => tx`select * from job_cancel(${job.id})`);
		expect(await worker((tx) => tx`select * from job_claim(${job.id})`)).toHaveLength(0);
	});
});

describe('Progress: one poll answers both questions', () => {
	it('tick writes progress, stage and heartbeat in one statement and returns the status', async () => {
		const job = await claimed();
		const before = (await raw(job.id)).heartbeat_at as Date;
		const [{ job_tick }] = (await worker((tx) => tx`select job_tick(${job.id}, 42.5, 'table')`)) as Row[];
		expect(job_tick).toBe('running');
		const stored = await raw(job.id);
		expect(stored.progress).toBe(42.5);
		expect(stored.stage).toBe('table');
		expect((stored.heartbeat_at as Date).getTime()).toBeGreaterThanOrEqual(before.getTime());
	});

	it('the tick that writes progress is the one that learns of the cancellation', async () => {
		const job = await claimed();
		await as(db.sql, alice, (tx) => tx`select * from job_cancel(${job.id})`);
		const [{ job_tick }] = (await worker((tx) => tx`select job_tick(${job.id}, 50, 'table')`)) as Row[];
		expect(job_tick).toBe('cancelled');
		expect((await raw(job.id)).progress, 'a cancelled job keeps the progress it had').toBe(0);
	});

	it('progress never decreases within an attempt', async () => {
		const job = await claimed();
		await worker((tx) => tx`select job_tick(${job.id}, 60, 'reading')`);
		await worker((tx) => tx`select job_tick(${job.id}, 30, 'reading')`);
		expect((await raw(job.id)).progress).toBe(60);
	});

	it('a new attempt starts its bar at zero', async () => {
		const job = await claimed();
		await worker((tx) => tx`select job_tick(${job.id}, 70, 'reading')`);
		await worker((tx) => tx`select * from job_retry(${job.id}, 'temporary trouble', interval '0')`);
		const [again] = await worker((tx) => tx`select * from job_claim(${job.id})`);
		expect(again!.progress).toBe(0);
		expect(again!.stage).toBeNull();
		expect(again!.attempts).toBe(2);
	});

	it('tick on an unknown job raises JobNotFoundError (PT404)', async () => {
		expect(await sqlstate(worker((tx) => tx`select job_tick(gen_random_uuid(), 1)`))).toBe('PT404');
	});

	it('tick from an attempt that was reclaimed is refused (PT409)', async () => {
		const job = await claimed();
		await db.sql`update jobs set heartbeat_at = now() - interval '1 hour' where id = ${job.id}`;
		await worker((tx) => tx`select * from job_reclaim_stale(interval '1 minute')`);
		expect(await sqlstate(worker((tx) => tx`select job_tick(${job.id}, 5, 'pdf', 1)`))).toBe('PT409');
	});
});

describe('Retry and release', () => {
	it('retry puts the job back with a backoff, and it is not claimable before available_at', async () => {
		const job = await claimed();
		const [row] = await worker(
			(tx) => tx`select * from job_retry(${job.id}, 'the model timed out', interval '1 hour')`,
		);
		expect(row!.status).toBe('queued');
		expect(row!.error_code).toBe('retrying');
		expect(await worker((tx) => tx`select * from job_claim(${job.id})`)).toHaveLength(0);
	});

	it('retry fails the job once max_attempts is spent', async () => {
		const job = await as(
			db.sql,
			alice,
			async (tx) => (await tx`select * from job_enqueue('extract', max_attempts => 1)`)[0]!,
		);
		await worker((tx) => tx`select * from job_claim(${job.id})`);
		const [row] = await worker(
			(tx) => tx`select * from job_retry(${job.id}, 'We could not finish this; please try again later.')`,
		);
		expect(row!.status).toBe('failed');
		expect(row!.error_code).toBe('attempts_exhausted');
	});

	it('release gives the job back without spending the attempt', async () => {
		const job = await claimed();
		const [row] = await worker((tx) => tx`select * from job_release(${job.id}, 1)`);
		expect(row!.status).toBe('queued');
		expect(row!.attempts).toBe(0);
		expect(Buffer.from((await raw(job.id)).payload).toString()).toBe('%PDF-1.7 tender');
	});
});

describe('get', () => {
	it('returns the job without its payload', async () => {
		const job = await enqueue();
		const [row] = await as(db.sql, alice, (tx) => tx`select * from job_get(${job.id})`);
		expect(row!.id).toBe(job.id);
		expect(row!.payload).toBeNull();
	});

	it('raises JobNotFoundError (PT404) for an id that does not exist', async () => {
		expect(await sqlstate(as(db.sql, alice, (tx) => tx`select * from job_get(gen_random_uuid())`))).toBe('PT404');
	});
});
