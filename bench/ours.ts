/**
 * supabase-jobs, driven through its public API: JobStore over postgresAdapter
 * (postgres.js), runWorkers from the Node entry point.
 */
import postgres from 'postgres';
import { drainLoops } from './drain-loops.ts';
import { z } from 'zod';
import { JobStore, defineJobHandler, defineJobKind, postgresAdapter } from '../src/lib/index.ts';
import { runWorkers } from '../src/lib/node.ts';
import { prepareDatabase } from '../src/local/postgres/migrate.ts';
import { deferred, now, percentile } from './stats.ts';
import type { BenchSystem, LatencyProbe } from './system.ts';

const noop = defineJobKind({ name: 'noop', params: z.object({ i: z.number().int().optional() }) });
const quiet = { debug() {}, info() {}, warn() {}, error: (...args: unknown[]) => console.error(...args) };

/** Builds the supabase-jobs system on its own database at `url`. */
export function ours(url: string, version: string): BenchSystem {
	// One pool of 8 for everything timed; runWorkers' LISTEN takes one more connection of its own.
	const sql = postgres(url, { max: 8, onnotice: () => {} });
	const store = new JobStore(postgresAdapter(sql));

	async function fill(n: number): Promise<string[]> {
		return await enqueueMany(Array.from({ length: n }, (_, i) => ({ i })));
	}

	// ---- BATCH ENQUEUE: the one place the bench enqueues many jobs at once (fills and "enqueue batched"). ----
	async function enqueueMany(params: { i: number }[]): Promise<string[]> {
		// One round trip, one INSERT statement (job_enqueue_many), all or nothing.
		const jobs = await store.enqueueMany(
			noop,
			params.map((p) => ({ params: p })),
		);
		return jobs.map((j) => j.id);
	}
	// ---- end BATCH ENQUEUE ----

	async function drainWithRunner(n: number, concurrency: number): Promise<number> {
		const finished = deferred();
		let settled = 0;
		const started = now();
		const runner = runWorkers({
			sql,
			store,
			handlers: [defineJobHandler(noop, () => null)],
			concurrency,
			handleSignals: false,
			logger: quiet,
			onJobSettled: () => {
				if (++settled === n) finished.resolve();
			},
		});
		await finished.promise;
		const elapsed = now() - started;
		await runner.stop({ graceMs: 1000 });
		return elapsed;
	}

	return {
		name: 'supabase-jobs',
		version,
		notes: [
			'enqueue one: `store.enqueue()` (job_enqueue through postgresAdapter, row parsed with zod).',
			'enqueue batch: `store.enqueueMany(kind, items)` (job_enqueue_many: one round trip, one INSERT statement, rows parsed with zod).',
			'per-job path: 8 loops of `store.claim(id)` + `store.succeed(id, {attempt})`, as the edge function runs one job per invocation (ids known from the fill).',
			'process: `runWorkers` (concurrency 8, postgres.js pool max 8 + 1 LISTEN connection); "claimNext loops" = 8 loops of `store.claimNext({limit: 1})` + `store.succeed()` on the same pool of 8.',
			'latency: idle `runWorkers` (concurrency 8) woken by LISTEN/NOTIFY (the notify trigger on insert), poll backstop 2 s.',
		],
		async setup() {
			await prepareDatabase(url);
		},
		async reset() {
			await sql`truncate public.jobs cascade`;
		},
		async enqueueOne(n) {
			const started = now();
			for (let i = 0; i < n; i++) await store.enqueue('noop', { params: { i } });
			return now() - started;
		},
		async enqueueBatch(n, batch) {
			const started = now();
			for (let from = 0; from < n; from += batch) {
				const size = Math.min(batch, n - from);
				await enqueueMany(Array.from({ length: size }, (_, k) => ({ i: from + k })));
			}
			return now() - started;
		},
		async process(n, concurrency) {
			await fill(n);
			return await drainWithRunner(n, concurrency);
		},
		async processAlt(n, concurrency) {
			await fill(n);
			return await drainLoops(
				'claimNext loops',
				n,
				concurrency,
				async () => (await store.claimNext({ kinds: ['noop'], limit: 1 }))[0],
				(job) => store.succeed(job.id, { attempt: job.attempts }),
			);
		},
		async processById(n, concurrency) {
			const ids = await fill(n);
			let next = 0;
			return await drainLoops(
				'claim by id',
				n,
				concurrency,
				async () => {
					const id = ids[next++]!;
					const job = await store.claim(id);
					if (!job) throw new Error(`claim by id: job ${id} was not claimable`);
					return job;
				},
				(job) => store.succeed(job.id, { attempt: job.attempts }),
			);
		},
		async latency(): Promise<LatencyProbe> {
			const waiting = new Map<number, (at: number) => void>();
			const runner = runWorkers({
				sql,
				store,
				handlers: [defineJobHandler(noop, ({ params }) => void waiting.get(params.i ?? -1)?.(now()))],
				concurrency: 8,
				handleSignals: false,
				logger: quiet,
			});
			let token = 0;
			return {
				jitterMs: 20,
				async sample() {
					const i = token++;
					const started = deferred<number>();
					waiting.set(i, started.resolve);
					const t0 = now();
					await store.enqueue('noop', { params: { i } });
					const at = await started.promise;
					waiting.delete(i);
					return at - t0;
				},
				stop: () => runner.stop({ graceMs: 1000 }),
			};
		},
		async close() {
			await sql.end();
		},
	};
}

/** p50 of `count` sequential job_tick round trips on one running job (store.tick, as the tracker calls it). */
export async function tickCost(url: string, count: number): Promise<{ p50: number; p95: number }> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		const store = new JobStore(postgresAdapter(sql));
		await store.enqueue('tick-probe');
		const [job] = await store.claimNext({ kinds: ['tick-probe'], limit: 1 });
		if (!job) throw new Error('tick probe: nothing claimed');
		const times: number[] = [];
		for (let i = 0; i < count; i++) {
			const t0 = now();
			await store.tick(job.id, { progress: (i % 100) + 0.5, stage: `step ${i % 7}`, attempt: job.attempts });
			times.push(now() - t0);
		}
		await store.succeed(job.id, { attempt: job.attempts });
		return { p50: percentile(times, 50), p95: percentile(times, 95) };
	} finally {
		await sql.end();
	}
}
