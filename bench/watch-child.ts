/**
 * Child process for the memory measurement: watches N queued jobs with
 * store.watch (polling transport) and reports its RSS and heap growth as JSON
 * on stdout. A process of its own, so nothing else the bench did is counted.
 * Run with --expose-gc (run.ts does).
 */
import { setMaxListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import { JobStore, postgresAdapter, type JobAdapter } from '../src/lib/index.ts';
import { sleep } from './stats.ts';

const url = process.env.BENCH_URL!;
const ids = JSON.parse(await readFile(process.env.BENCH_IDS_FILE!, 'utf8')) as string[];
const intervalMs = Number(process.env.BENCH_WATCH_INTERVAL_MS ?? 2000);
const holdMs = Number(process.env.BENCH_WATCH_HOLD_MS ?? 6500);

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const sql = postgres(url, { max: 4, onnotice: () => {} });
const base = postgresAdapter(sql);
let calls = 0;
const adapter: JobAdapter = { ...base, call: (fn, args) => (calls++, base.call(fn, args)) };
const store = new JobStore(adapter);
await store.get(ids[0]!); // the pool and the code paths warm before the baseline
calls = 0;

gc();
const before = process.memoryUsage();
const controller = new AbortController();
// One signal shared by every watch: each pending pause listens on it.
setMaxListeners(0, controller.signal);
let yields = 0;
const loops = ids.map(async (id) => {
	for await (const job of store.watch(id, {
		intervalMs,
		transport: 'poll',
		emitOn: ['status', 'progress', 'stage'],
		signal: controller.signal,
	})) {
		if (job) yields++;
	}
});
await sleep(holdMs);
gc();
const during = process.memoryUsage();
controller.abort();
await Promise.allSettled(loops);
await sql.end();
process.stdout.write(
	JSON.stringify({
		watches: ids.length,
		intervalMs,
		holdMs,
		calls,
		yields,
		rssDeltaMb: (during.rss - before.rss) / 2 ** 20,
		heapDeltaMb: (during.heapUsed - before.heapUsed) / 2 ** 20,
		rssMb: during.rss / 2 ** 20,
	}) + '\n',
);
