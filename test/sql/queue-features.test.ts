/**
 * The queue features at the SQL level, where races are proven with
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

describe('concurrency limits, enforced in the claim', () => {
	const enqueueMany = (kind: string, keys: (string | null)[]) =>
		as(db.sql, serviceRole, (tx) =>
			Promise.all(keys.map((key) => tx`select id from job_enqueue(${kind}, concurrency_key => ${key})`)),
		);
	const running = async (kind: string) =>
		(await db.sql`select count(*)::int as n from public.jobs where kind = ${kind} and status = 'running'`)[0]!
			.n as number;

	it('8 workers racing claim_next on a kind limited to 2 running never start more than 2', async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('limited.kind', 2)`);
		await enqueueMany(
			'limited.kind',
			Array.from({ length: 20 }, () => null),
		);
		const clients = Array.from({ length: 8 }, () => db.connect({ max: 1 }));
		try {
			const claimed = await Promise.all(
				clients.map((sql) => as(sql, serviceRole, (tx) => tx`select id from job_claim_next(array['limited.kind'], 5)`)),
			);
			expect(claimed.flat()).toHaveLength(2);
			expect(await running('limited.kind')).toBe(2);
			// A slot frees: the next claim takes exactly one.
			await as(db.sql, serviceRole, (tx) => tx`select job_succeed(${claimed.flat()[0]!.id})`);
			const next = await as(db.sql, serviceRole, (tx) => tx`select id from job_claim_next(array['limited.kind'], 5)`);
			expect(next).toHaveLength(1);
		} finally {
			await Promise.all(clients.map((c) => c.end()));
		}
	});

	it('per key: one export per user at a time, other users not held back', async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('export.per-user', max_running_per_key => 1)`);
		const ids = await enqueueMany('export.per-user', ['user-a', 'user-a', 'user-a', 'user-b', 'user-b', null]);
		const claimed = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select id, concurrency_key from job_claim_next(array['export.per-user'], 10)`,
		);
		expect(claimed.map((r) => r.concurrency_key).sort()).toEqual(['user-a', 'user-b', null].sort());
		// The other two of user-a and the second of user-b wait queued.
		const waiting =
			await db.sql`select count(*)::int as n from public.jobs where kind = 'export.per-user' and status = 'queued'`;
		expect(waiting[0]!.n).toBe(3);
		expect(ids).toHaveLength(6);
	});

	it('a job passed over for its key does not take a slot of its kind from the jobs behind it', async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('export.both', 2, 1)`);
		// In claim order: three of user-a (only the first may run), then one of user-b.
		await enqueueMany('export.both', ['user-a', 'user-a', 'user-a']);
		await enqueueMany('export.both', ['user-b']);
		const claimed = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select concurrency_key from job_claim_next(array['export.both'], 10)`,
		);
		expect(claimed.map((r) => r.concurrency_key).sort()).toEqual(['user-a', 'user-b']);
		expect(await running('export.both')).toBe(2);
		// Both slots of the kind are taken now: nothing more starts.
		expect(await as(db.sql, serviceRole, (tx) => tx`select id from job_claim_next(array['export.both'], 10)`)).toEqual(
			[],
		);
	});

	it('a claim of a limited table skips a job another transaction holds locked, and claims the next', async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('locked.kind', 5)`);
		const [[first]] = await enqueueMany('locked.kind', [null]);
		const [[second]] = await enqueueMany('locked.kind', [null]);
		const holder = db.connect({ max: 1 });
		try {
			const claimed = await holder.begin(async (tx) => {
				await tx`select id from public.jobs where id = ${first!.id} for update`;
				return await as(db.sql, serviceRole, (t) => t`select id from job_claim_next(array['locked.kind'], 1)`);
			});
			expect(claimed.map((r) => r.id)).toEqual([second!.id]);
		} finally {
			await holder.end();
		}
	});

	/** The queued jobs of `kind` another transaction could lock right now (none held by a claim). */
	const lockable = async (kind: string) =>
		(
			await db.sql`select count(*)::int as n from (select id from public.jobs where kind = ${kind} and status = 'queued' for update skip locked) j`
		)[0]!.n as number;

	it('a claim asking for more than its kind has room for takes that room and leaves every job behind it unlocked', async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('room.kind', 2)`);
		await enqueueMany(
			'room.kind',
			Array.from({ length: 30 }, () => null),
		);
		const claimer = db.connect({ max: 1 });
		try {
			await as(claimer, serviceRole, async (tx) => {
				expect(await tx`select id from job_claim_next(array['room.kind'], 10)`).toHaveLength(2);
				// Still inside the claim's transaction: the 28 it could not take are free to others.
				expect(await lockable('room.kind')).toBe(28);
			});
			expect(await running('room.kind')).toBe(2);
		} finally {
			await claimer.end();
		}
	});

	it('jobs of a kind at its limit are passed over unlocked while a claim takes another kind behind them', async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('full.kind', 1)`);
		await enqueueMany('full.kind', [null]);
		expect(
			await as(db.sql, serviceRole, (tx) => tx`select id from job_claim_next(array['full.kind'], 1)`),
		).toHaveLength(1);
		await enqueueMany(
			'full.kind',
			Array.from({ length: 5 }, () => null),
		);
		const [[free]] = await enqueueMany('free.kind', [null]);
		const claimer = db.connect({ max: 1 });
		try {
			await as(claimer, serviceRole, async (tx) => {
				const claimed = await tx`select id from job_claim_next(array['full.kind', 'free.kind'], 3)`;
				expect(claimed.map((r) => r.id)).toEqual([free!.id]);
				expect(await lockable('full.kind')).toBe(5);
			});
		} finally {
			await claimer.end();
		}
	});

	it('claim by id honours the same limits: no row while the kind is full', async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('single.kind', 1)`);
		const [[a], [b]] = await enqueueMany('single.kind', [null, null]);
		expect(await as(db.sql, serviceRole, (tx) => tx`select id from job_claim(${a!.id})`)).toHaveLength(1);
		expect(await as(db.sql, serviceRole, (tx) => tx`select id from job_claim(${b!.id})`)).toEqual([]);
		const [row] = await db.sql`select status from public.jobs where id = ${b!.id}`;
		expect(row!.status).toBe('queued');
	});

	it("limits are the service role's to set, and nonsense is refused naming the field", async () => {
		const user = await createUser(db.sql);
		const e1 = await as(db.sql, user, (tx) => tx`select job_set_concurrency('x', 1)`).catch((x) => x);
		expect(e1.code).toBe('42501');
		const e2 = await as(db.sql, serviceRole, (tx) => tx`select job_set_concurrency('x', 0)`).catch((x) => x);
		expect([e2.code, e2.detail]).toEqual(['22023', 'field=max_running']);
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
