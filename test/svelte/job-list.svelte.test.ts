import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { JobList, type JobListOptions } from '../../src/lib/svelte/job-list.svelte.ts';
import type { JobSnapshot } from '../../src/lib/svelte/types.ts';
import { FakeListSource, snap } from './fixtures/sources.ts';
import JobListView from './fixtures/JobListView.svelte';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

function at(minute: number): Date {
	return new Date(Date.UTC(2025, 0, 1, 12, minute));
}

/** A row created at the given minute (ids sort with the minute too). */
function row(minute: number, overrides: Partial<JobSnapshot> = {}): JobSnapshot {
	return snap({ id: `job-${String(minute).padStart(2, '0')}`, createdAt: at(minute), ...overrides });
}

function render(source: FakeListSource, options: JobListOptions = {}): JobList {
	target = document.createElement('div');
	document.body.appendChild(target);
	let list: JobList | null = null;
	app = mount(JobListView, { target, props: { source, options, onlist: (l: JobList) => (list = l) } });
	flushSync();
	if (!list) throw new Error('the view did not hand over its JobList');
	return list;
}

function ids(list: JobList): string[] {
	return list.jobs.map((j) => j.id);
}

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

describe('JobList', () => {
	it('reads the first page with its filter on mount, subscribes, and unsubscribes on destroy', async () => {
		const source = new FakeListSource();
		const list = render(source, { kind: 'extract', statuses: ['queued', 'running'], limit: 2 });
		expect(source.requests).toHaveLength(1);
		expect(source.last.options).toEqual({
			kind: 'extract',
			status: null,
			statuses: ['queued', 'running'],
			limit: 2,
			cursor: null,
		});
		expect(source.listeners.size).toBe(1);
		expect(list.loading).toBe(true);

		source.last.answer.resolve({
			jobs: [row(2, { status: 'running', progress: 40, stage: 'table' }), row(1, { status: 'queued', attempts: 0 })],
			nextCursor: 'c1',
		});
		await list.settled;
		flushSync();
		expect(list.loaded).toBe(true);
		expect(ids(list)).toEqual(['job-02', 'job-01']);
		const items = target.querySelectorAll('li');
		expect(items).toHaveLength(2);
		expect(items[0]!.dataset['status']).toBe('running');
		expect(items[0]!.querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')).toBe('40');
		expect(items[1]!.querySelector('.sj-badge')!.textContent?.trim()).toBe('Queued');

		unmount(app!);
		app = null;
		expect(source.unsubscribed).toBe(1);
		expect(source.listeners.size).toBe(0);
	});

	it('"no jobs yet" is an answer, not an error', async () => {
		const source = new FakeListSource();
		const list = render(source, { statuses: ['queued', 'running'] });
		source.last.answer.resolve({ jobs: [], nextCursor: null });
		await list.settled;
		flushSync();
		expect(list.loaded).toBe(true);
		expect(list.error).toBeNull();
		expect(target.querySelector('.sj-strip__empty')?.textContent).toBe('Nothing queued or running.');
	});

	it('loadMore() asks with the opaque cursor, appends, and one click in flight is one request', async () => {
		const source = new FakeListSource();
		const list = new JobList(source, { kind: 'extract', limit: 2 });
		const first = list.start();
		source.last.answer.resolve({ jobs: [row(9), row(8)], nextCursor: 'opaque-1' });
		await first;
		expect(list.hasMore).toBe(true);

		const more = list.loadMore();
		expect(list.loadMore()).toBe(more);
		expect(source.requests).toHaveLength(2);
		expect(source.last.options.cursor).toBe('opaque-1');
		expect(source.last.options.kind).toBe('extract');
		// The row at minute 8 moved pages meanwhile: it is not listed twice.
		source.last.answer.resolve({ jobs: [row(8), row(7)], nextCursor: null });
		await more;
		expect(ids(list)).toEqual(['job-09', 'job-08', 'job-07']);
		expect(list.hasMore).toBe(false);

		await list.loadMore();
		expect(source.requests).toHaveLength(2);
		list.stop();
	});

	it('a change replaces its row, and the progress never goes backwards within an attempt', async () => {
		const source = new FakeListSource();
		const list = new JobList(source);
		const first = list.start();
		source.last.answer.resolve({ jobs: [row(5, { status: 'running', progress: 40 })], nextCursor: null });
		await first;
		source.emit(row(5, { status: 'running', progress: 30, stage: 'table' }));
		expect(list.jobs[0]!.progress).toBe(40);
		expect(list.jobs[0]!.stage).toBe('table');
		source.emit(row(5, { status: 'running', progress: 70, stage: 'reading' }));
		expect(list.jobs[0]!.progress).toBe(70);
		list.stop();
	});

	it('a job that stops matching the filter leaves; a new one that matches comes in at the top', async () => {
		const source = new FakeListSource();
		const list = new JobList(source, { statuses: ['queued', 'running'] });
		const first = list.start();
		source.last.answer.resolve({
			jobs: [row(5, { status: 'running' }), row(4, { status: 'queued', attempts: 0 })],
			nextCursor: null,
		});
		await first;

		source.emit(row(5, { status: 'done', progress: 100 }));
		expect(ids(list)).toEqual(['job-04']);

		source.emit(row(6, { status: 'queued', attempts: 0 }));
		expect(ids(list)).toEqual(['job-06', 'job-04']);

		source.emit(row(7, { status: 'failed' })); // does not match: not added
		expect(ids(list)).toEqual(['job-06', 'job-04']);
		expect(list.active.map((j) => j.id)).toEqual(['job-06', 'job-04']);
		list.stop();
	});

	it('a new row older than the loaded ones waits for its page when more pages exist', async () => {
		const source = new FakeListSource();
		const list = new JobList(source, { limit: 2 });
		const first = list.start();
		source.last.answer.resolve({ jobs: [row(9), row(8)], nextCursor: 'c' });
		await first;
		source.emit(row(3));
		expect(ids(list)).toEqual(['job-09', 'job-08']);
		source.emit(row(8, { id: 'job-08b' })); // same minute, id sorts after: still in this page's range
		expect(ids(list)).toEqual(['job-09', 'job-08b', 'job-08']);
		list.stop();
	});

	it('a change without a row reads the first page again', async () => {
		const source = new FakeListSource();
		const list = new JobList(source);
		const first = list.start();
		source.last.answer.resolve({ jobs: [row(1)], nextCursor: null });
		await first;
		source.emit();
		expect(source.requests).toHaveLength(2);
		expect(source.last.options.cursor).toBeNull();
		source.last.answer.resolve({ jobs: [row(2), row(1)], nextCursor: null });
		await list.settled;
		expect(ids(list)).toEqual(['job-02', 'job-01']);
		list.stop();
	});

	it('changing the filter reads again, and a late page of the old filter is dropped', async () => {
		const source = new FakeListSource();
		const list = new JobList(source, { kind: 'extract' });
		void list.start();
		const stale = source.last;
		const switched = list.setFilter({ kind: 'summarize', status: 'failed' });
		expect(source.last.options).toMatchObject({ kind: 'summarize', status: 'failed', cursor: null });
		source.last.answer.resolve({ jobs: [row(3, { kind: 'summarize', status: 'failed' })], nextCursor: null });
		await switched;
		stale.answer.resolve({ jobs: [row(4, { kind: 'extract' })], nextCursor: null });
		await stale.answer.promise; // the list's own continuation was queued first
		expect(ids(list)).toEqual(['job-03']);
		expect(list.filter).toMatchObject({ kind: 'summarize', status: 'failed' });
		list.stop();
	});

	it('a failed read lands in error and the rows stay', async () => {
		const source = new FakeListSource();
		const list = new JobList(source);
		const first = list.start();
		source.last.answer.resolve({ jobs: [row(1)], nextCursor: null });
		await first;
		const again = list.refresh();
		const failure = new Error('offline');
		source.last.answer.reject(failure);
		await again;
		expect(list.error).toBe(failure);
		expect(ids(list)).toEqual(['job-01']);
		expect(list.loading).toBe(false);
		list.stop();
	});
});
