/**
 * A job queued for later (run_at, delay) or retried after a backoff starts
 * within seconds of its time, on the deployed shape: the due schedule
 * ('5 seconds', as pg_cron 1.5 and later run it; here the dispatcher plays
 * pg_cron and pg_net) wakes the worker through pg_net, and the worker (a
 * recording HTTP server that claims on each wake-up) starts the job. The lag
 * measured is the job's started_at minus its available_at, both on the
 * database's clock; before this the minute backstop (30 s claimable, every
 * minute) was the only wake-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { startDispatcher, type Dispatcher } from '../../src/local/dispatcher.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startHttpRecorder, type HttpRecorder } from './http-recorder.ts';
import { setWorkerSecrets } from './worker-secrets.ts';

/** The due schedule runs every 5 seconds; a wake-up and a claim take well under a second here. */
const LAG_BOUND_MS = 6500;

let db: TestDatabase;
let store: JobStore;
let worker: HttpRecorder;
let dispatcher: Dispatcher;

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
	worker = await startHttpRecorder();
	await setWorkerSecrets(db.sql, worker.url);
	dispatcher = await startDispatcher({ url: db.url, pollIntervalMs: 60_000 });
});

afterAll(async () => {
	await dispatcher?.stop();
	await worker?.close();
});

/** Waits for the worker's next wake-up for `kind` with reason 'due', then claims as a worker would. */
async function startOnDueWakeup(kind: string): Promise<Job> {
	for (let i = worker.requests.length; ; i++) {
		const request = await worker.nth(i, 20_000);
		const body = request.body as { reason?: string; kind?: string };
		if (body.reason !== 'due' || body.kind !== kind) continue;
		const [job] = await store.claimNext({ kinds: [kind] });
		if (job) return job;
	}
}

const lagMs = (job: Job) => job.startedAt!.getTime() - job.availableAt.getTime();

describe('a job queued for later starts within seconds of its time', () => {
	it('an enqueue with a delay is woken by the due schedule, not the minute backstop', async () => {
		const kind = `due.enqueue.${Date.now()}`;
		const queued = await store.enqueue(kind, { delayMs: 1500 });
		expect(await store.claimNext({ kinds: [kind] })).toEqual([]); // not before its time
		const started = await startOnDueWakeup(kind);
		expect(started.id).toBe(queued.id);
		const lag = lagMs(started);
		console.log(`delayed enqueue: started ${lag} ms after its available_at (bound ${LAG_BOUND_MS} ms)`);
		expect(lag).toBeGreaterThanOrEqual(0);
		expect(lag).toBeLessThan(LAG_BOUND_MS);
	});

	it('a retry with a backoff is woken at the end of its backoff', async () => {
		const kind = `due.retry.${Date.now()}`;
		const queued = await store.enqueue(kind);
		const [first] = await store.claimNext({ kinds: [kind] });
		expect(first!.id).toBe(queued.id);
		const requeued =
			await db.sql`select available_at from job_retry(${first!.id}::uuid, 'flaky', delay => '2 seconds')`;
		expect(requeued).toHaveLength(1);
		const started = await startOnDueWakeup(kind);
		expect(started).toMatchObject({ id: queued.id, attempts: 2 });
		const lag = lagMs(started);
		console.log(`retry after a 2 s backoff: started ${lag} ms after its available_at (bound ${LAG_BOUND_MS} ms)`);
		expect(lag).toBeGreaterThanOrEqual(0);
		expect(lag).toBeLessThan(LAG_BOUND_MS);
	});
});
