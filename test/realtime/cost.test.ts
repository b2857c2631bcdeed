/**
 * What a watcher costs. Over Realtime a joined watcher makes no query per
 * tick (counted twice: adapter calls, and statements the stand-in sent to
 * PostgreSQL for REST); the figures below (commit-to-callback latency, queries
 * per watcher-minute against polling every 2 s) are printed for the record.
 */
import { describe, expect, test } from 'vitest';
import { JobNotFoundError } from '../../src/lib/index.ts';
import { countingStore, frames, realtimeStatuses, useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();

const percentile = (sorted: number[], p: number) =>
	sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe('what watching costs', () => {
	test('while subscribed, a watcher costs no database queries per tick', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('cost');
		const { store, count, calls } = countingStore(user.store.adapter);
		const rt = realtimeStatuses();
		const seen = frames<number>();
		const watching = (async () => {
			for await (const j of store.watch(job.id, { emitOn: ['status', 'progress'], onRealtime: rt.onRealtime }))
				seen.push(j.progress);
		})();
		await rt.until('live'); // joined, and the row re-read
		const claimed = (await f.worker.claim(job.id))!;
		await seen.until(2);

		const rest = f.standin.queryCount('rest');
		const made = count();
		const N = 25;
		for (let i = 1; i <= N; i++) {
			await f.worker.tick(job.id, { progress: i * 2, stage: 'work', attempt: claimed.attempts });
			await seen.until(2 + i);
		}
		expect(f.standin.queryCount('rest') - rest).toBe(0);
		expect(count() - made).toBe(0);

		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		expect(seen.got.at(-1)).toBe(100);
		// The whole watch: the first read, the re-read after the join, the terminal re-read.
		expect(calls).toEqual(['job_get', 'job_get', 'job_get']);
	});

	test('exactly one Realtime message per visible change and at most one per tick, for an owned job and an ownerless one', async () => {
		const user = await f.user();
		const owned = await user.store.enqueue('cost-messages');
		const ownerless = await f.worker.enqueue('cost-messages');
		const messagesOf = async (id: string) =>
			(
				await f.db.sql<{ n: number }[]>`
					select count(*)::int as n from realtime.messages
					 where payload ->> 'id' = ${id} or payload -> 'jobs' @> ${JSON.stringify([{ id }])}::jsonb`
			)[0]!.n;
		const TICKS = 10;
		for (const job of [owned, ownerless]) {
			const inserted = await messagesOf(job.id);
			const claimed = (await f.worker.claim(job.id))!;
			expect(await messagesOf(job.id)).toBe(inserted + 1);
			for (let i = 1; i <= TICKS; i++) {
				const before = await messagesOf(job.id);
				await f.worker.tick(job.id, { progress: i * 5, attempt: claimed.attempts });
				await f.worker.tick(job.id, { attempt: claimed.attempts }); // a heartbeat: no message
				expect(await messagesOf(job.id)).toBe(before + 1);
			}
			await f.worker.succeed(job.id, { attempt: claimed.attempts });
			// Claim, ticks, end: one each. The insert is heard only where someone can follow it already (an owner).
			expect(await messagesOf(job.id)).toBe(inserted + 1 + TICKS + 1);
			expect(inserted).toBe(job === owned ? 1 : 0);
		}
	});

	test('a watch that finds its owner topic already joined costs one read, and misses no change made as it starts', async () => {
		const user = await f.user();
		const [held, job] = await user.store.enqueueMany('cost-joined', [{}, {}]);
		const controller = new AbortController();
		const holder = realtimeStatuses();
		const holding = (async () => {
			for await (const _ of user.store.watch(held!, { signal: controller.signal, onRealtime: holder.onRealtime }));
		})();
		await holder.until('live');

		const { store, calls } = countingStore(user.store.adapter);
		const seen: string[] = [];
		const watching = (async () => {
			for await (const j of store.watch(job!)) seen.push(j.status);
		})();
		// Claimed and finished while the new watch's first read may still be in flight.
		const claimed = (await f.worker.claim(job!))!;
		await f.worker.succeed(job!, { attempt: claimed.attempts });
		await watching;
		expect(seen.at(-1)).toBe('done');
		expect(seen[0] === 'queued' || seen[0] === 'running' || seen[0] === 'done').toBe(true);
		// The first read and the terminal re-read (none after the join: the topic was live before the first read).
		expect(calls.length).toBeLessThanOrEqual(2);
		expect(calls.every((c) => c === 'job_get')).toBe(true);
		controller.abort();
		await holding;
	});

	test('watches started together share their reads: one job_get_many, no request per watch; an id not yours is not found', async () => {
		const user = await f.user();
		const other = await f.user();
		const ids = await user.store.enqueueMany('cost-together', [{}, {}, {}, {}, {}]);
		const theirs = await f.worker.enqueue('cost-together', { ownerId: other.id, payload: 'secret bytes' });
		const { store, calls } = countingStore(user.store.adapter);
		const rt = realtimeStatuses();
		const controller = new AbortController();
		const watching = ids.map((id) =>
			(async () => {
				const seen: string[] = [];
				for await (const j of store.watch(id, { signal: controller.signal, onRealtime: rt.onRealtime })) {
					seen.push(j.status);
					expect(j.payload).toBeNull();
				}
				return seen;
			})(),
		);
		const notMine = (async () => {
			for await (const _ of store.watch(theirs.id, { signal: controller.signal }));
		})();
		await expect(notMine).rejects.toThrow(JobNotFoundError);
		await rt.until('live', ids.length);
		// The first reads (and the catch-up after the join, when it came after them) went in shared calls.
		expect(calls.filter((c) => c !== 'job_get_many')).toEqual([]);
		expect(calls.length).toBeLessThanOrEqual(2);
		for (const id of ids) await f.worker.cancel(id);
		expect(await Promise.all(watching)).toEqual(ids.map(() => ['queued', 'cancelled']));
		controller.abort();
	});

	test('figures: commit-to-callback latency over the stand-in, and queries per watcher-minute, Realtime vs polling at 2 s', async () => {
		const user = await f.user();

		// Latency: the worker commits a tick (postgres.js), the watcher's loop receives the frame.
		const job = await user.store.enqueue('latency');
		const rt = realtimeStatuses();
		const arrived = new Map<number, number>();
		const seen = frames<number>();
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, { emitOn: ['progress'], onRealtime: rt.onRealtime })) {
				arrived.set(j.progress, performance.now());
				seen.push(j.progress);
			}
		})();
		await rt.until('live');
		const claimed = (await f.worker.claim(job.id))!;
		await seen.until(1); // the claim's frame (progress unchanged: emitOn progress only) is not yielded
		const liveRest = f.standin.queryCount('rest');
		const TICKS = 200;
		const fromCommit: number[] = [];
		const fromCall: number[] = [];
		for (let i = 1; i <= TICKS; i++) {
			const progress = i * 0.45;
			const called = performance.now();
			await f.worker.tick(job.id, { progress, attempt: claimed.attempts });
			const committed = performance.now();
			await seen.until(1 + i);
			const at = arrived.get(seen.got.at(-1)!)!;
			fromCommit.push(Math.max(0, at - committed));
			fromCall.push(at - called);
		}
		const restPerTick = (f.standin.queryCount('rest') - liveRest) / TICKS;
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		fromCommit.sort((a, b) => a - b);
		fromCall.sort((a, b) => a - b);

		// Polling: statements the stand-in sends per job_get, from counts.
		const polled = await user.store.enqueue('polled');
		const { store: poller, count: polls, signal: settled } = countingStore(user.store.adapter);
		const controller = new AbortController();
		const POLLS = 20;
		const restBefore = f.standin.queryCount('rest');
		const polling = (async () => {
			for await (const j of poller.watch(polled.id, { transport: 'poll', intervalMs: 5, signal: controller.signal }))
				void j;
		})();
		await settled.until(() => polls('job_get') >= POLLS);
		controller.abort();
		await polling;
		const statementsPerGet = (f.standin.queryCount('rest') - restBefore) / polls('job_get');

		// A watcher-minute: polling asks 30 times; over Realtime the worker's ticks
		// (say one every 2 s too) cost the watcher what was measured per tick.
		const pollingPerMinute = 60 / 2;
		const realtimeStatementsPerMinute = (60 / 2) * restPerTick;
		const figures = {
			ticks: TICKS,
			commitToCallbackMs: { p50: percentile(fromCommit, 50), p95: percentile(fromCommit, 95) },
			tickCallToCallbackMs: { p50: percentile(fromCall, 50), p95: percentile(fromCall, 95) },
			statementsPerJobGet: statementsPerGet,
			perWatcherMinute: {
				polling2s: { requests: pollingPerMinute, statements: pollingPerMinute * statementsPerGet },
				realtime: {
					statements: realtimeStatementsPerMinute,
					// once per watch: first read, re-read after the join, terminal re-read
					perWatch: { requests: 3, statements: 3 * statementsPerGet },
				},
			},
		};
		console.log(
			`[realtime figures] ${JSON.stringify(figures, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`,
		);
		expect(fromCommit).toHaveLength(TICKS);
		expect(statementsPerGet).toBeGreaterThan(0);
		expect(restPerTick).toBe(0);
		// Loose sanity bounds for a loaded 2-core machine; the printed figures are the result.
		expect(percentile(fromCommit, 50)).toBeLessThan(500);
	});
});
