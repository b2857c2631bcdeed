/**
 * graphile-worker: addJob (WorkerUtils) to enqueue, add_jobs for batches,
 * run() with concurrency 8 to process, its LISTEN for latency; by default,
 * or in the fastest configuration its performance page documents (a local
 * queue of 500 and batched completions: `localQueue: { size: 500 }`,
 * `completeJobBatchDelay: 0`, `failJobBatchDelay: 0`).
 */
import { EventEmitter } from 'node:events';
import {
	Logger,
	makeWorkerUtils,
	run,
	runMigrations,
	type Runner,
	type WorkerEvents,
	type WorkerUtils,
} from 'graphile-worker';
import postgres from 'postgres';
import { clockStart, deferred, now, sleep } from './stats.ts';
import type { BenchSystem, LatencyProbe } from './system.ts';

const silent = new Logger(() => () => {});

/** The name of graphile-worker in its fastest documented configuration. */
export const GRAPHILE_FASTEST = 'graphile-worker fastest';

/** Builds the graphile-worker system on its own database at `url` (`fastest`: the batching configuration). */
export function graphileWorker(url: string, version: string, fastest = false): BenchSystem {
	const admin = postgres(url, { max: 1, onnotice: () => {} });
	let utils: WorkerUtils | undefined;
	/** Starts the runner and resolves once it listens (a job added before that would wait for a poll). */
	const start = async (onJob: (payload: { i?: number }) => void): Promise<Runner> => {
		const events: WorkerEvents = new EventEmitter();
		const listening = new Promise<void>((resolve) => events.once('pool:listen:success', () => resolve()));
		const runner = await run({
			events,
			connectionString: url,
			concurrency: 8,
			// 8 job slots + 1 LISTEN connection, as ours.
			maxPoolSize: 9,
			noHandleSignals: true,
			pollInterval: 2000,
			logger: silent,
			...(fastest
				? { preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } }
				: {}),
			taskList: { noop: async (payload) => onJob(payload as { i?: number }) },
		});
		await listening;
		return runner;
	};

	async function addMany(items: { i: number }[]): Promise<void> {
		// graphile_worker.add_jobs: the batch entry point of 0.16 (WorkerUtils has no addJobs yet).
		const specs = items.map((data) => ({ identifier: 'noop', payload: data }));
		await admin`select count(*)::int as n from graphile_worker.add_jobs(
			array(select s from json_populate_recordset(null::graphile_worker.job_spec, ${admin.json(specs)}::json) s))`;
	}

	return {
		name: fastest ? GRAPHILE_FASTEST : 'graphile-worker',
		version,
		notes: [
			...(fastest
				? [
						"configuration: `preset.worker` `localQueue: { size: 500 }`, `completeJobBatchDelay: 0`, `failJobBatchDelay: 0` (its performance page's batching options), otherwise as graphile-worker.",
					]
				: []),
			'enqueue one: `workerUtils.addJob()`; batch: `graphile_worker.add_jobs(job_spec[])` in one statement.',
			'process: `run({ concurrency: 8, maxPoolSize: 9 })` (8 slots + LISTEN), started and connected before ' +
				'the clock; the jobs are added in one transaction and the clock starts as it commits; timed until ' +
				'its job table is empty (graphile-worker deletes completed jobs; checked every 10 ms on one extra connection once every handler has run).',
			'latency: idle `run()` (concurrency 8) woken by its LISTEN on `jobs:insert`, poll backstop 2 s.',
		],
		async setup() {
			await runMigrations({ connectionString: url, logger: silent });
			utils = await makeWorkerUtils({ connectionString: url, maxPoolSize: 1, logger: silent });
		},
		async reset() {
			await admin`truncate graphile_worker._private_jobs cascade`;
		},
		async enqueueOne(n) {
			const started = await clockStart();
			for (let i = 0; i < n; i++) await utils!.addJob('noop', { i });
			return now() - started;
		},
		async enqueueBatch(n, batch) {
			const started = await clockStart();
			for (let from = 0; from < n; from += batch) {
				await addMany(Array.from({ length: Math.min(batch, n - from) }, (_, k) => ({ i: from + k })));
			}
			return now() - started;
		},
		async process(n) {
			// Every handler ran: only then is the table polled (each poll is a query on the server measured).
			const ran = deferred();
			let handled = 0;
			const runner = await start(() => {
				if (++handled === n) ran.resolve();
			});
			// The runner is connected and idle; the jobs appear at once, when this transaction commits.
			let started = 0;
			await admin.begin(async (tx) => {
				for (let from = 0; from < n; from += 1000) {
					const specs = Array.from({ length: Math.min(1000, n - from) }, (_, k) => ({
						identifier: 'noop',
						payload: { i: from + k },
					}));
					await tx`select count(*)::int as n from graphile_worker.add_jobs(
						array(select s from json_populate_recordset(null::graphile_worker.job_spec, ${tx.json(specs)}::json) s))`;
				}
				started = await clockStart();
			});
			// graphile-worker deletes a job row when it completes: done when the table is empty (checked every 10 ms
			// once every handler has run, its batched completions still to commit).
			await ran.promise;
			for (;;) {
				const [{ n: left }] = await admin<
					{ n: number }[]
				>`select count(*)::int as n from graphile_worker._private_jobs`;
				if (left === 0) break;
				await sleep(10);
			}
			const elapsed = now() - started;
			await runner.stop();
			return elapsed;
		},
		async latency(): Promise<LatencyProbe> {
			const waiting = new Map<number, (at: number) => void>();
			const runner = await start((payload) => waiting.get(payload.i ?? -1)?.(now()));
			let token = 0;
			return {
				jitterMs: 20,
				async sample() {
					const i = token++;
					const started = deferred<number>();
					waiting.set(i, started.resolve);
					const t0 = now();
					await utils!.addJob('noop', { i });
					const at = await started.promise;
					waiting.delete(i);
					return at - t0;
				},
				stop: () => runner.stop(),
			};
		},
		async close() {
			await utils?.release();
			await admin.end();
		},
	};
}
