/**
 * Child process for the Realtime memory measurement: a user's supabase-js
 * client (realtime over `ws`) against the local stand-in, JobStore over
 * supabaseAdapter, and one `store.watch(id)` per job given (the user's own
 * jobs), all on the owner's private Realtime topic (one channel). Reports its RSS and heap
 * growth, taken once every watch is `live` (joined and the row re-read), as
 * JSON on stdout. A process of its own, so nothing else the bench did is
 * counted. Run with --expose-gc (bench/realtime-watch.ts does).
 *
 * The first id is a warm-up watch, joined before the baseline (it opens the
 * socket and loads the Realtime code paths) and kept to the end; the delta is
 * for the others.
 */
import { setMaxListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { JobStore, supabaseAdapter } from '../src/lib/index.ts';
import type { JobTopicStatus } from '../src/lib/adapter.ts';
import { deferred, now } from './stats.ts';

const url = process.env.BENCH_STANDIN_URL!;
const anonKey = process.env.BENCH_ANON_KEY!;
const token = process.env.BENCH_USER_TOKEN!;
const [warmId, ...ids] = JSON.parse(await readFile(process.env.BENCH_IDS_FILE!, 'utf8')) as string[];
// Watches started before waiting for them to be live; joins queue on one socket.
const chunk = Number(process.env.BENCH_WATCH_CHUNK ?? 100);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

const client = createClient(url, anonKey, {
	realtime: { transport: WebSocket as never },
	auth: { persistSession: false, autoRefreshToken: false },
	accessToken: async () => token,
});
await client.realtime.setAuth();
const store = new JobStore(supabaseAdapter(client));
const controller = new AbortController();
setMaxListeners(0, controller.signal);

const statuses = new Map<JobTopicStatus, number>();
const loops: Promise<void>[] = [];
/** Starts a watch; resolves when it is live, rejects if Realtime refused it. */
function watch(id: string): Promise<void> {
	const live = deferred();
	let failed: ((e: Error) => void) | undefined;
	const refused = new Promise<never>((_, reject) => (failed = reject));
	loops.push(
		(async () => {
			for await (const job of store.watch(id, {
				signal: controller.signal,
				onRealtime: (s) => {
					statuses.set(s, (statuses.get(s) ?? 0) + 1);
					if (s === 'live') live.resolve();
					else failed?.(new Error(`watch ${id}: Realtime ${s}`));
				},
			}))
				void job;
		})(),
	);
	return Promise.race([live.promise, refused]);
}

await watch(warmId!);
gc();
const before = process.memoryUsage();
const started = now();
for (let from = 0; from < ids.length; from += chunk) await Promise.all(ids.slice(from, from + chunk).map(watch));
const joinMs = now() - started;
gc();
const during = process.memoryUsage();
controller.abort();
await Promise.allSettled(loops);
await client.removeAllChannels();
process.stdout.write(
	JSON.stringify({
		watches: ids.length,
		joinMs,
		live: (statuses.get('live') ?? 0) - 1,
		rssDeltaMb: (during.rss - before.rss) / 2 ** 20,
		heapDeltaMb: (during.heapUsed - before.heapUsed) / 2 ** 20,
		rssMb: during.rss / 2 ** 20,
	}) + '\n',
);
process.exit(0);
