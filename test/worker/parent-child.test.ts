/**
 * A handler that enqueues children and waits for them, run by the Node runner
 * with ONE slot: the parent must give its slot up while it waits (else its
 * children could never run), is resumed when the last one ends, and reads
 * their outcomes on the rerun.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
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

const page = defineJobKind({
	name: 'test.page',
	params: z.object({ page: z.number().int() }),
	plan: PhasePlan.fromSeconds({ render: 2 }),
});
const book = defineJobKind({ name: 'test.book', params: z.object({ pages: z.number().int() }) });

describe('parent and child jobs in a worker', () => {
	it('with one slot, a parent waits for its children without holding it, and on resume reads their outcomes', async () => {
		const runs: string[] = [];
		let seen: Job[] = [];
		const assembled = randomUUID();
		const settled: [string, JobOutcome][] = [];
		let finished!: () => void;
		const allDone = new Promise<void>((r) => (finished = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [
				defineJobHandler(page, ({ params }) => {
					runs.push(`page ${params.page}`);
					if (params.page === 2) throw Object.assign(new Error('unexpected'), { retry: false });
				}),
				defineJobHandler(book, async ({ params, children, enqueueChild, waitForChildren }) => {
					runs.push('book');
					if ((await children()).length === 0)
						for (let p = 1; p <= params.pages; p++) await enqueueChild(page, { params: { page: p }, maxAttempts: 1 });
					seen = await waitForChildren();
					return assembled;
				}),
			],
			concurrency: 1,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (job, outcome) => {
				settled.push([job.kind, outcome]);
				if (job.kind === 'test.book' && outcome === 'done') finished();
			},
		});
		const parent = await store.enqueue(book, { params: { pages: 3 } });
		await allDone;
		await runner.stop();

		// The first run parked (its slot went to the pages), the rerun finished.
		expect(settled.filter(([k]) => k === 'test.book').map(([, o]) => o)).toEqual(['waiting', 'done']);
		expect(runs.filter((r) => r === 'book')).toHaveLength(2);
		expect(runs.filter((r) => r.startsWith('page')).sort()).toEqual(['page 1', 'page 2', 'page 3']);
		expect(seen.map((c) => [c.params.page, c.status])).toEqual([
			[1, 'done'],
			[2, 'failed'],
			[3, 'done'],
		]);
		// Each child weighs what its kind's plan predicts.
		expect(seen.every((c) => c.expectedSeconds === 2)).toBe(true);
		const row = await store.get(parent.id);
		expect(row).toMatchObject({ status: 'done', resultId: assembled, attempts: 1, progress: 100 });
	});
});
