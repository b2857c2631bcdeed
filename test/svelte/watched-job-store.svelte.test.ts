/**
 * The line the README and the guides show, `WatchedJob.create(store, id)` over
 * a JobStore, with nothing else named: the bar follows each tick (progress and
 * stage), not only the status changes. The store polls an in-memory adapter
 * whose row a "worker" moves forward between reads, so what the bar takes is
 * exactly what the store chose to yield.
 */
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JobAdapter, RawRow } from '../../src/lib/store/adapter.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { WATCH_EMIT_ON } from '../../src/lib/store/store-options.ts';
import type { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import WatchedJobView from './fixtures/WatchedJobView.svelte';

const ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

/** The row a worker writes, one step per read: running 10% (count), 55% (wrapup), then done. */
function tickingAdapter(): JobAdapter & { reads: number } {
	const steps = [
		{ status: 'running', progress: 10, stage: 'count' },
		{ status: 'running', progress: 55, stage: 'wrapup' },
		{ status: 'done', progress: 100, stage: 'wrapup' },
	];
	const base = Date.parse('2026-01-01T00:00:00Z');
	const adapter = {
		name: 'ticking',
		reads: 0,
		async call(fn: string) {
			if (fn !== 'job_get') throw new Error(`unexpected call ${fn}`);
			const step = steps[Math.min(adapter.reads, steps.length - 1)]!;
			const at = new Date(base + adapter.reads * 1000).toISOString();
			adapter.reads++;
			const row: RawRow = {
				id: ID,
				is_active: step.status !== 'done',
				created_at: new Date(base).toISOString(),
				updated_at: at,
				kind: 'example.word-count',
				status: step.status,
				params: {},
				result_id: null,
				error: null,
				error_code: null,
				attempts: 1,
				max_attempts: 3,
				started_at: new Date(base).toISOString(),
				finished_at: step.status === 'done' ? at : null,
				progress: step.progress,
				stage: step.stage,
				heartbeat_at: at,
				owner_id: null,
				locale: 'en',
				available_at: new Date(base).toISOString(),
				timings: null,
			};
			return [row]; // job_get answers a set of rows
		},
	};
	return adapter as unknown as JobAdapter & { reads: number };
}

let app: Record<string, unknown> | null = null;
let target: HTMLElement | null = null;

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

describe('WatchedJob.create(store, id) over a JobStore', () => {
	it('moves the bar with every tick: progress and stage between status changes, without naming emitOn', async () => {
		const store = new JobStore(tickingAdapter());
		target = document.createElement('div');
		document.body.appendChild(target);
		let job: WatchedJob | null = null;
		app = mount(WatchedJobView, {
			target,
			props: { source: store, id: ID, onjob: (j: WatchedJob) => (job = j) },
		});
		flushSync();
		const bar = target.querySelector<HTMLElement>('[role="progressbar"]')!;
		const seen: { value: string | null; stage: string | null }[] = [];
		const record = () => {
			const frame = { value: bar.getAttribute('aria-valuenow'), stage: job!.stage };
			const last = seen.at(-1);
			if (!last || last.value !== frame.value || last.stage !== frame.stage) seen.push(frame);
		};
		record();
		new MutationObserver(record).observe(bar, { attributes: true });
		// Three polls of the store's default interval (2 s).
		await vi.waitFor(() => expect(job!.isDone).toBe(true), { timeout: 10_000, interval: 50 });
		flushSync();
		record();
		expect(seen.filter((f) => f.value !== null && f.value !== '0')).toEqual([
			{ value: '10', stage: 'count' },
			{ value: '55', stage: 'wrapup' },
			{ value: '100', stage: 'wrapup' },
		]);
	}, 15_000);

	it('yields, by default, on every field the bar shows', () => {
		expect([...WATCH_EMIT_ON]).toEqual(
			expect.arrayContaining(['status', 'progress', 'stage', 'attempts', 'availableAt', 'expectedEndAt']),
		);
	});
});
