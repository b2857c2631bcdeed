/**
 * After an idle spell hosted Realtime's replication starts only when the
 * first channel joins, and a change committed before it is ready is never
 * sent. The first watcher must still see the job end: its topic is live only
 * once Realtime says replication is ready (replication_ready), and the watch
 * reads the row then. Bound: the replication window plus one read.
 */
import { describe, expect, test } from 'vitest';
import { frames, realtimeStatuses, useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture({ realtime: { startIdle: true } });
/** What the watch may take past the replication window: a system message and one read. */
const READ_MS = 2_000;

describe('the first watcher after an idle spell', () => {
	test('sees a 1 s job end within the replication window and one read, though every message of it was dropped', async () => {
		expect(f.standin.realtime.stats().replication).toBe('idle');
		const user = await f.user();
		const job = await user.store.enqueue('after-idle');
		const rt = realtimeStatuses();
		const seen = frames<string>();
		const watchedAt = Date.now();
		// No polling to fall back on: only Realtime and its replication_ready can end this watch in time.
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, {
				intervalMs: 60_000,
				quietReadMs: 60_000,
				onRealtime: rt.onRealtime,
			}))
				seen.push(`${j.status}:${j.progress}`);
		})();
		await seen.until(1);
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.tick(job.id, { progress: 50, stage: 'work', attempt: claimed.attempts });
		// The job's one second of work.
		await new Promise((r) => setTimeout(r, 1_000));
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		const tookMs = Date.now() - watchedAt;

		expect(seen.got.at(-1)).toBe('done:100');
		expect(rt.seen).toContain('live');
		const stats = f.standin.realtime.stats();
		expect(stats.replication).toBe('ready');
		// The claim, the tick and the close were committed before replication was ready: never sent.
		expect(stats.dropped.beforeReplication).toBeGreaterThanOrEqual(3);
		expect(tookMs).toBeLessThan(f.standin.realtime.limits.replicationStartDelayMs + READ_MS);
	});
});
