/**
 * JobStore.watch over supabase-js Realtime, through the stand-in: what a
 * watch promises (current state at once, one value per change,
 * the terminal state and the end) with the worker writing through
 * postgres.js, plus what only a push transport has to get right: a restart of
 * the server mid-job, a refused join, leaving the channel, and costing no
 * query per tick while joined.
 */
import { describe, expect, test } from 'vitest';
import { serverRealtime } from '../../src/lib/adapters/server-realtime.ts';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import { TimeoutError } from '../../src/lib/errors.ts';
import { JobStore, type JobStreamChunk } from '../../src/lib/store/job-store.ts';
import { countingStore, frames, realtimeStatuses, useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();

type Frame = [status: string, progress: number, stage: string | null];

describe('watch over Realtime', () => {
	test('a worker ticking progress through phases gives exactly these frames, in order, ending with the terminal state', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('extract', { params: { filename: 'tender.pdf' } });
		const rt = realtimeStatuses();
		const seen = frames<Frame>();
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, {
				emitOn: ['status', 'progress', 'stage'],
				onRealtime: rt.onRealtime,
			}))
				seen.push([j.status, j.progress, j.stage]);
		})();
		await seen.until(1);
		await rt.until('live');
		// Written back to back: a push transport loses none of them (a poll would coalesce).
		const claimed = (await f.worker.claim(job.id))!;
		const attempt = claimed.attempts;
		await f.worker.tick(job.id, { progress: 2, stage: 'pdf', attempt });
		await f.worker.tick(job.id, { progress: 40, stage: 'table', attempt });
		await f.worker.tick(job.id, { progress: 80, stage: 'reading', attempt });
		await f.worker.succeed(job.id, { attempt });
		await watching;
		expect(seen.got).toEqual([
			['queued', 0, null],
			['running', 0, null],
			['running', 2, 'pdf'],
			['running', 40, 'table'],
			['running', 80, 'reading'],
			['done', 100, 'reading'],
		]);
		expect(rt.seen).toEqual(['live']);
	});

	test('the terminal value is the row as it ended, read in full (error sentence, timings, finished_at)', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('extract');
		const rt = realtimeStatuses();
		const values: Awaited<ReturnType<JobStore['get']>>[] = [];
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, { onRealtime: rt.onRealtime })) values.push(j);
		})();
		await rt.until('live');
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.fail(job.id, 'I could not read the file.', {
			attempt: claimed.attempts,
			errorCode: 'unsupported_format',
			timings: { pdf: { seconds: 1.5, size: 4000 } },
		});
		await watching;
		const end = values.at(-1)!;
		expect(end).toMatchObject({
			status: 'failed',
			error: 'I could not read the file.',
			errorCode: 'unsupported_format',
			timings: { pdf: { seconds: 1.5, size: 4000 } },
			params: {},
		});
		expect(end.finishedAt).toBeInstanceOf(Date);
		expect(end).toEqual(await user.store.get(job.id));
	});

	test('a watcher that subscribes after the job finished gets exactly one value, and joins nothing', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('late');
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		const { store, calls } = countingStore(new JobStore(supabaseAdapter(user.supabase)).adapter);
		const rt = realtimeStatuses();
		const seen: string[] = [];
		for await (const j of store.watch(job.id, { onRealtime: rt.onRealtime })) seen.push(j.status);
		expect(seen).toEqual(['done']);
		expect(calls).toEqual(['job_get']);
		expect(rt.seen).toEqual([]);
		expect(user.supabase.getChannels()).toEqual([]);
	});

	test('killing and restarting the server mid-job loses no terminal state', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('restart');
		const rt = realtimeStatuses();
		const seen = frames<Frame>();
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, {
				intervalMs: 50,
				emitOn: ['status', 'progress', 'stage'],
				onRealtime: rt.onRealtime,
			}))
				seen.push([j.status, j.progress, j.stage]);
		})();
		await rt.until('live');
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.tick(job.id, { progress: 30, stage: 'table', attempt: claimed.attempts });
		await seen.until(3);

		await f.standin.stop();
		await rt.until('down');
		// The job moves on and ends while nobody can hear it.
		await f.worker.tick(job.id, { progress: 70, stage: 'reading', attempt: claimed.attempts });
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await f.standin.start();
		await watching;
		expect(seen.got.slice(0, 3)).toEqual([
			['queued', 0, null],
			['running', 0, null],
			['running', 30, 'table'],
		]);
		expect(seen.got.at(-1)).toEqual(['done', 100, 'reading']);
		expect(rt.seen.slice(0, 2)).toEqual(['live', 'down']);
	});

	test('a stream watcher that loses the connection mid-stream gets what was written meanwhile, then the rest: every chunk once, in order', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('restart-stream');
		const rt = realtimeStatuses();
		const chunks = frames<JobStreamChunk>();
		const streaming = (async () => {
			for await (const batch of user.store.watchStreams(job.id, { intervalMs: 50 }))
				for (const chunk of batch) chunks.push(chunk);
		})();
		// The job's own watch on the same topic (one channel): it reports how the topic stands.
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, { intervalMs: 50, onRealtime: rt.onRealtime })) void j;
		})();
		await rt.until('live');
		const claimed = (await f.worker.claim(job.id))!;
		const write = (text: string) => f.worker.appendStream(job.id, 'summary', text, { attempt: claimed.attempts });
		await write('a ');
		await write('b ');
		await chunks.until(2);

		await f.standin.stop();
		await rt.until('down');
		// Written while nobody can hear it.
		await write('c ');
		await write('d ');
		await f.standin.start();
		await rt.until('live', 2);
		await write('e ');
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await Promise.all([streaming, watching]);
		expect(chunks.got.map((c) => c.text).join('')).toBe('a b c d e ');
		expect(chunks.got.map((c) => c.seq)).toEqual([0, 1, 2, 3, 4]);
	});

	test('after a restart the watcher joins again and the bar moves without polling', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('rejoin');
		const rt = realtimeStatuses();
		const seen = frames<Frame>();
		const { store, count } = countingStore(user.store.adapter);
		const watching = (async () => {
			for await (const j of store.watch(job.id, {
				intervalMs: 50,
				emitOn: ['status', 'progress', 'stage'],
				onRealtime: rt.onRealtime,
			}))
				seen.push([j.status, j.progress, j.stage]);
		})();
		await rt.until('live');
		await f.standin.stop();
		await rt.until('down');
		await f.standin.start();
		await rt.until('live', 2);
		const claimed = (await f.worker.claim(job.id))!;
		await seen.until(2);
		const gets = count('job_get');
		await f.worker.tick(job.id, { progress: 50, stage: 'table', attempt: claimed.attempts });
		await seen.until(3);
		expect(count('job_get')).toBe(gets); // pushed, not polled
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		expect(seen.got.at(-1)).toEqual(['done', 100, 'table']);
	});

	test('a watch started while the server is down waits for its first read instead of throwing', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('first-read-outage');
		const { store, count } = countingStore(user.store.adapter);
		await f.standin.stop();
		const seen: string[] = [];
		const watching = (async () => {
			for await (const j of store.watch(job.id, { intervalMs: 50 })) seen.push(j.status);
		})();
		// The first read has failed and been tried again (the calls are counted as they are made).
		await expect
			.poll(() => count('job_get_many') + count('job_get'), { timeout: 10_000, interval: 20 })
			.toBeGreaterThan(1);
		expect(seen).toEqual([]);
		await f.standin.start();
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		expect(seen.at(-1)).toBe('done');
	});

	test('timeout gives up with TimeoutError while joined', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('stuck');
		const rt = realtimeStatuses();
		const seen: string[] = [];
		let error: unknown;
		try {
			// Long enough to be live first on a loaded machine: an idle project's Realtime replicates
			// 1.5 s after its first join (the replication window), and the join itself may wait.
			for await (const j of user.store.watch(job.id, { timeoutMs: 5_000, onRealtime: rt.onRealtime }))
				seen.push(j.status);
		} catch (e) {
			error = e;
		}
		expect(error).toBeInstanceOf(TimeoutError);
		expect(seen).toEqual(['queued']);
		expect(rt.seen).toContain('live');
	});

	test('an AbortSignal ends the watch quietly and leaves the channel', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('abandoned');
		const rt = realtimeStatuses();
		const controller = new AbortController();
		const seen: string[] = [];
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, { signal: controller.signal, onRealtime: rt.onRealtime }))
				seen.push(j.status);
		})();
		await rt.until('live');
		// The owner follows their own list topic: one channel however many of their jobs they watch.
		expect(user.supabase.getChannels().map((c) => c.topic)).toEqual([`realtime:jobs:${job.ownerId}`]);
		controller.abort();
		await watching;
		expect(seen).toEqual(['queued']);
		expect(user.supabase.getChannels()).toEqual([]);
	});

	test('watches of several jobs of one owner share one channel (Realtime allows 100 per connection)', async () => {
		const user = await f.user();
		const ids = await user.store.enqueueMany('many-watched', [{}, {}, {}]);
		const rt = realtimeStatuses();
		const controller = new AbortController();
		const watching = ids.map((id) =>
			(async () => {
				const seen: string[] = [];
				for await (const j of user.store.watch(id, { signal: controller.signal, onRealtime: rt.onRealtime }))
					seen.push(j.status);
				return seen;
			})(),
		);
		await rt.until('live', ids.length);
		expect(user.supabase.getChannels().map((c) => c.topic)).toEqual([`realtime:jobs:${user.id}`]);
		for (const id of ids) await f.worker.cancel(id);
		expect(await Promise.all(watching)).toEqual(ids.map(() => ['queued', 'cancelled']));
		controller.abort();
	});

	test('two watchers of one job share one channel, and each gets every value', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('shared');
		const a = realtimeStatuses();
		const b = realtimeStatuses();
		const seenA: string[] = [];
		const seenB: string[] = [];
		const watchA = (async () => {
			for await (const j of user.store.watch(job.id, { onRealtime: a.onRealtime })) seenA.push(j.status);
		})();
		await a.until('live');
		const watchB = (async () => {
			for await (const j of user.store.watch(job.id, { onRealtime: b.onRealtime })) seenB.push(j.status);
		})();
		await b.until('live');
		expect(user.supabase.getChannels()).toHaveLength(1);
		const claimed = (await f.worker.claim(job.id))!;
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await Promise.all([watchA, watchB]);
		expect(seenA).toEqual(['queued', 'running', 'done']);
		expect(seenB).toEqual(['queued', 'running', 'done']);
		expect(user.supabase.getChannels()).toEqual([]);
	});

	test('where the join is refused, watch falls back to polling and still sees every status', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('refused');
		// This project has no Realtime policy for job topics (e.g. the migration's policy was dropped).
		await f.db.sql`alter policy supabase_jobs_read_job_topics on realtime.messages using (false)`;
		try {
			const rt = realtimeStatuses();
			const seen = frames<string>();
			const watching = (async () => {
				for await (const j of user.store.watch(job.id, { intervalMs: 20, onRealtime: rt.onRealtime }))
					seen.push(j.status);
			})();
			await rt.until('refused');
			const claimed = (await f.worker.claim(job.id))!;
			await seen.until(2);
			await f.worker.succeed(job.id, { attempt: claimed.attempts });
			await watching;
			expect(seen.got).toEqual(['queued', 'running', 'done']);
			expect(rt.seen).toEqual(['refused']);
			expect(user.supabase.getChannels()).toEqual([]);
		} finally {
			await f.db.sql`alter policy supabase_jobs_read_job_topics on realtime.messages
				using (extension = 'broadcast' and (select supabase_jobs.owns_job_topic((select realtime.topic()))))`;
		}
	});

	test("on a runtime without WebSocket (serverRealtime's transport on Node 20) watch is refused at once and polls to the end", async () => {
		// serverRealtime is the runtime's WebSocket where there is one, else a transport that refuses to connect.
		if (typeof globalThis.WebSocket === 'undefined')
			expect(() => new serverRealtime.transport('ws://127.0.0.1:9')).toThrow(/no WebSocket \(Node 20\)/);
		else expect(serverRealtime.transport).toBe(globalThis.WebSocket);
		class NoWebSocket {
			constructor() {
				throw new Error('no WebSocket here');
			}
		}
		const user = await f.user();
		const job = await user.store.enqueue('no-socket');
		const client = f.client({ sub: user.id }, { transport: NoWebSocket as never });
		const store = new JobStore(supabaseAdapter(client));
		const rt = realtimeStatuses();
		const seen = frames<string>();
		const watching = (async () => {
			for await (const j of store.watch(job.id, { intervalMs: 20, onRealtime: rt.onRealtime })) seen.push(j.status);
		})();
		await rt.until('refused');
		const claimed = (await f.worker.claim(job.id))!;
		await seen.until(2);
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		expect(seen.got).toEqual(['queued', 'running', 'done']);
		expect(rt.seen).toEqual(['refused']);
		expect(client.getChannels()).toEqual([]);
	});

	test('without Realtime on the client (realtime: false) watch polls, as over postgres.js', async () => {
		const user = await f.user();
		const job = await user.store.enqueue('polled');
		const { store, count } = countingStore(supabaseAdapter(user.supabase, { realtime: false }));
		expect(store.adapter.realtime).toBeUndefined();
		const rt = realtimeStatuses();
		const seen = frames<string>();
		const watching = (async () => {
			for await (const j of store.watch(job.id, { intervalMs: 10, onRealtime: rt.onRealtime })) seen.push(j.status);
		})();
		await seen.until(1);
		const claimed = (await f.worker.claim(job.id))!;
		await seen.until(2);
		await f.worker.succeed(job.id, { attempt: claimed.attempts });
		await watching;
		expect(seen.got).toEqual(['queued', 'running', 'done']);
		expect(rt.seen).toEqual([]);
		expect(count('job_get')).toBeGreaterThanOrEqual(3);
	});
});
