/**
 * supabase-jobs, driven through its public API: JobStore over postgresAdapter
 * (postgres.js), runWorkers from the Node entry point.
 */
import postgres from 'postgres';
import { drainByIds, drainLoops } from './drain-loops.ts';
import { z } from 'zod';
import { JobStore, defineJobKind, postgresAdapter } from '../src/lib/index.ts';
import { defineJobHandler } from '../src/lib/worker.ts';
import { runWorkers } from '../src/lib/node.ts';
import { prepareDatabase } from '../src/local/postgres/migrate.ts';
import { clockStart, deferred, now, percentile } from './stats.ts';
import type { BenchSystem, LatencyProbe } from './system.ts';

const noop = defineJobKind({ name: 'noop', params: z.object({ i: z.number().int().optional() }) });
const quiet = { debug() {}, info() {}, warn() {}, error: (...args: unknown[]) => console.error(...args) };

/**
 * The job table of the "priority and concurrency keys in use" measurement: a
 * table of its own, because a concurrency limit on a kind sends every claim of
 * its table through the limited path (the other measurements stay unlimited).
 */
export const KEYED_TABLE = 'bench_keyed';
/**
 * Keys and priorities of the keyed fill: every priority has all 50 keys, of at
 * most 2 running each, so the limit never holds back 8 workers.
 */
export const KEYS = 50;
// A runner holds up to CONCURRENCY + PREFETCH_MAX claimed jobs (its slots and its local queue), each
// counted as running: limits above that are checked at every claim and never hold it back.
export const KEYED_MAX_RUNNING = 1000;
export const PER_KEY = KEYED_MAX_RUNNING / KEYS;
const PRIORITIES = 5;

/** The supabase-jobs system, with the measurement only it has (see {@link KEYED_TABLE}). */
export interface OursSystem extends BenchSystem {
	/** As `process`, on the keyed table: every job has a priority and a concurrency key its kind limits. */
	processKeyed(n: number, concurrency: number): Promise<number>;
}

/** Builds the supabase-jobs system on its own database at `url`. */
export function ours(url: string, version: string): OursSystem {
	// One pool of 8 for everything timed; runWorkers' LISTEN takes one more connection of its own.
	const sql = postgres(url, { max: 8, onnotice: () => {} });
	const store = new JobStore(postgresAdapter(sql));
	const keyedStore = new JobStore(postgresAdapter(sql), { table: KEYED_TABLE });

	async function fill(n: number): Promise<string[]> {
		return await enqueueMany(Array.from({ length: n }, (_, i) => ({ i })));
	}

	// ---- BATCH ENQUEUE: the one place the bench enqueues many jobs at once (fills and "enqueue batched"). ----
	async function enqueueMany(
		params: { i: number }[],
		keyed = false,
		via: { plain: JobStore; keyed: JobStore } = { plain: store, keyed: keyedStore },
	): Promise<string[]> {
		// One round trip, one INSERT statement (job_enqueue_many), all or nothing; the ids come back.
		return keyed
			? await via.keyed.enqueueMany(
					noop,
					params.map((p) => ({
						params: p,
						priority: p.i % PRIORITIES,
						concurrencyKey: `k${Math.floor(p.i / PRIORITIES) % KEYS}`,
					})),
				)
			: await via.plain.enqueueMany(
					noop,
					params.map((p) => ({ params: p })),
				);
	}
	// ---- end BATCH ENQUEUE ----

	/**
	 * Starts runWorkers, waits until it is connected (`ready`), then enqueues `n` jobs in ONE
	 * transaction (500 a call): they appear together as it commits, and the clock starts there.
	 */
	async function drainWithRunner(n: number, concurrency: number, keyed = false): Promise<number> {
		const on = keyed ? keyedStore : store;
		const finished = deferred();
		let settled = 0;
		const runner = runWorkers({
			sql,
			store: on,
			handlers: [defineJobHandler(noop, () => null)],
			concurrency,
			handleSignals: false,
			logger: quiet,
			onJobSettled: () => {
				if (++settled === n) finished.resolve();
			},
		});
		await runner.ready;
		let started = 0;
		await sql.begin(async (tx) => {
			// The adapter only sends queries: a transaction's client does (its type lacks the pool's extras).
			const inTx = tx as unknown as postgres.Sql;
			const via = {
				plain: new JobStore(postgresAdapter(inTx)),
				keyed: new JobStore(postgresAdapter(inTx), { table: KEYED_TABLE }),
			};
			for (let from = 0; from < n; from += 500)
				await enqueueMany(
					Array.from({ length: Math.min(500, n - from) }, (_, k) => ({ i: from + k })),
					keyed,
					via,
				);
			started = await clockStart();
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
			'enqueue batch: `store.enqueueMany(kind, items)` (job_enqueue_many: one round trip, one INSERT statement, the ids returned).',
			'per-job path: 8 loops of `store.claim(id)` + `store.succeed(id, {attempt})`, as the edge function runs one job per invocation (ids known from the fill).',
			'process: `runWorkers` (concurrency 8, postgres.js pool max 8 + 1 LISTEN connection), started and ' +
				'connected (`runner.ready`) before the clock; the jobs are enqueued in one transaction and the clock ' +
				'starts as it commits; "claimNext loops" = 8 loops of `store.claimNext({limit: 1})` + ' +
				'`store.succeed()` on the same pool of 8.',
			`keys in use: \`runWorkers\` as in "process", on a job table of its own whose \`noop\` kind has ` +
				`\`setConcurrency({ maxRunning: ${KEYED_MAX_RUNNING}, maxRunningPerKey: ${PER_KEY} })\`; each job ` +
				`has a priority (0-${PRIORITIES - 1}) and one of ${KEYS} concurrency keys, so the limits are checked ` +
				`at every claim but never hold a worker back (the runner holds at most 8 running + 500 in its local ` +
				`queue, all counted as running).`,
			'latency: idle `runWorkers` (concurrency 8) woken by LISTEN/NOTIFY (the notify trigger on insert), poll backstop 2 s.',
		],
		async setup() {
			// As a user's project has it: the package's migrations, not the demo app's SQL (its trigger on public.jobs).
			await prepareDatabase(url, { demo: false });
			await sql`select supabase_jobs.create_job_table(${KEYED_TABLE})`;
			await keyedStore.setConcurrency(noop, { maxRunning: KEYED_MAX_RUNNING, maxRunningPerKey: PER_KEY });
		},
		async reset() {
			// realtime.messages too: every claim and close writes a row there, and the peers start each
			// round from empty tables (Supabase keeps that table in daily partitions and drops old ones).
			await sql.unsafe(`truncate public.jobs, public.${KEYED_TABLE}, realtime.messages cascade`);
		},
		async enqueueOne(n) {
			const started = await clockStart();
			for (let i = 0; i < n; i++) await store.enqueue('noop', { params: { i } });
			return now() - started;
		},
		async enqueueBatch(n, batch) {
			const started = await clockStart();
			for (let from = 0; from < n; from += batch) {
				const size = Math.min(batch, n - from);
				await enqueueMany(Array.from({ length: size }, (_, k) => ({ i: from + k })));
			}
			return now() - started;
		},
		async process(n, concurrency) {
			return await drainWithRunner(n, concurrency);
		},
		async processKeyed(n, concurrency) {
			return await drainWithRunner(n, concurrency, true);
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
			return await drainByIds(
				'claim by id',
				await fill(n),
				concurrency,
				(id) => store.claim(id),
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

/** p50 and p95 of `rounds` x `count` sequential tick round trips (see {@link tickTimes}), a fresh connection a round, pooled. */
export async function tickCost(url: string, count: number, rounds = 1): Promise<{ p50: number; p95: number }> {
	const times: number[] = [];
	for (let r = 0; r < rounds; r++) times.push(...(await tickTimes(url, count)));
	return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

/** `count` sequential job_tick round trips on one running job (store.tick, as the tracker calls it), in ms. */
export async function tickTimes(url: string, count: number): Promise<number[]> {
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
		return times;
	} finally {
		await sql.end();
	}
}
