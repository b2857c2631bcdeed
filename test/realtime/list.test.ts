/**
 * JobStore.subscribeList: the "queued or running" strip over the owner's
 * private topic `jobs:<owner_id>`, and its polling fallback.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import type { JobTopicStatus } from '../../src/lib/store/adapter.ts';
import { SUMMARY_FIELDS, type JobSummary } from '../../src/lib/store/job-summary.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { JobListSource } from '../../src/lib/svelte/types.ts';
import { Signal } from '../store/harness.ts';
import { useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();

/** Records onChange calls (a job, or undefined for "read again") and statuses. */
function recorder() {
	const changes: (JobSummary | undefined)[] = [];
	const statuses: JobTopicStatus[] = [];
	const signal = new Signal();
	return {
		changes,
		statuses,
		onChange: (job?: JobSummary) => {
			changes.push(job);
			signal.notify();
		},
		onRealtime: (s: JobTopicStatus) => {
			statuses.push(s);
			signal.notify();
		},
		until: (check: () => boolean) => signal.until(check),
		jobs: () => changes.filter((c): c is JobSummary => c !== undefined),
	};
}

afterEach(() => {
	vi.useRealTimers();
});

describe('subscribeList over Realtime', () => {
	test("pushes each change of the user's own jobs in this table, as a summary, and nothing else", async () => {
		const a = await f.user();
		const b = await f.user();
		await f.harness.createJobTable('exports_list');
		const r = recorder();
		const stop = a.store.subscribeList({ onChange: r.onChange, onRealtime: r.onRealtime });
		await r.until(() => r.statuses.includes('live'));
		expect(r.changes).toEqual([undefined]); // joined: read the list again

		const mine = await a.store.enqueue('extract', { params: { secret: 'not for lists' } });
		await f.worker.enqueue('extract', { ownerId: b.id }); // someone else's
		await f.worker.enqueue('extract', { ownerId: a.id }).then(() => undefined);
		const other = new JobStore(a.store.adapter, { table: 'exports_list' });
		await other.enqueue('export'); // a's, but another table
		const claimed = (await f.worker.claim(mine.id))!;
		await f.worker.tick(mine.id, { progress: 50, stage: 'table', attempt: claimed.attempts });
		await f.worker.succeed(mine.id, { attempt: claimed.attempts });
		await r.until(() => r.jobs().filter((j) => j.id === mine.id).length === 4);
		stop();

		const about = r.jobs().filter((j) => j.id === mine.id);
		expect(about.map((j) => [j.status, j.progress, j.stage])).toEqual([
			['queued', 0, null],
			['running', 0, null],
			['running', 50, 'table'],
			['done', 100, 'table'],
		]);
		expect(about[0]).toMatchObject({ kind: 'extract', ownerId: a.id, attempts: 0, maxAttempts: 3, error: null });
		expect(about[0]!.createdAt).toBeInstanceOf(Date);
		expect(about[0]).not.toHaveProperty('params');
		expect(r.jobs().every((j) => j.ownerId === a.id && j.kind === 'extract')).toBe(true);
		expect(a.supabase.getChannels()).toEqual([]);
	});

	test("a 'jobs' list of slim messages and a single 'job' message give each job's summary exactly as a full read does", async () => {
		const a = await f.user();
		const r = recorder();
		const stop = a.store.subscribeList({ onChange: r.onChange, onRealtime: r.onRealtime });
		await r.until(() => r.statuses.includes('live'));
		// One insert of three jobs of one owner: one list message on jobs:<owner>.
		const ids = await a.store.enqueueMany('slim-list', [{}, { tags: ['x'] }, {}]);
		await r.until(() => ids.every((id) => r.jobs().some((j) => j.id === id)));
		const queued = await Promise.all(ids.map((id) => a.store.get(id)));
		const claimed = (await f.worker.claim(ids[1]!))!;
		await r.until(() => r.jobs().some((j) => j.id === ids[1] && j.status === 'running'));
		stop();
		const summaryOf = (job: object) => Object.fromEntries(SUMMARY_FIELDS.map((k) => [k, (job as JobSummary)[k]]));
		const heard = r.jobs();
		for (const row of queued) expect(heard.find((j) => j.id === row.id)).toEqual(summaryOf(row));
		const running = heard.find((j) => j.id === ids[1] && j.status === 'running')!;
		expect(running).toEqual(summaryOf(await a.store.get(claimed.id)));
		expect(running).toMatchObject({ ownerId: a.id, tags: ['x'], stage: null, finishedAt: null });
		const [{ n }] = await f.db.sql<{ n: number }[]>`
			select count(*)::int as n from realtime.messages where event = 'jobs' and topic = ${`jobs:${a.id}`}`;
		expect(n).toBe(1);
	});

	test('subscribed by tag, it pushes only the changes of jobs carrying every tag asked', async () => {
		const a = await f.user();
		const r = recorder();
		const stop = a.store.subscribeList({ onChange: r.onChange, onRealtime: r.onRealtime, tags: ['invoice'] });
		await r.until(() => r.statuses.includes('live'));
		await a.store.enqueue('extract', { tags: ['report'] });
		const tagged = await a.store.enqueue('extract', { tags: ['invoice', 'acme'] });
		await f.worker.cancel(tagged.id);
		await r.until(() => r.jobs().some((j) => j.id === tagged.id && j.status === 'cancelled'));
		stop();
		expect(r.jobs().every((j) => j.tags.includes('invoice'))).toBe(true);
		expect(r.jobs().map((j) => j.status)).toEqual(['queued', 'cancelled']);
	});

	test('is the subscribe of the Svelte JobListSource', async () => {
		const a = await f.user();
		const r = recorder();
		const source: JobListSource = {
			listRecent: async (opts) => {
				const page = await a.store.listRecent({
					...opts,
					kind: opts.kind ?? undefined,
					status: opts.status ?? undefined,
					statuses: opts.statuses ?? undefined,
				});
				return page;
			},
			subscribe: (onChange) => a.store.subscribeList({ onChange, onRealtime: r.onRealtime }),
		};
		const seen: string[] = [];
		const signal = new Signal();
		const unsubscribe = source.subscribe!((job) => {
			if (job) seen.push(job.status);
			signal.notify();
		});
		await r.until(() => r.statuses.includes('live'));
		const job = await a.store.enqueue('strip');
		await signal.until(() => seen.length === 1);
		unsubscribe();
		expect(seen).toEqual(['queued']);
		expect(
			(await source.listRecent({ statuses: ['queued', 'running'], limit: 5, cursor: null })).jobs.map((j) => j.id),
		).toEqual([job.id]);
	});

	test('a service key names the owner: without ownerId it has no user, so it polls', async () => {
		const a = await f.user();
		const service = new JobStore(supabaseAdapter(await f.connect('service_role')));
		const r = recorder();
		const stop = service.subscribeList({ onChange: r.onChange, onRealtime: r.onRealtime, ownerId: a.id });
		await r.until(() => r.statuses.includes('live'));
		const job = await a.store.enqueue('dashboard');
		await r.until(() => r.jobs().some((j) => j.id === job.id));
		stop();

		const fallback = recorder();
		const stopFallback = service.subscribeList({
			onChange: fallback.onChange,
			onRealtime: fallback.onRealtime,
			intervalMs: 10,
		});
		await fallback.until(() => fallback.changes.length >= 2);
		stopFallback();
		expect(fallback.statuses).toEqual(['refused']);
		expect(fallback.jobs()).toEqual([]);
	});
});

describe('subscribeList without Realtime', () => {
	test('calls onChange() every intervalMs, and never after the unsubscribe', () => {
		vi.useFakeTimers();
		// An adapter without Realtime (postgres.js, or supabase-js with realtime: false); no call is made.
		const store = new JobStore({
			name: 'no-realtime',
			call: () => Promise.reject(new Error('subscribeList must not call the database')),
		});
		const r = recorder();
		const stop = store.subscribeList({ onChange: r.onChange, onRealtime: r.onRealtime, intervalMs: 2000 });
		vi.advanceTimersByTime(6000);
		expect(r.changes).toEqual([undefined, undefined, undefined]);
		stop();
		vi.advanceTimersByTime(6000);
		expect(r.changes).toHaveLength(3);
		expect(r.statuses).toEqual([]);
	});
});
