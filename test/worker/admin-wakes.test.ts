/**
 * What the admin actions tell a Node runner that never polls: resuming a
 * paused kind wakes it (NOTIFY, reason resume), and a full rate window tells
 * it when the next start is allowed (NOTIFY, reason rate, available_at), so
 * held jobs start then instead of at the next poll.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { defineJobHandler } from '../../src/lib/worker/job-handler.ts';
import { runWorkers } from '../../src/lib/worker/node-runner.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { counting } from '../store/harness.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';

let db: TestDatabase;

beforeAll(async () => {
	db = await useTestDatabase();
});

const kindNamed = (name: string) =>
	defineJobKind({ name, params: z.object({}), plan: PhasePlan.fromSeconds({ work: 0.001 }) });

describe('a Node runner that never polls', () => {
	it('is woken by a resume: the job of a paused kind it passed over starts once the kind resumes', async () => {
		const kind = kindNamed('admin.paused');
		const counted = counting(postgresAdapter(db.sql));
		const store = new JobStore(counted.adapter);
		await store.pauseKind(kind);
		let settled!: (id: string) => void;
		const ran = new Promise<string>((r) => (settled = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [defineJobHandler(kind, () => {})],
			concurrency: 1,
			pollMs: 600_000,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (job) => settled(job.id),
		});
		await runner.ready;
		const before = counted.count('job_claim_next');
		const job = await store.enqueue(kind, { params: {} });
		// The enqueue's NOTIFY woke it, and its claim answered: nothing, the kind is paused.
		await counted.signal.until(
			() => counted.count('job_claim_next') > before && counted.settled() === counted.calls.length,
		);
		expect((await store.get(job.id)).status).toBe('queued');
		expect(runner.stats.claimed).toBe(0);
		await store.resumeKind(kind);
		expect(await ran).toBe(job.id);
		await runner.stop();
	});

	it('is told when a full rate window frees a start: 2 jobs at 1 a second both run, a second apart, with no poll', async () => {
		const kind = kindNamed('admin.rated');
		const store = new JobStore(postgresAdapter(db.sql));
		await store.setRateLimit(kind, { starts: 1, perMs: 1000 });
		const done: string[] = [];
		let settled!: () => void;
		const both = new Promise<void>((r) => (settled = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [defineJobHandler(kind, () => {})],
			concurrency: 2,
			pollMs: 600_000,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (job) => {
				done.push(job.id);
				if (done.length === 2) settled();
			},
		});
		await runner.ready;
		await store.enqueueMany(kind, [{ params: {} }, { params: {} }]);
		await both;
		await runner.stop();
		const started = (
			await db.sql<{ t: Date }[]>`select started_at as t from jobs where kind = 'admin.rated' order by started_at`
		).map((r) => r.t.getTime());
		expect(started).toHaveLength(2);
		expect(started[1]! - started[0]!).toBeGreaterThan(1000 - 150);
	});
});
