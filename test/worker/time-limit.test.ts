/**
 * A kind's time limit (`defineJobHandler(kind, run, { timeoutMs })`): a run
 * that hangs past it is aborted through its signal and the job fails with a
 * sentence for the user, so it never holds a worker slot forever.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { defineJobHandler } from '../../src/lib/worker/job-handler.ts';
import type { JobOutcome } from '../../src/lib/worker/job-runner.ts';
import { runWorkers } from '../../src/lib/worker/node-runner.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';

let db: TestDatabase;
let store: JobStore;
beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
});

const hangs = defineJobKind({ name: 'test.hangs', params: z.object({}) });

describe('a time limit per kind', () => {
	it('the Node runner aborts a run past its kind timeoutMs and fails the job with a sentence (timed_out)', async () => {
		let aborted: unknown = null;
		const handler = defineJobHandler(
			hangs,
			({ signal }) =>
				new Promise<never>((_, reject) =>
					signal.addEventListener('abort', () => {
						aborted = signal.reason;
						reject(signal.reason);
					}),
				),
			{ timeoutMs: 300 },
		);
		let settled!: (v: [Job, JobOutcome]) => void;
		const outcome = new Promise<[Job, JobOutcome]>((r) => (settled = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [handler],
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (job, o) => settled([job, o]),
		});
		try {
			const job = await store.enqueue('test.hangs', { locale: 'pt-BR' });
			const [settledJob, how] = await outcome;
			expect([settledJob.id, how]).toEqual([job.id, 'failed']);
			expect(aborted).not.toBeNull();
			expect(await store.get(job.id)).toMatchObject({
				status: 'failed',
				errorCode: 'timed_out',
				error: expect.stringMatching(/demorou mais do que o permitido/),
			});
		} finally {
			await runner.stop({ graceMs: 1000 });
		}
	});

	it('refuses a time limit that is not a positive number of milliseconds', () => {
		for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])
			expect(() => defineJobHandler(hangs, () => null, { timeoutMs: bad })).toThrow(RangeError);
	});
});
