/**
 * What a person sees of parent and child jobs and of a job held by a
 * concurrency limit: a WatchedJob created with `{ children: true }` follows the
 * children, and <JobProgress> draws a tree of live bars; a queued job held by
 * a limit says so in the user's language. (The sources' real counterparts,
 * JobStore.watchChildren and holdReasons, are proven over both adapters in
 * test/store/family-conformance.ts.)
 */
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HoldReason } from '../../src/lib/store/job-store.ts';
import type { JobSnapshot } from '../../src/lib/svelte/types.ts';
import type { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import { deferred, FakeJobSource, snap, type Deferred } from './fixtures/sources.ts';
import JobTreeView from './fixtures/JobTreeView.svelte';

/** A source that also follows children (the test pushes each list) and answers hold reasons. */
class FamilySource extends FakeJobSource {
	readonly childWatches: { id: string; signal: AbortSignal }[] = [];
	readonly holdCalls: { ids: readonly string[]; answer: Deferred<ReadonlyMap<string, HoldReason>> }[] = [];
	#lists: (readonly JobSnapshot[])[] = [];
	#wake: (() => void) | null = null;

	async *watchChildren(id: string, { signal }: { signal: AbortSignal }): AsyncGenerator<readonly JobSnapshot[]> {
		this.childWatches.push({ id, signal });
		while (!signal.aborted) {
			const next = this.#lists.shift();
			if (next) {
				yield next;
				continue;
			}
			await new Promise<void>((resolve) => {
				this.#wake = resolve;
				signal.addEventListener('abort', () => resolve(), { once: true });
			});
		}
	}

	pushChildren(list: readonly JobSnapshot[]): void {
		this.#lists.push(list);
		this.#wake?.();
	}

	holdReasons(ids: readonly string[]): Promise<ReadonlyMap<string, HoldReason>> {
		const answer = deferred<ReadonlyMap<string, HoldReason>>();
		this.holdCalls.push({ ids, answer });
		return answer.promise;
	}
}

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

function render(source: FamilySource, props: { locale?: string; children?: boolean } = {}): WatchedJob {
	target = document.createElement('div');
	document.body.appendChild(target);
	let job: WatchedJob | null = null;
	app = mount(JobTreeView, { target, props: { source, id: 'job-1', ...props, onjob: (j: WatchedJob) => (job = j) } });
	flushSync();
	if (!job) throw new Error('the view did not hand over its WatchedJob');
	return job;
}

const bars = () => [...target.querySelectorAll<HTMLElement>('[role="progressbar"]')];
const stageText = () => target.querySelector('.sj-progress__stage')!.textContent;

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

describe('a parent job shows a tree of live progress bars', () => {
	it('WatchedJob { children: true } follows the children; the parent says "waiting for 1 of 2 parts" over a bar per child', async () => {
		const source = new FamilySource();
		const job = render(source);
		await source.stream.push(snap({ status: 'waiting', progress: 25 }));
		expect(source.childWatches.map((w) => w.id)).toEqual(['job-1']);
		source.pushChildren([
			snap({ id: 'c1', kind: 'page', status: 'done', progress: 100 }),
			snap({ id: 'c2', kind: 'page', status: 'running', progress: 40, stage: 'render' }),
		]);
		await vi.waitFor(() => expect(job.children).toHaveLength(2));
		flushSync();
		expect(stageText()).toBe('waiting for 1 of 2 parts');
		expect(bars().map((b) => b.getAttribute('aria-valuenow'))).toEqual(['25', '100', '40']);
		expect(target.querySelector('ul[aria-label="Parts"]')!.children).toHaveLength(2);
		// Live: the running child moves, its bar with it (never backwards).
		source.pushChildren([
			snap({ id: 'c1', kind: 'page', status: 'done', progress: 100 }),
			snap({ id: 'c2', kind: 'page', status: 'running', progress: 80, stage: 'render' }),
		]);
		await vi.waitFor(() => expect(job.children[1]?.progress).toBe(80));
		flushSync();
		expect(bars()[2]!.getAttribute('aria-valuenow')).toBe('80');
	});

	it('in Portuguese the parent says "aguardando 2 de 2 partes"', async () => {
		const source = new FamilySource();
		const job = render(source, { locale: 'pt-BR' });
		await source.stream.push(snap({ status: 'waiting' }));
		source.pushChildren([snap({ id: 'c1', status: 'queued' }), snap({ id: 'c2', status: 'running' })]);
		await vi.waitFor(() => expect(job.children).toHaveLength(2));
		flushSync();
		expect(stageText()).toBe('aguardando 2 de 2 partes');
	});

	it('without { children: true } nothing follows the children and a single bar is drawn', async () => {
		const source = new FamilySource();
		render(source, { children: false });
		await source.stream.push(snap({ status: 'waiting', progress: 10 }));
		flushSync();
		expect(source.childWatches).toEqual([]);
		expect(bars()).toHaveLength(1);
	});

	it('stopping the parent stops following its children', async () => {
		const source = new FamilySource();
		render(source);
		await source.stream.push(snap({ status: 'running' }));
		unmount(app!);
		app = null;
		expect(source.childWatches[0]!.signal.aborted).toBe(true);
	});
});

describe('a queued job held by a concurrency limit says so', () => {
	it('"waiting: 1 export already running" while held, then the usual words once it runs', async () => {
		const source = new FamilySource();
		const job = render(source);
		await source.stream.push(snap({ status: 'queued', attempts: 0, kind: 'export' }));
		expect(source.holdCalls.map((c) => c.ids)).toEqual([['job-1']]);
		source.holdCalls[0]!.answer.resolve(
			new Map([['job-1', { kind: 'export', heldBy: 'key', running: 1, maxRunning: 1 }]]),
		);
		await vi.waitFor(() => expect(job.heldBy).not.toBeNull());
		flushSync();
		expect(stageText()).toBe('waiting: 1 export already running');
		await source.stream.push(snap({ status: 'running', attempts: 1, kind: 'export' }));
		flushSync();
		expect(job.heldBy).toBeNull();
		expect(stageText()).toBe('Running');
	});

	it('in Portuguese: "aguardando: 2 export já em execução"', async () => {
		const source = new FamilySource();
		const job = render(source, { locale: 'pt-BR' });
		await source.stream.push(snap({ status: 'queued', attempts: 0, kind: 'export' }));
		source.holdCalls[0]!.answer.resolve(
			new Map([['job-1', { kind: 'export', heldBy: 'kind', running: 2, maxRunning: 2 }]]),
		);
		await vi.waitFor(() => expect(job.heldBy).not.toBeNull());
		flushSync();
		expect(stageText()).toBe('aguardando: 2 export já em execução');
	});

	it('a queued job no limit holds reads "Queued"', async () => {
		const source = new FamilySource();
		render(source);
		await source.stream.push(snap({ status: 'queued', attempts: 0 }));
		source.holdCalls[0]!.answer.resolve(new Map());
		await source.holdCalls[0]!.answer.promise;
		flushSync();
		expect(stageText()).toBe('Queued');
	});
	it('a queued job whose kind an operator pauses while it waits says so at the next look, with no change to the job; resumed, it reads "Queued"', async () => {
		const source = new FamilySource();
		const job = render(source);
		await source.stream.push(snap({ status: 'queued', attempts: 0, kind: 'export' }));
		source.holdCalls[0]!.answer.resolve(new Map());
		await source.holdCalls[0]!.answer.promise;
		flushSync();
		expect(stageText()).toBe('Queued');
		// Paused now: nothing reaches the job's watch, yet the page asks again while the job waits.
		await vi.waitFor(() => expect(source.holdCalls).toHaveLength(2), { timeout: 12_000, interval: 100 });
		source.holdCalls[1]!.answer.resolve(
			new Map([['job-1', { kind: 'export', heldBy: 'paused', running: 0, maxRunning: 0 }]]),
		);
		await vi.waitFor(() => expect(job.heldBy?.heldBy).toBe('paused'));
		flushSync();
		expect(stageText()).toBe('waiting: export is paused by the operator');
		await vi.waitFor(() => expect(source.holdCalls).toHaveLength(3), { timeout: 12_000, interval: 100 });
		source.holdCalls[2]!.answer.resolve(new Map());
		await vi.waitFor(() => expect(job.heldBy).toBeNull());
		flushSync();
		expect(stageText()).toBe('Queued');
	}, 30_000);
});
