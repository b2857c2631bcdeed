/**
 * The insert trigger on every job table queues one wake-up per statement and
 * kind through pg_net (the local stand-in queue here), with the worker URL and
 * secret from Vault, and never makes enqueue fail.
 */
import { createHmac } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';
import {
	clearRequestQueue,
	queuedRequests,
	removeWorkerSecrets,
	setWorkerSecrets,
	WORKER_SECRET,
} from './worker-secrets.ts';
import { createJobTable } from '../store/harness.ts';

const WORKER_URL = 'http://127.0.0.1:9/functions/v1/jobs-worker';
let db: TestDatabase;
let user: Caller & { sub: string };

class Rollback extends Error {}

beforeAll(async () => {
	db = await useTestDatabase();
	user = await createUser(db.sql);
	await createJobTable(db.sql, 'exports'); // users invent kinds in it
});

beforeEach(async () => {
	await setWorkerSecrets(db.sql, WORKER_URL);
	await clearRequestQueue(db.sql);
});

describe('enqueue kicks the worker', () => {
	it('an enqueue by a user queues exactly one request, visible only after commit', async () => {
		const job = await as(db.sql, user, async (tx) => {
			const [row] = await tx`select * from job_enqueue('thumbnail', '{"w": 64}')`;
			// Another session sees nothing before the commit: pg_net sends only committed requests.
			expect(await queuedRequests(db.sql)).toEqual([]);
			return row!;
		});
		const requests = await queuedRequests(db.sql);
		expect(requests).toHaveLength(1);
		const [request] = requests;
		expect(request!.method).toBe('POST');
		expect(request!.url).toBe(WORKER_URL);
		// A signed token that expires in minutes, never the secret itself, waits in pg_net's queue.
		expect(request!.headers).toEqual({
			'Content-Type': 'application/json',
			Authorization: expect.stringMatching(/^Bearer v1\.\d+\.[0-9a-f]{64}$/),
		});
		expect(JSON.stringify(request!.headers)).not.toContain(WORKER_SECRET);
		const [, at, mac] = /^Bearer v1\.(\d+)\.([0-9a-f]{64})$/.exec(request!.headers.Authorization as string)!;
		expect(mac).toBe(createHmac('sha256', WORKER_SECRET).update(`v1.${at}`).digest('hex'));
		expect(Math.abs(Number(at) - Date.now() / 1000)).toBeLessThan(60);
		expect(request!.body).toEqual({
			job_id: job.id,
			job_table: 'jobs',
			kind: 'thumbnail',
			kinds: ['thumbnail'],
			count: 1,
			reason: 'enqueue',
		});
		expect(request!.timeout_milliseconds).toBe(5000);
	});

	it('a rolled-back enqueue queues nothing', async () => {
		await expect(
			as(db.sql, user, async (tx) => {
				await tx`select * from job_enqueue('thumbnail')`;
				throw new Rollback('undo');
			}),
		).rejects.toBeInstanceOf(Rollback);
		expect(await queuedRequests(db.sql)).toEqual([]);
	});

	it('names the job table the job went into', async () => {
		const job = await as(
			db.sql,
			user,
			async (tx) => (await tx`select * from job_enqueue('csv', job_table => 'exports')`)[0]!,
		);
		const requests = await queuedRequests(db.sql);
		expect(requests.map((r) => r.body)).toEqual([
			{ job_id: job.id, job_table: 'exports', kind: 'csv', kinds: ['csv'], count: 1, reason: 'enqueue' },
		]);
	});

	it('takes the timeout from supabase_jobs.settings', async () => {
		await db.sql`update supabase_jobs.settings set kick_timeout_ms = 1500`;
		try {
			await as(db.sql, user, (tx) => tx`select job_enqueue('thumbnail')`);
			expect((await queuedRequests(db.sql)).map((r) => r.timeout_milliseconds)).toEqual([1500]);
		} finally {
			await db.sql`update supabase_jobs.settings set kick_timeout_ms = default`;
		}
	});

	it('a batch insert of 100 jobs of one kind queues one request that counts them', async () => {
		await as(
			db.sql,
			serviceRole,
			(tx) => tx`
			insert into public.jobs (kind, params, owner_id)
			select 'resize', jsonb_build_object('n', n), ${user.sub}::uuid from generate_series(1, 100) n`,
		);
		const requests = await queuedRequests(db.sql);
		expect(requests.map((r) => r.body)).toEqual([
			{ job_id: null, job_table: 'jobs', kind: 'resize', kinds: ['resize'], count: 100, reason: 'enqueue' },
		]);
		const [{ n }] = await db.sql`select count(*)::int as n from public.jobs where kind = 'resize'`;
		expect(n).toBe(100);
	});

	it('a batch insert of 100 jobs of two kinds queues ONE request naming both kinds', async () => {
		await as(
			db.sql,
			serviceRole,
			(tx) => tx`
			insert into public.jobs (kind, owner_id)
			select case when n % 4 = 0 then 'ocr' else 'resize' end, ${user.sub}::uuid from generate_series(1, 100) n`,
		);
		const requests = await queuedRequests(db.sql);
		expect(requests.map((r) => r.body)).toEqual([
			{ job_id: null, job_table: 'jobs', kind: null, kinds: ['ocr', 'resize'], count: 100, reason: 'enqueue' },
		]);
	});

	it('100 separate enqueues queue 100 requests, one per job', async () => {
		const ids = new Set<string>();
		for (let i = 0; i < 100; i++) {
			const job = await as(db.sql, user, async (tx) => (await tx`select id from job_enqueue('thumbnail')`)[0]!);
			ids.add(job.id as string);
		}
		const requests = await queuedRequests(db.sql);
		expect(requests).toHaveLength(100);
		expect(new Set(requests.map((r) => r.body.job_id))).toEqual(ids);
	});

	it('a job that is not available yet is not kicked (the backstop wakes the worker when it is)', async () => {
		await as(
			db.sql,
			serviceRole,
			(tx) =>
				tx`insert into public.jobs (kind, owner_id, available_at) values ('later', ${user.sub}, now() + interval '1 hour')`,
		);
		expect(await queuedRequests(db.sql)).toEqual([]);
	});
});

describe('enqueue never fails because the kick cannot be sent', () => {
	it('without the Vault secrets, enqueue works and nothing is queued', async () => {
		await removeWorkerSecrets(db.sql);
		const [job] = await as(db.sql, user, (tx) => tx`select * from job_enqueue('thumbnail')`);
		expect(job!.status).toBe('queued');
		expect(await queuedRequests(db.sql)).toEqual([]);
	});

	it('with only the URL secret, enqueue works and nothing is queued', async () => {
		await db.sql`delete from vault.secrets where name = 'supabase_jobs_worker_secret'`;
		const [job] = await as(db.sql, user, (tx) => tx`select * from job_enqueue('thumbnail')`);
		expect(job!.status).toBe('queued');
		expect(await queuedRequests(db.sql)).toEqual([]);
	});

	it('without pg_net, enqueue works', async () => {
		await expect(
			db.sql.begin(async (tx) => {
				await tx`alter schema net rename to net_absent`;
				await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: user.sub, role: 'authenticated' })}, true)`;
				const [job] = await tx`select * from job_enqueue('thumbnail')`;
				expect(job!.status).toBe('queued');
				throw new Rollback('put net back');
			}),
		).rejects.toBeInstanceOf(Rollback);
	});

	it('without Vault, enqueue works', async () => {
		await expect(
			db.sql.begin(async (tx) => {
				await tx`alter schema vault rename to vault_absent`;
				await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: user.sub, role: 'authenticated' })}, true)`;
				const [job] = await tx`select * from job_enqueue('thumbnail')`;
				expect(job!.status).toBe('queued');
				await tx`reset role`;
				const [{ n }] = await tx`select count(*)::int as n from net.http_request_queue`;
				expect(n).toBe(0);
				throw new Rollback('put vault back');
			}),
		).rejects.toBeInstanceOf(Rollback);
	});

	it('when pg_net raises, enqueue works and the failure is only a warning', async () => {
		const warnings: string[] = [];
		const sql = db.connect({ max: 1, onnotice: (n) => warnings.push(String(n.message)) });
		// pg_net raising (a bad URL, a full queue, a broken install) inside the kick.
		await expect(
			sql.begin(async (tx) => {
				await tx`create or replace function net.http_post(url text, body jsonb default '{}', params jsonb default '{}',
					headers jsonb default '{}', timeout_milliseconds integer default 5000)
					returns bigint language plpgsql as $$ begin raise exception 'pg_net is broken'; end $$`;
				await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: user.sub, role: 'authenticated' })}, true)`;
				const [job] = await tx`select * from job_enqueue('thumbnail')`;
				expect(job!.status).toBe('queued');
				throw new Rollback('restore net.http_post');
			}),
		).rejects.toBeInstanceOf(Rollback);
		expect(warnings.some((w) => w.includes('the worker was not woken') && w.includes('pg_net is broken'))).toBe(true);
	});
});
