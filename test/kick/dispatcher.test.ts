/**
 * The local dispatcher does what pg_net's and pg_cron's workers do on Supabase:
 * it delivers committed requests to the worker and records the responses, and
 * runs the stand-in cron jobs.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDispatcher, type CronRun, type DispatchedResponse, type Dispatcher } from '../../src/local/dispatcher.ts';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';
import { startHttpRecorder, type HttpRecorder } from './http-recorder.ts';
import { runningJob } from './job-fixtures.ts';
import { clearRequestQueue, setWorkerSecrets, WORKER_SECRET } from './worker-secrets.ts';

let db: TestDatabase;
let user: Caller & { sub: string };
let worker: HttpRecorder;
let dispatcher: Dispatcher;

beforeAll(async () => {
	db = await useTestDatabase();
	user = await createUser(db.sql);
	worker = await startHttpRecorder();
	await setWorkerSecrets(db.sql, worker.url);
	await clearRequestQueue(db.sql);
	// A long poll, so the deliveries below are driven by NOTIFY, not by the poll.
	dispatcher = await startDispatcher({ url: db.url, pollIntervalMs: 60_000, cronTimer: false });
});

afterAll(async () => {
	await dispatcher?.stop();
	await worker?.close();
});

beforeEach(() => {
	worker.respondWith(202);
});

function nextResponse(): Promise<DispatchedResponse> {
	return once(dispatcher, 'response').then(([r]) => r as DispatchedResponse);
}

describe('the dispatcher delivers what pg_net would', () => {
	it('detects the stand-ins', () => {
		expect([dispatcher.sendsHttp, dispatcher.runsCron]).toEqual([true, true]);
	});

	it('delivers an enqueue kick to the worker after commit, with the secret, and stores the response', async () => {
		const seen = worker.requests.length;
		const stored = nextResponse();
		const [job] = await as(db.sql, user, (tx) => tx`select id from job_enqueue('thumbnail')`);
		const request = await worker.nth(seen);
		expect(request.method).toBe('POST');
		expect(request.path).toBe('/functions/v1/jobs-worker');
		expect(request.headers.authorization).toMatch(/^Bearer v1\.\d+\.[0-9a-f]{64}$/);
		expect(request.headers.authorization).not.toContain(WORKER_SECRET);
		expect(request.headers['content-type']).toBe('application/json');
		expect(request.body).toEqual({
			job_id: job!.id,
			job_table: 'jobs',
			kind: 'thumbnail',
			kinds: ['thumbnail'],
			count: 1,
			reason: 'enqueue',
		});
		const response = await stored;
		expect(response.statusCode).toBe(202);
		const [row] =
			await db.sql`select status_code, content, timed_out, error_msg from net._http_response where id = ${response.id}`;
		expect({ ...row }).toEqual({ status_code: 202, content: '{"accepted":true}', timed_out: false, error_msg: null });
		expect((await db.sql`select count(*)::int as n from net.http_request_queue`)[0]!.n).toBe(0);
	});

	it('a rolled-back enqueue never reaches the worker', async () => {
		const seen = worker.requests.length;
		await as(db.sql, user, async (tx) => {
			await tx`select job_enqueue('rolled-back')`;
			await tx`select 1/0`;
		}).catch(() => {});
		const stored = nextResponse();
		await as(db.sql, user, (tx) => tx`select job_enqueue('committed')`);
		await stored;
		expect(worker.requests.slice(seen).map((r) => (r.body as { kind: string }).kind)).toEqual(['committed']);
	});

	it('records a timeout as pg_net does', async () => {
		worker.respondWith('hang');
		await db.sql`update supabase_jobs.settings set kick_timeout_ms = 200`;
		try {
			const stored = nextResponse();
			await as(db.sql, user, (tx) => tx`select job_enqueue('slow')`);
			const response = await stored;
			expect(response.timedOut).toBe(true);
			const [row] =
				await db.sql`select status_code, timed_out, error_msg from net._http_response where id = ${response.id}`;
			expect({ ...row }).toEqual({ status_code: null, timed_out: true, error_msg: 'Timeout of 200 ms reached' });
		} finally {
			await db.sql`update supabase_jobs.settings set kick_timeout_ms = default`;
		}
	});

	it('picks up requests committed while it was not listening (the poll backstop)', async () => {
		await dispatcher.stop();
		const seen = worker.requests.length;
		await as(db.sql, user, (tx) => tx`select job_enqueue('while-down')`);
		dispatcher = await startDispatcher({ url: db.url, pollIntervalMs: 60_000, cronTimer: false });
		const request = await worker.nth(seen);
		expect((request.body as { kind: string }).kind).toBe('while-down');
	});

	it('enqueue-to-request latency through the dispatcher over 200 inserts', async () => {
		const latencies: number[] = [];
		for (let i = 0; i < 200; i++) {
			const seen = worker.requests.length;
			const started = performance.now();
			await as(db.sql, user, (tx) => tx`select job_enqueue('latency')`);
			const request = await worker.nth(seen);
			latencies.push(request.receivedAt - started);
		}
		latencies.sort((a, b) => a - b);
		const p50 = latencies[Math.floor(latencies.length * 0.5)]!;
		const p95 = latencies[Math.floor(latencies.length * 0.95)]!;
		console.log(
			`enqueue -> worker request through the dispatcher: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms (n=200)`,
		);
		// Driven by NOTIFY: far below the 60 s poll of this dispatcher.
		expect(p95).toBeLessThan(1000);
	});
});

describe('the dispatcher runs the cron schedules where pg_cron is absent', () => {
	it('a due minute runs the reclaim schedule, which reclaims a job whose worker missed its declared heartbeat, wakes the worker for it, and records the run', async () => {
		const id = await runningJob(db.sql, user, 'thumbnail', '10 minutes', 'jobs', 60_000);
		await db.sql`delete from cron.job_run_details`;
		const seen = worker.requests.length;
		const runs = await dispatcher.runDueSchedules(new Date('2026-12-01T10:42:00Z'));
		expect(runs.map((r) => [r.jobname, r.status]).sort()).toEqual([
			['supabase-jobs-backstop', 'succeeded'],
			['supabase-jobs-due', 'succeeded'],
			['supabase-jobs-reclaim', 'succeeded'],
		]);
		expect((await db.sql`select status from public.jobs where id = ${id}`)[0]!.status).toBe('queued');
		// The requeue wakes the worker as an enqueue does: for that job, at once.
		let woken = await worker.nth(seen);
		for (let i = seen + 1; (woken.body as { reason?: string }).reason !== 'requeue'; i++) woken = await worker.nth(i);
		expect(woken.body).toMatchObject({ job_id: id, job_table: 'jobs', kind: 'thumbnail', count: 1, reason: 'requeue' });
		const details = await db.sql`
			select j.jobname, d.status, d.return_message, d.end_time >= d.start_time as ended
			from cron.job_run_details d join cron.job j using (jobid) order by j.jobname`;
		expect(details.map((d) => ({ ...d }))).toEqual([
			{ jobname: 'supabase-jobs-backstop', status: 'succeeded', return_message: '1 row', ended: true },
			{ jobname: 'supabase-jobs-due', status: 'succeeded', return_message: '1 row', ended: true },
			{ jobname: 'supabase-jobs-reclaim', status: 'succeeded', return_message: '1 row', ended: true },
		]);
	});

	it('runs the hourly cleanup at minute 17 (03:17 UTC here), not at other minutes', async () => {
		const at317 = await dispatcher.runDueSchedules(new Date('2026-12-01T03:17:00Z'));
		expect(at317.map((r) => r.jobname).sort()).toEqual([
			'supabase-jobs-backstop',
			'supabase-jobs-cleanup',
			'supabase-jobs-due',
			'supabase-jobs-reclaim',
		]);
	});

	it('records a failing command as failed and emits it', async () => {
		await db.sql`select cron.schedule('broken', '* * * * *', 'select 1/0')`;
		try {
			const emitted: CronRun[] = [];
			const record = (run: CronRun) => emitted.push(run);
			dispatcher.on('cron', record);
			const runs = await dispatcher.runDueSchedules(new Date('2026-12-01T10:43:00Z'));
			dispatcher.off('cron', record);
			const broken = runs.find((r) => r.jobname === 'broken');
			expect(broken).toMatchObject({ status: 'failed', returnMessage: 'ERROR:  division by zero' });
			expect(emitted).toContainEqual(broken);
			const [detail] =
				await db.sql`select d.status from cron.job_run_details d join cron.job j using (jobid) where j.jobname = 'broken'`;
			expect(detail!.status).toBe('failed');
		} finally {
			await db.sql`select cron.unschedule('broken')`;
		}
	});

	it('the backstop schedule reaches the worker through the dispatcher', async () => {
		await as(
			db.sql,
			serviceRole,
			(tx) => tx`update public.jobs set available_at = now() - interval '5 minutes' where status = 'queued'`,
		);
		const seen = worker.requests.length;
		await dispatcher.runDueSchedules(new Date('2026-12-01T10:44:00Z'));
		// Moving a queued job's time announces it too ('requeue', at once): the backstop's comes among them.
		let request = await worker.nth(seen);
		for (let i = seen + 1; (request.body as { reason?: string }).reason !== 'backstop'; i++)
			request = await worker.nth(i);
		expect(request.body).toMatchObject({ job_id: null, job_table: 'jobs', reason: 'backstop' });
	});
});

describe("the dispatcher's timer plays pg_cron 1.6", () => {
	it("the reclaim schedule is installed at '5 seconds', as pg_cron 1.5 and later allow", async () => {
		const [job] = await db.sql`select schedule from cron.job where jobname = 'supabase-jobs-reclaim'`;
		expect(job!.schedule).toBe('5 seconds');
	});

	it("runs a '1 seconds' schedule every second, and a minute schedule not at every second", async () => {
		await db.sql`select cron.schedule('every-second', '1 seconds', 'select 1')`;
		const timed = await startDispatcher({ url: db.url, pollIntervalMs: 60_000 });
		const runs: { name: string | null; at: number }[] = [];
		let heard = () => {};
		timed.on('cron', (run: CronRun) => {
			runs.push({ name: run.jobname, at: Date.now() });
			heard();
		});
		try {
			const everySecond = () => runs.filter((r) => r.name === 'every-second');
			while (everySecond().length < 3) await new Promise<void>((resolve) => (heard = resolve));
			const [a, b, c] = everySecond();
			// One run per second boundary (a run takes milliseconds here).
			expect(b!.at - a!.at).toBeGreaterThan(500);
			expect(b!.at - a!.at).toBeLessThan(1500);
			expect(c!.at - b!.at).toBeGreaterThan(500);
			expect(c!.at - b!.at).toBeLessThan(1500);
			const minuteRuns = runs.filter((r) => r.name === 'supabase-jobs-backstop').length;
			expect(minuteRuns).toBeLessThanOrEqual(1);
		} finally {
			await timed.stop();
			await db.sql`select cron.unschedule('every-second')`;
		}
	});

	it('the stand-in refuses a schedule pg_cron would refuse', async () => {
		for (const bad of ['60 seconds', '0 seconds', 'every minute', '* * * *']) {
			const error = await db.sql`select cron.schedule('bad', ${bad}, 'select 1')`.catch((e: unknown) => e);
			expect(error, bad).toMatchObject({ code: '22023', message: `invalid schedule: ${bad}` });
		}
	});
});
