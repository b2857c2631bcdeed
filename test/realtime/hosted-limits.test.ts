/**
 * The product under hosted Realtime's limits, over supabase-js against the
 * stand-in with the Free plan's quotas on (100 messages a second counted per
 * delivery, 256 KB payloads, 100 channels a connection, 100 joins a second,
 * messages partitioned by day): a watch re-reads a job it heard nothing of, a
 * join refused for a missing partition recovers to live messages once the
 * janitor makes it, no list message passes 256 KB, and running jobs watched
 * by several viewers keep the project under its message rate with every bar
 * ending at its true final state.
 */
import { describe, expect, test } from 'vitest';
import { realtimeLoad } from '../../bench/realtime-load.ts';
import { tickFloorMs, tickMessagesPerSecond } from '../../src/lib/internal/tick-budget.ts';
import { frames, realtimeStatuses, useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();
const until = async (ok: () => boolean | Promise<boolean>, ms: number, what: string) => {
	const by = Date.now() + ms;
	while (!(await ok())) {
		if (Date.now() > by) throw new Error(`not within ${ms} ms: ${what}`);
		await new Promise((r) => setTimeout(r, 25));
	}
};

describe('a watch never stays stale', () => {
	test('a change whose message was lost is read within quietReadMs, while the topic stays live', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('quiet');
		const claimed = (await f.worker.claim(job.id))!;
		const rt = realtimeStatuses();
		const seen = frames<number>();
		const controller = new AbortController();
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, {
				intervalMs: 60_000,
				quietReadMs: 500,
				onRealtime: rt.onRealtime,
				signal: controller.signal,
			}))
				seen.push(j.progress);
		})();
		await rt.until('live');
		// A change that sends no message (triggers off for this one write), as a message lost to a quota would be.
		const changedAt = Date.now();
		await f.db.sql.begin(async (tx) => {
			await tx`set local session_replication_role = replica`;
			await tx`update public.jobs set progress = 42 where id = ${job.id}`;
		});
		await until(() => seen.got.includes(42), 5_000, 'the change read');
		expect(Date.now() - changedAt).toBeLessThan(500 + 1_500);
		expect(rt.seen).toEqual(['live']);
		controller.abort();
		await watching;
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
	});

	test("a watch started with no partition for today is refused, joins again with backoff and goes live with the janitor's partition: the next tick arrives as a message", async () => {
		const user = await f.user();
		const job = await user.store.enqueue('partition');
		const claimed = (await f.worker.claim(job.id))!;
		const today = `messages_${new Date().toISOString().slice(0, 10).replaceAll('-', '_')}`;
		await f.db.sql.unsafe(`drop table realtime.${today}`);
		const refusedBefore = f.standin.realtime.stats().refused.missingPartition;
		const rt = realtimeStatuses();
		const seen = frames<number>();
		const watching = (async () => {
			// Polling every minute: a tick seen within seconds came as a message.
			for await (const j of user.store.watch(job.id, {
				intervalMs: 60_000,
				quietReadMs: 60_000,
				onRealtime: rt.onRealtime,
			}))
				seen.push(j.progress);
		})();
		await until(
			() => f.standin.realtime.stats().refused.missingPartition > refusedBefore,
			5_000,
			'a MissingPartition refusal',
		);
		await rt.until('down');
		await f.standin.realtime.runJanitor();
		await rt.until('live');
		const tickedAt = Date.now();
		await f.worker.tick(job.id, { progress: 60, stage: 'work', attempt: claimed.attempts });
		await until(() => seen.got.includes(60), 5_000, 'the tick as a message');
		expect(Date.now() - tickedAt).toBeLessThan(2_000);
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		expect(rt.seen[0]).toBe('down');
		expect(rt.seen.at(-1)).toBe('live');
		expect(seen.got.at(-1)).toBe(100);
	});
});

describe('no broadcast payload over 256 KB', () => {
	test('1,000 jobs of one owner with 16 KiB of metadata each, closed together: every change arrives, no message dropped for its size', async () => {
		const user = await f.user();
		const ids = await f.worker.enqueueMany(
			'big-metadata',
			Array.from({ length: 1_000 }, () => ({ params: {}, ownerId: user.id })),
		);
		const done = new Set<string>();
		const rt = realtimeStatuses();
		const stop = user.store.subscribeList({
			onChange: (j) => {
				if (j?.status === 'done' && (j.metadata as { notes?: string } | null)?.notes?.length === 16_000) done.add(j.id);
			},
			onRealtime: rt.onRealtime,
		});
		await rt.until('live');
		const before = f.standin.realtime.stats().dropped.payloadSize;
		const claimed = await f.worker.claimNext({ kinds: ['big-metadata'], limit: 1_000 });
		expect(claimed).toHaveLength(1_000);
		// The metadata written without a message each (as a worker's ticks would, long before): 16 KiB a job.
		await f.db.sql.begin(async (tx) => {
			await tx`set local session_replication_role = replica`;
			await tx`update public.jobs set metadata = jsonb_build_object('notes', repeat('x', 16000)) where id = any (${ids}::uuid[])`;
		});
		await f.worker.succeedMany(claimed.map((j) => ({ id: j.id, attempt: j.attempts })));
		await until(() => done.size === 1_000, 20_000, 'all 1,000 done changes with their metadata');
		stop();
		expect(f.standin.realtime.stats().dropped.payloadSize).toBe(before);
		const [largest] = await f.db.sql<
			{ bytes: number }[]
		>`select max(octet_length(payload::text))::int as bytes from realtime.messages`;
		expect(largest!.bytes).toBeLessThan(256_000);
		expect(largest!.bytes).toBeGreaterThan(100_000);
	});
});

describe('the message budget', () => {
	test('running jobs watched by 5 viewers each keep the project under 100 messages/s, no channel closed, every bar at its true end', async () => {
		// 200 running jobs (40 users x 5) watched by 5 viewers each: 1,000 watches for about 30 s.
		const users = Number(process.env.REALTIME_LOAD_USERS ?? 40);
		const load = {
			users,
			jobsPerUser: 5,
			viewersPerUser: 5,
			jobSeconds: Number(process.env.REALTIME_LOAD_SECONDS ?? 30),
		};
		const budget = { messagesPerSecond: 100, viewersPerTopic: 5 };
		const jobs = load.users * load.jobsPerUser;
		// Unpaced at the default tick, these ticks alone would cost 6 messages per job a second (1,200/s for 200 jobs).
		expect(tickMessagesPerSecond(jobs, 1_000, 5)).toBe(jobs * 6);
		expect(tickFloorMs(jobs, budget)).toBe(jobs * 120);
		const r = await realtimeLoad(f.db.sql, f.standin, { ...load, realtimeBudget: budget });
		console.log(`[figures] ${jobs} running jobs x ${load.viewersPerUser} viewers, paced: ${JSON.stringify(r)}`);
		expect(r.endedTrue).toBe(r.watches);
		expect(r.closedForRate).toBe(0);
		expect(r.droppedForRate).toBe(0);
		expect(r.peakCounterAverage).toBeLessThan(100);
		expect(r.messagesPerSecond).toBeLessThan(100);
	}, 240_000);
});
