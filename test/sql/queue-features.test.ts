/**
 * The queue features of issue 15 at the SQL level, where races are proven with
 * real connections: idempotency keys hold under concurrent enqueues; a
 * scheduled job is never claimed early; tags are indexed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;

beforeAll(async () => {
	db = await useTestDatabase();
});

describe('idempotency keys', () => {
	it('8 connections racing job_enqueue_once with one key create exactly one job, and all get it back', async () => {
		const user = await createUser(db.sql);
		const clients = Array.from({ length: 8 }, () => db.connect({ max: 1 }));
		try {
			const results = await Promise.all(
				clients.map((sql) =>
					as(sql, user, async (tx) => {
						const [row] =
							await tx`select existing, job ->> 'id' as id from job_enqueue_once('export.csv', 'double-click')`;
						return row as { existing: boolean; id: string };
					}),
				),
			);
			expect(new Set(results.map((r) => r.id)).size).toBe(1);
			expect(results.filter((r) => !r.existing)).toHaveLength(1);
			const [{ n }] = await db.sql`select count(*)::int as n from public.jobs where idempotency_key = 'double-click'`;
			expect(n).toBe(1);
		} finally {
			await Promise.all(clients.map((c) => c.end()));
		}
	});

	it("one user's key never returns or blocks another user's job", async () => {
		const a = await createUser(db.sql);
		const b = await createUser(db.sql);
		const enqueue = (user: typeof a) =>
			as(
				db.sql,
				user,
				async (tx) => (await tx`select existing, job ->> 'owner_id' as owner from job_enqueue_once('x', 'k')`)[0]!,
			);
		expect(await enqueue(a)).toEqual({ existing: false, owner: a.sub });
		expect(await enqueue(b)).toEqual({ existing: false, owner: b.sub });
		expect(await enqueue(a)).toEqual({ existing: true, owner: a.sub });
	});

	it('an empty or oversized key is refused with 22023 naming it', async () => {
		for (const key of ['', 'k'.repeat(201)]) {
			const e = await as(db.sql, serviceRole, (tx) => tx`select * from job_enqueue_once('x', ${key})`).catch((x) => x);
			expect(e.code).toBe('22023');
			expect(e.detail).toBe('field=idempotency_key');
		}
	});
});

describe('scheduled runs', () => {
	it('claim_next never hands out a job before its run_at, even racing', async () => {
		const [job] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select id from job_enqueue('later', run_at => now() + interval '1 hour')`,
		);
		const clients = Array.from({ length: 4 }, () => db.connect({ max: 1 }));
		try {
			const claimed = await Promise.all(
				clients.map((sql) => as(sql, serviceRole, (tx) => tx`select id from job_claim_next(array['later'], 10)`)),
			);
			expect(claimed.flat()).toEqual([]);
			expect((await as(db.sql, serviceRole, (tx) => tx`select id from job_claim(${job!.id})`)).length).toBe(0);
		} finally {
			await Promise.all(clients.map((c) => c.end()));
		}
	});

	it('a user may move the start of their queued job, and nothing else of it, directly or through job_reschedule', async () => {
		const user = await createUser(db.sql);
		const [job] = await as(
			db.sql,
			user,
			(tx) => tx`select id from job_enqueue('later', delay => interval '10 minutes')`,
		);
		await as(db.sql, user, (tx) => tx`select job_reschedule(${job!.id}, delay => interval '20 minutes')`);
		const e = await as(
			db.sql,
			user,
			(tx) => tx`update public.jobs set available_at = now(), progress = 50 where id = ${job!.id}`,
		).catch((x) => x);
		expect(e.code).toBe('42501');
	});
});

describe('expiry before start', () => {
	it('a queued job past expires_at is never claimed, and the reclaim schedule closes it failed with a sentence in its language', async () => {
		const [job] = await as(
			db.sql,
			serviceRole,
			// Its start two hours ago, an hour to be started: expired already.
			(tx) =>
				tx`select id from job_enqueue('expiring', locale => 'pt-BR', run_at => now() - interval '2 hours', expire_after => interval '1 hour')`,
		);
		expect(await as(db.sql, serviceRole, (tx) => tx`select id from job_claim(${job!.id})`)).toEqual([]);
		expect(await as(db.sql, serviceRole, (tx) => tx`select id from job_claim_next(array['expiring'])`)).toEqual([]);
		const closed = await db.sql`select * from supabase_jobs.reclaim_all(null)`;
		expect(closed.map((r) => ({ ...r }))).toContainEqual({ job_table: 'jobs', id: job!.id, status: 'failed' });
		const [row] = await db.sql`select status, error_code, error, finished_at from public.jobs where id = ${job!.id}`;
		expect(row).toMatchObject({
			status: 'failed',
			error_code: 'expired',
			error: 'Expirou antes de poder começar. Tente novamente.',
		});
		expect(row!.finished_at).toBeInstanceOf(Date);
	});

	it('a job still in time is left alone', async () => {
		const [job] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select id from job_enqueue('expiring', expire_after => interval '1 hour')`,
		);
		await db.sql`select * from supabase_jobs.reclaim_all(null)`;
		const [row] = await db.sql`select status from public.jobs where id = ${job!.id}`;
		expect(row!.status).toBe('queued');
	});
});

describe('tags', () => {
	it('filtering by tag uses the GIN index', async () => {
		await db.sql`set enable_seqscan = off`;
		try {
			const plan =
				await db.sql`explain select id from supabase_jobs.job where tags <> '{}' and tags @> array['invoice']`;
			expect(plan.map((r) => Object.values(r)[0]).join('\n')).toMatch(/job_tags_idx|tags_idx/);
		} finally {
			await db.sql`reset enable_seqscan`;
		}
	});
});
