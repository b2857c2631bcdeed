/**
 * Workers that die holding a job: kill -9 mid-job, and a job that kills every
 * worker that claims it. reclaim_stale readmits the first (a second worker
 * finishes it) and closes the second as failed once max_attempts is spent,
 * with a sentence for the user, never a stack trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startDenoWorker, TEST_ENTRY, type DenoWorker } from './helpers/deno-worker.ts';
import { follow } from './helpers/watch.ts';

let db: TestDatabase;
let store: JobStore;
const started: DenoWorker[] = [];

beforeAll(async () => {
	db = await useTestDatabase();
	// A short staleAfterMs: a worker silent for a second is dead (its heartbeat is moved back below).
	store = new JobStore(postgresAdapter(db.sql), { staleAfterMs: 1000 });
});

afterAll(async () => {
	await Promise.all(started.map((w) => w.stop()));
});

async function worker(entry?: string): Promise<DenoWorker> {
	const w = await startDenoWorker(db.url, { entry });
	started.push(w);
	return w;
}

/** The dead worker's last heartbeat, moved an hour back: silent for longer than staleAfterMs, without waiting for it. */
async function silence(id: string): Promise<void> {
	await db.sql`update jobs set started_at = started_at - interval '1 hour', heartbeat_at = heartbeat_at - interval '1 hour' where id = ${id} and status = 'running'`;
}

describe('a worker that dies holding the job', () => {
	it('kill -9 mid-job: reclaim_stale requeues it, a second worker finishes it, attempts is 2', async () => {
		const first = await worker();
		const job = await store.enqueue('demo.sleep-steps', { params: { steps: 10, stepMs: 60 } });
		const row = follow(store, job.id);
		expect((await first.post({ job_id: job.id })).status).toBe(202);
		await row.until((j) => j.status === 'running' && j.progress > 0);

		first.process.kill('SIGKILL');
		expect((await first.exited).signal).toBe('SIGKILL');
		// Nobody will close it: the row says running, the process is gone.
		expect(await store.get(job.id)).toMatchObject({ status: 'running', attempts: 1 });
		expect(await store.reclaimStale()).toEqual([]); // its last heartbeat is recent: not stale yet

		await silence(job.id);
		const reclaimed = await store.reclaimStale();
		expect(reclaimed.map((j) => [j.id, j.status, j.attempts])).toEqual([[job.id, 'queued', 1]]);

		const second = await worker();
		expect((await second.post({ job_id: job.id })).status).toBe(202);
		const final = await row.finished;
		expect(final).toMatchObject({ status: 'done', attempts: 2, progress: 100, error: null });
		const statuses = row.frames.map((f) => f.status).filter((s, i, all) => s !== all[i - 1]);
		expect(statuses).toEqual(['queued', 'running', 'queued', 'running', 'done']);
	});

	it('a job that kills every worker ends failed after max_attempts with a readable error', async () => {
		const job = await store.enqueue('test.exit', { maxAttempts: 2, locale: 'pt-BR' });
		for (const attempt of [1, 2]) {
			const w = await worker(TEST_ENTRY);
			expect((await w.post({ job_id: job.id })).status).toBe(202);
			expect((await w.exited).code).toBe(70);
			expect(await store.get(job.id)).toMatchObject({ status: 'running', attempts: attempt });
			await silence(job.id);
			const [reclaimed] = await store.reclaimStale();
			expect(reclaimed).toMatchObject({ id: job.id, status: attempt < 2 ? 'queued' : 'failed', attempts: attempt });
		}
		const final = await store.get(job.id);
		expect(final).toMatchObject({ status: 'failed', attempts: 2, errorCode: 'worker_lost' });
		expect(final.error).toBe(
			'O processamento parou inesperadamente 2 vez(es) e não foi concluído. Tente novamente mais tarde.',
		);
		expect(final.error).not.toMatch(/\bat |Error|\.ts:|\n/);
		// Spent: no worker can claim it again.
		const w = await worker(TEST_ENTRY);
		expect((await w.post({ job_id: job.id })).status).toBe(202);
		expect(await store.claim(job.id)).toBeNull();
	});
});
