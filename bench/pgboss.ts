/**
 * pg-boss 12: send/insert to enqueue, fetch + complete loops to process,
 * work() at its minimum polling interval for latency (pg-boss does not LISTEN).
 */
import { PgBoss } from 'pg-boss';
import { drainLoops } from './drain-loops.ts';
import postgres from 'postgres';
import { clockStart, deferred, now, sleep } from './stats.ts';
import type { BenchSystem, LatencyProbe } from './system.ts';

const QUEUE = 'noop';

/** The name of pg-boss in its fastest configuration: batched fetch and complete. */
export const PGBOSS_FASTEST = 'pg-boss fastest';
/** Jobs one fetch takes in the fastest configuration (and one complete closes). */
const FETCH_BATCH = 100;

/** Builds the pg-boss system on its own database at `url` (`fastest`: batched fetch, {@link FETCH_BATCH} a call). */
export function pgBoss(url: string, version: string, fastest = false): BenchSystem {
	// Maintenance and cron supervision off: they would compete for the 2 cores mid-measurement.
	const boss = new PgBoss({ connectionString: url, max: 8, supervise: false, schedule: false });
	boss.on('error', (e) => console.error('pg-boss:', e));
	const admin = postgres(url, { max: 1, onnotice: () => {} });

	async function fill(n: number): Promise<void> {
		// One insert for all n: filling in several inserts left rounds with jobs that fetch never returned.
		await boss.insert(
			QUEUE,
			Array.from({ length: n }, (_, i) => ({ data: { i } })),
		);
	}

	return {
		name: fastest ? PGBOSS_FASTEST : 'pg-boss',
		version,
		notes: [
			...(fastest
				? [
						`configuration: batched fetch: 8 loops of \`boss.fetch(queue, {batchSize: ${FETCH_BATCH}})\` + one ` +
							`\`boss.complete(queue, ids)\` per batch; latency: \`work()\` with \`batchSize: ${FETCH_BATCH}\`. ` +
							`Otherwise as pg-boss.`,
					]
				: []),
			'enqueue one: `boss.send()`; batch: `boss.insert([...])` (one statement per batch).',
			...(fastest
				? []
				: [
						'process: 8 loops of `boss.fetch(queue, {batchSize: 1})` + `boss.complete()` on its pg pool (max 8). ' +
							'`work()` is not used here: its loop waits out the polling interval (>= 0.5 s) after each fetch.',
					]),
			'latency: `boss.work()` with `pollingIntervalSeconds: 0.5` (the minimum pg-boss accepts; it has no ' +
				'LISTEN), 60 samples, a random 0-500 ms pause before each enqueue so samples spread over the poll period.',
			'supervise and schedule off (no maintenance during measurements).',
		],
		async setup() {
			await boss.start();
			await boss.createQueue(QUEUE);
		},
		async reset() {
			// pg-boss 12 keeps finished jobs in pgboss.job (no archive table any more).
			await admin`truncate pgboss.job`;
		},
		async enqueueOne(n) {
			const started = await clockStart();
			for (let i = 0; i < n; i++) await boss.send(QUEUE, { i });
			return now() - started;
		},
		async enqueueBatch(n, batch) {
			const started = await clockStart();
			for (let from = 0; from < n; from += batch) {
				await boss.insert(
					QUEUE,
					Array.from({ length: Math.min(batch, n - from) }, (_, k) => ({ data: { i: from + k } })),
				);
			}
			return now() - started;
		},
		async process(n, concurrency) {
			await fill(n);
			if (fastest) {
				const started = await clockStart();
				let done = 0;
				await Promise.all(
					Array.from({ length: concurrency }, async () => {
						while (done < n) {
							const jobs = await boss.fetch<{ i: number }>(QUEUE, { batchSize: FETCH_BATCH });
							if (jobs.length === 0) {
								if (now() - started > 60_000) throw new Error(`pg-boss fastest: ${done} of ${n} after 60 s`);
								await sleep(1);
								continue;
							}
							await boss.complete(
								QUEUE,
								jobs.map((j) => j.id),
							);
							done += jobs.length;
						}
					}),
				);
				return now() - started;
			}
			return await drainLoops(
				'pg-boss',
				n,
				concurrency,
				async () => (await boss.fetch<{ i: number }>(QUEUE, { batchSize: 1 }))[0],
				(job) => boss.complete(QUEUE, job.id),
			);
		},
		async latency(): Promise<LatencyProbe> {
			const waiting = new Map<number, (at: number) => void>();
			const workers: string[] = [];
			// 8 workers, as the others run 8 slots; each polls every 0.5 s.
			for (let w = 0; w < 8; w++) {
				workers.push(
					await boss.work<{ i: number }>(
						QUEUE,
						{ pollingIntervalSeconds: 0.5, batchSize: fastest ? FETCH_BATCH : 1 },
						async (jobs) => {
							for (const job of jobs) waiting.get(job.data.i)?.(now());
						},
					),
				);
			}
			let token = 0;
			return {
				jitterMs: 500,
				async sample() {
					const i = token++;
					const started = deferred<number>();
					waiting.set(i, started.resolve);
					const t0 = now();
					await boss.send(QUEUE, { i });
					const at = await started.promise;
					waiting.delete(i);
					return at - t0;
				},
				async stop() {
					await boss.offWork(QUEUE);
				},
			};
		},
		async close() {
			await boss.stop({ graceful: true, timeout: 2000 });
			await admin.end();
		},
	};
}
