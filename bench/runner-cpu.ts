/**
 * The Node runner's own CPU per job, without a database (not part of `npm run
 * bench`): runWorkers (concurrency 8, batched closes) over a stand-in store
 * whose claims hand out ready-made rows and whose closes answer at once, so
 * what is measured is the runner alone (claim loop, run, context, close).
 * BENCH_JOBS jobs (default 200,000), BENCH_ROUNDS rounds (default 3).
 */
import { z } from 'zod';
import { defineJobKind } from '../src/lib/store/job-kind.ts';
import { defineJobHandler } from '../src/lib/worker/job-handler.ts';
import { runWorkers } from '../src/lib/worker/node-runner.ts';
import type { Job } from '../src/lib/store/job.ts';
import type { JobStore } from '../src/lib/store/job-store.ts';
import type postgres from 'postgres';

const n = Number(process.env.BENCH_JOBS ?? 200_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const noop = defineJobKind({ name: 'noop', params: z.object({ i: z.number().int().optional() }) });
const quiet = { info() {}, warn() {}, error() {} };
const sql = { listen: () => Promise.resolve({ unlisten: () => Promise.resolve() }) } as unknown as postgres.Sql;

function row(i: number): Job {
	const at = new Date();
	return {
		id: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
		isActive: true,
		createdAt: at,
		updatedAt: at,
		kind: 'noop',
		status: 'running',
		params: { i },
		payload: null,
		resultId: null,
		error: null,
		errorCode: null,
		attempts: 1,
		maxAttempts: 3,
		startedAt: at,
		finishedAt: null,
		progress: 0,
		stage: null,
		heartbeatAt: null,
		heartbeatMs: 5000,
		workerSilent: false,
		ownerId: null,
		locale: null,
		availableAt: at,
		timings: null,
		tags: [],
		idempotencyKey: null,
		priority: 0,
		expiresAt: null,
		concurrencyKey: null,
		parentId: null,
		expectedSeconds: null,
		resumedAt: null,
		expectedEndAt: null,
		retryOf: null,
		metadata: null,
		failedForGood: false,
	};
}

async function drain(): Promise<{ ms: number; cpu: number }> {
	let next = 0;
	let settled = 0;
	let finish!: () => void;
	const finished = new Promise<void>((resolve) => (finish = resolve));
	// Answers come back on a later turn, as a socket's would.
	const later = <T>(value: T) => new Promise<T>((resolve) => setImmediate(() => resolve(value)));
	const store = {
		table: 'jobs',
		claimNext: ({ limit }: { limit: number }) => {
			const jobs: Job[] = [];
			while (jobs.length < limit && next < n) jobs.push(row(next++));
			return later(jobs);
		},
		succeedManyIds: (items: { id: string }[]) => later(new Set(items.map((i) => i.id))),
		succeed: (id: string) => later({ id }),
		release: () => later(null),
		phaseHistory: () => later([]),
	} as unknown as JobStore;
	const cpu = process.cpuUsage();
	const started = performance.now();
	const runner = runWorkers({
		sql,
		store,
		handlers: [defineJobHandler(noop, () => null)],
		concurrency: 8,
		handleSignals: false,
		logger: quiet,
		planTtlMs: 1e9,
		onJobSettled: () => {
			if (++settled === n) finish();
		},
	});
	await finished;
	const ms = performance.now() - started;
	const used = process.cpuUsage(cpu);
	await runner.stop({ graceMs: 100 });
	return { ms, cpu: used.user + used.system };
}

for (let r = 0; r < rounds; r++) {
	const { ms, cpu } = await drain();
	console.log(`runner alone ${n}: ${Math.round((n / ms) * 1000)} jobs/s, Node CPU ${(cpu / n).toFixed(1)} us/job`);
}
