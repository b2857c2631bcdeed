/**
 * Streamed output and metadata from a handler, in both workers: the Node
 * runner (in process) and the edge function under the real Deno. A watcher
 * reads the output in order; a cancel stops the producer, and no chunk is
 * stored after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore, type JobStreamChunk } from '../../src/lib/store/job-store.ts';
import type { JobOutcome } from '../../src/lib/worker/job-runner.ts';
import { runWorkers, type WorkerRunner } from '../../src/lib/worker/node-runner.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { expectedText, produced, streamHandler, streamKind } from './fixtures/stream-kind.ts';
import { startDenoWorker, TEST_ENTRY, type DenoWorker } from './helpers/deno-worker.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';

let db: TestDatabase;
let store: JobStore;
let runner: WorkerRunner;
const settled = new Map<string, (outcome: JobOutcome) => void>();
const outcomeOf = (id: string) => new Promise<JobOutcome>((resolve) => settled.set(id, resolve));

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
	runner = runWorkers({
		sql: db.connect({ max: 3 }),
		store: new JobStore(postgresAdapter(db.connect({ max: 3 }))),
		handlers: [streamHandler],
		concurrency: 2,
		tickIntervalMs: 50,
		handleSignals: false,
		logger: new RecordingLogger(),
		onJobSettled: (job, outcome) => settled.get(job.id)?.(outcome),
	});
});

afterAll(async () => {
	await runner?.stop();
});

/** Everything a watcher of the job receives until the stream ends. */
async function watchAll(id: string): Promise<JobStreamChunk[]> {
	const seen: JobStreamChunk[] = [];
	for await (const batch of store.watchStreams(id, { intervalMs: 20 })) seen.push(...batch);
	return seen;
}

describe('a handler streams its output (the Node runner)', () => {
	it('a piped token stream reaches the watcher whole and in order, coalesced into a few appends; its metadata is on the row', async () => {
		const job = await store.enqueue(streamKind, { params: { words: 60, ms: 10 } });
		const outcome = outcomeOf(job.id);
		const seen = watchAll(job.id);
		expect(await outcome).toBe('done');
		const chunks = await seen;
		expect(chunks.map((c) => c.text).join('')).toBe(expectedText(60));
		expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
		// 60 words over ~600 ms, flushed at most every 250 ms (the first at once): a handful of appends, not 60.
		expect(chunks.length).toBeGreaterThanOrEqual(2);
		expect(chunks.length).toBeLessThanOrEqual(8);
		expect((await store.get(job.id)).metadata).toEqual({ words: 60, written: 60 });
	});

	it('a cancel stops the producer, and no chunk is stored after the cancel', async () => {
		const job = await store.enqueue(streamKind, { params: { words: 5000, ms: 10 } });
		const outcome = outcomeOf(job.id);
		// Wait for output to exist, then cancel.
		for await (const batch of store.watchStreams(job.id, { intervalMs: 20 })) if (batch.length > 0) break;
		await store.cancel(job.id);
		expect(await outcome).toBe('cancelled');
		const stopped = produced.get(job.id)!;
		expect(stopped).toBeLessThan(5000);
		const [row] = await db.sql<{ late: number; total: number }[]>`
			select count(*) filter (where s.created_at >= j.finished_at)::int as late, count(*)::int as total
			  from supabase_jobs.job_stream s join supabase_jobs.job j on j.id = s.job_id where s.job_id = ${job.id}`;
		expect(row).toEqual({ late: 0, total: expect.any(Number) });
		expect(row!.total).toBeGreaterThan(0);
		const text = (await store.readStreams(job.id)).chunks.map((c) => c.text).join('');
		expect(expectedText(stopped).startsWith(text)).toBe(true);
	});
});

describe('a handler streams its output (the edge function under Deno)', () => {
	let deno: DenoWorker;
	beforeAll(async () => {
		deno = await startDenoWorker(db.url, { entry: TEST_ENTRY });
	});
	afterAll(async () => {
		await deno?.stop();
	});

	it('the same handler under Deno: the watcher reads the whole output in order, and the metadata', async () => {
		const job = await store.enqueue(streamKind, { params: { words: 30, ms: 10 } });
		const seen = watchAll(job.id);
		const res = await deno.post({
			job_id: job.id,
			job_table: 'jobs',
			kind: streamKind.name,
			count: 1,
			reason: 'enqueue',
		});
		expect(res.status).toBe(202);
		const chunks = await seen;
		expect(chunks.map((c) => c.text).join('')).toBe(expectedText(30));
		const done = await store.get(job.id);
		expect(done.status).toBe('done');
		expect(done.metadata).toEqual({ words: 30, written: 30 });
	});
});
