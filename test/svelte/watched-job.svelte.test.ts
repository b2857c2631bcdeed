import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import type { JobSnapshot } from '../../src/lib/svelte/types.ts';
import { FakeJobSource, snap } from './fixtures/sources.ts';
import WatchedJobView from './fixtures/WatchedJobView.svelte';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

function render(
	source: FakeJobSource,
	options: { id?: string; initial?: JobSnapshot | null; locale?: string } = {},
): WatchedJob {
	target = document.createElement('div');
	document.body.appendChild(target);
	let job: WatchedJob | null = null;
	app = mount(WatchedJobView, {
		target,
		props: {
			source,
			id: options.id ?? 'job-1',
			initial: options.initial ?? null,
			locale: options.locale ?? 'en',
			onjob: (j: WatchedJob) => (job = j),
		},
	});
	flushSync();
	if (!job) throw new Error('the view did not hand over its WatchedJob');
	return job;
}

function bar(): HTMLElement {
	const el = target.querySelector<HTMLElement>('[role="progressbar"]');
	if (!el) throw new Error('no progressbar');
	return el;
}

function wrapper(): HTMLElement {
	return bar().parentElement!;
}

function button(): HTMLButtonElement {
	const el = target.querySelector<HTMLButtonElement>('button');
	if (!el) throw new Error('no button');
	return el;
}

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

describe('WatchedJob in a component', () => {
	it('subscribes when mounted and stops (the signal aborts) when destroyed', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		expect(source.watchCalls).toHaveLength(1);
		expect(source.watchCalls[0]!.id).toBe('job-1');
		expect(source.watchCalls[0]!.signal.aborted).toBe(false);
		expect(job.watching).toBe(true);

		await source.stream.push(snap({ status: 'running', progress: 10, stage: 'pdf' }));
		flushSync();
		expect(bar().getAttribute('aria-valuenow')).toBe('10');

		const closed = job.start(); // the open watch's promise
		unmount(app!);
		app = null;
		expect(source.watchCalls[0]!.signal.aborted).toBe(true);
		expect(job.watching).toBe(false);
		await closed;
		expect(source.stream.returned).toBe(true); // the source was told to let go
		expect(source.watchCalls).toHaveLength(1);
	});

	it('the progress bar never goes backwards within one attempt: fed 40 then 30 it stays at 40', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ progress: 40, stage: 'table', attempts: 1 }));
		flushSync();
		expect(bar().getAttribute('aria-valuenow')).toBe('40');

		await source.stream.push(snap({ progress: 30, stage: 'table', attempts: 1 }));
		flushSync();
		expect(job.progress).toBe(40);
		expect(bar().getAttribute('aria-valuenow')).toBe('40');
		expect(target.querySelector<HTMLElement>('.sj-progress__fill')!.style.width).toBe('40%');

		await source.stream.push(snap({ progress: 55.4, stage: 'reading', attempts: 1 }));
		flushSync();
		expect(bar().getAttribute('aria-valuenow')).toBe('55');
	});

	it('a new attempt (retry or reclaim) may start the bar lower: attempts tells it apart', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'running', progress: 60, attempts: 1 }));
		await source.stream.push(snap({ status: 'queued', progress: 0, attempts: 1, stage: null }));
		flushSync();
		expect(job.progress).toBe(0);
		expect(wrapper().dataset['status']).toBe('queued');

		await source.stream.push(snap({ status: 'running', progress: 5, attempts: 2, stage: 'pdf' }));
		await source.stream.push(snap({ status: 'running', progress: 3, attempts: 2, stage: 'pdf' }));
		flushSync();
		expect(job.attempts).toBe(2);
		expect(bar().getAttribute('aria-valuenow')).toBe('5');
	});

	it('the progressbar carries role, aria-valuemin 0, aria-valuemax 100, the rounded value and the stage', async () => {
		const source = new FakeJobSource();
		render(source);
		await source.stream.push(snap({ status: 'running', progress: 42.6, stage: 'Reading the table' }));
		flushSync();
		const el = bar();
		expect(el.getAttribute('aria-valuemin')).toBe('0');
		expect(el.getAttribute('aria-valuemax')).toBe('100');
		expect(el.getAttribute('aria-valuenow')).toBe('43');
		expect(el.getAttribute('aria-valuetext'), 'the number first, then what it is doing').toBe('43%, Reading the table');
		expect(el.getAttribute('aria-label')).toBe('Progress');
		expect(target.querySelector('.sj-progress__stage')!.textContent).toBe('Reading the table');
		expect(wrapper().dataset['status']).toBe('running');
	});

	it('before any stage the label is the status, and before any snapshot it says loading', async () => {
		const source = new FakeJobSource();
		render(source);
		expect(wrapper().dataset['status']).toBe('loading');
		expect(bar().getAttribute('aria-valuetext')).toBe('Loading…');
		await source.stream.push(snap({ status: 'queued', progress: 0, stage: null, attempts: 0, startedAt: null }));
		flushSync();
		expect(bar().getAttribute('aria-valuetext')).toBe('Queued');
		expect(bar().getAttribute('aria-valuenow')).toBe('0');
	});

	it('a failed job is highlighted and shows the sentence written for the user', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'running', progress: 35, stage: 'table' }));
		await source.stream.push(
			snap({
				status: 'failed',
				progress: 35,
				stage: 'table',
				error: 'I could not read the file: empty file',
				errorCode: 'unsupported_format',
			}),
		);
		flushSync();
		expect(job.isFailed).toBe(true);
		expect(job.isTerminal).toBe(true);
		expect(wrapper().classList.contains('sj-progress--failed')).toBe(true);
		expect(wrapper().dataset['status']).toBe('failed');
		const alert = target.querySelector('[role="alert"]');
		expect(alert?.textContent).toBe('I could not read the file: empty file');
		expect(bar().getAttribute('aria-valuenow'), 'no percentage left from the run').toBeNull();
		expect(target.querySelector('.sj-progress__stage')!.textContent).toBe('Failed');
		expect(target.querySelector('button'), 'nothing left to cancel').toBeNull();
	});

	it('a cancelled job is neutral: no error class, no alert', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'running', progress: 20, stage: 'table' }));
		await source.stream.push(
			snap({ status: 'cancelled', progress: 20, stage: 'table', error: 'cancelled by the user' }),
		);
		flushSync();
		expect(job.isCancelled).toBe(true);
		expect(job.isFailed).toBe(false);
		expect(wrapper().classList.contains('sj-progress--failed')).toBe(false);
		expect(wrapper().classList.contains('sj-progress--cancelled')).toBe(true);
		expect(wrapper().dataset['status']).toBe('cancelled');
		expect(target.querySelector('[role="alert"]')).toBeNull();
		expect(target.querySelector('.sj-progress__stage')!.textContent, 'not the stage it stopped in').toBe('Cancelled');
		expect(target.querySelector('.sj-progress__percent')).toBeNull();
		expect(target.querySelector('button'), 'nothing left to cancel').toBeNull();
	});

	it('a done job shows a complete bar and its result', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'running', progress: 90, stage: 'reading' }));
		await source.stream.push(snap({ status: 'done', progress: 93, stage: 'reading', resultId: 'draft-7' }));
		flushSync();
		expect(job.isDone).toBe(true);
		expect(bar().getAttribute('aria-valuenow')).toBe('100');
		expect(wrapper().classList.contains('sj-progress--done')).toBe(true);
		expect(wrapper().classList.contains('sj-progress--failed')).toBe(false);
		expect(target.querySelector('[data-result-id]')?.getAttribute('data-result-id')).toBe('draft-7');
	});

	it('the watch ends after a terminal state and late snapshots cannot revive the job', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		const closed = job.start(); // the watch already open: same promise
		await source.stream.push(snap({ status: 'done', progress: 100 }));
		await closed;
		flushSync();
		expect(job.watching).toBe(false);
		expect(job.connectionError).toBeNull();
		expect(source.stream.returned).toBe(true);
		// Still terminal: start() opens nothing.
		await job.start();
		expect(source.watchCalls).toHaveLength(1);
		expect(job.status).toBe('done');
	});

	it('a job that is already finished shows the final state at once, without watching', () => {
		const source = new FakeJobSource();
		const job = render(source, {
			initial: snap({ status: 'done', progress: 100, resultId: 'draft-1', finishedAt: new Date() }),
		});
		expect(job.status).toBe('done');
		expect(bar().getAttribute('aria-valuenow')).toBe('100');
		expect(wrapper().dataset['status']).toBe('done');
		expect(target.querySelector('button'), 'nothing left to cancel').toBeNull();
		expect(target.querySelector('[data-result-id]')?.getAttribute('data-result-id')).toBe('draft-1');
		expect(source.watchCalls).toHaveLength(0);
	});

	it('a page opened after the job failed shows it from the first value the watch yields', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		const closed = job.start();
		await source.stream.push(snap({ status: 'failed', progress: 12, error: 'The file is empty.' }));
		await closed;
		flushSync();
		expect(wrapper().classList.contains('sj-progress--failed')).toBe(true);
		expect(target.querySelector('[role="alert"]')?.textContent).toBe('The file is empty.');
		expect(job.watching).toBe(false);
	});

	it('cancel answers at once: "Cancelling…" before the request returns, then the cancelled state', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'running', progress: 30, stage: 'table' }));
		flushSync();
		expect(button().textContent?.trim()).toBe('Cancel');

		button().click();
		flushSync();
		expect(job.cancelling).toBe(true);
		expect(button().textContent?.trim()).toBe('Cancelling…');
		expect(button().getAttribute('aria-disabled')).toBe('true');
		expect(source.cancelCalls).toHaveLength(1);

		source.cancelCalls[0]!.answer.resolve(null);
		await job.cancel();
		flushSync();
		expect(button().textContent?.trim()).toBe('Cancelling…'); // until the row says so

		await source.stream.push(snap({ status: 'cancelled', progress: 30, stage: 'table' }));
		flushSync();
		expect(job.cancelling).toBe(false);
		expect(target.querySelector('button'), 'the ended job has no Cancel').toBeNull();
		expect(target.querySelector('.sj-progress__live')!.textContent, 'announced politely').toBe('Cancelled');
		expect(wrapper().classList.contains('sj-progress--failed')).toBe(false);
	});

	it('cancel is idempotent: two clicks send one request', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'running', progress: 30 }));
		flushSync();
		button().click();
		button().click();
		flushSync();
		expect(source.cancelCalls).toHaveLength(1);
		source.cancelCalls[0]!.answer.resolve(null);
		await job.cancel();
		button().click(); // answered, row not yet cancelled: still nothing new
		expect(source.cancelCalls).toHaveLength(1);
	});

	it('cancel sends nothing on a terminal job', async () => {
		const source = new FakeJobSource();
		const job = render(source, { initial: snap({ status: 'done', progress: 100 }) });
		await job.cancel();
		flushSync();
		expect(target.querySelector('button'), 'no button on an ended job').toBeNull();
		expect(source.cancelCalls).toHaveLength(0);
		expect(job.cancelling).toBe(false);
	});

	it('a cancel answered with the updated row shows it without waiting for the watch', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'queued', progress: 0, attempts: 0 }));
		button().click();
		source.cancelCalls[0]!.answer.resolve(snap({ status: 'cancelled', progress: 0, attempts: 0 }));
		await job.cancel();
		flushSync();
		expect(job.status).toBe('cancelled');
		expect(wrapper().dataset['status']).toBe('cancelled');
	});

	it('a failed cancel request gives the button back and says why', async () => {
		const source = new FakeJobSource();
		const job = render(source);
		await source.stream.push(snap({ status: 'running', progress: 50 }));
		button().click();
		const failure = new Error('network down');
		source.cancelCalls[0]!.answer.reject(failure);
		await job.cancel();
		flushSync();
		expect(job.cancelling).toBe(false);
		expect(job.cancelError).toBe(failure);
		expect(button().textContent?.trim()).toBe('Cancel');
		button().click();
		expect(source.cancelCalls).toHaveLength(2);
	});

	it('speaks Portuguese when asked', async () => {
		const source = new FakeJobSource();
		render(source, { locale: 'pt-BR' });
		await source.stream.push(snap({ status: 'queued', progress: 0, attempts: 0 }));
		flushSync();
		expect(bar().getAttribute('aria-valuetext')).toBe('Na fila');
		expect(bar().getAttribute('aria-label')).toBe('Progresso');
		expect(button().textContent?.trim()).toBe('Cancelar');
		button().click();
		flushSync();
		expect(button().textContent?.trim()).toBe('Cancelando…');
	});

	it('following another id stops the old watch and starts over', async () => {
		const source = new FakeJobSource();
		target = document.createElement('div');
		document.body.appendChild(target);
		let job: WatchedJob | null = null;
		const props = $state({
			source,
			id: 'job-1',
			initial: null as JobSnapshot | null,
			onjob: (j: WatchedJob) => (job = j),
		});
		app = mount(WatchedJobView, { target, props });
		flushSync();
		await source.stream.push(snap({ id: 'job-1', progress: 80 }));
		props.id = 'job-2';
		flushSync();
		expect(source.watchCalls.map((c) => c.id)).toEqual(['job-1', 'job-2']);
		expect(source.watchCalls[0]!.signal.aborted).toBe(true);
		expect(job!.id).toBe('job-2');
		expect(job!.progress).toBe(0);
		await source.stream.push(snap({ id: 'job-2', progress: 10 }));
		flushSync();
		expect(bar().getAttribute('aria-valuenow')).toBe('10');
	});
});

describe('WatchedJob without a component', () => {
	it("shows the load's row and reads its source only once the watch starts: server rendering needs no client", async () => {
		const source = new FakeJobSource();
		let reads = 0;
		const lazy = () => {
			reads++;
			return source;
		};
		for (const status of ['queued', 'running'] as const) {
			const job = new WatchedJob(lazy, 'job-1', snap({ status, progress: 40, attempts: status === 'queued' ? 0 : 1 }));
			expect(job.status).toBe(status);
			expect(job.progress).toBe(40);
			expect(reads, `a ${status} row applied without a watch`).toBe(0);
		}
		const job = new WatchedJob(lazy, 'job-1', snap({ status: 'queued', progress: 0, attempts: 0 }));
		const closed = job.start();
		expect(reads).toBeGreaterThan(0);
		expect(source.watchCalls.map((c) => c.id)).toEqual(['job-1']);
		await source.stream.push(snap({ status: 'done', progress: 100 }));
		await closed;
		expect(job.status).toBe('done');
	});

	it('an error from the watch lands in connectionError, and start() reconnects', async () => {
		const source = new FakeJobSource();
		const job = new WatchedJob(source, 'job-1');
		const closed = job.start();
		await source.stream.push(snap({ progress: 20 }));
		const failure = new Error('socket closed');
		source.stream.fail(failure);
		await closed;
		expect(job.connectionError).toBe(failure);
		expect(job.watching).toBe(false);
		expect(job.progress).toBe(20);

		const again = job.start();
		expect(job.connectionError).toBeNull();
		expect(source.watchCalls).toHaveLength(2);
		await source.stream.push(snap({ status: 'done', progress: 100 }));
		await again;
		expect(job.status).toBe('done');
	});

	it('a watch that ends before a terminal state is reported, not taken as the end', async () => {
		const source = new FakeJobSource();
		const job = new WatchedJob(source, 'job-1');
		const closed = job.start();
		await source.stream.push(snap({ status: 'running', progress: 20 }));
		source.stream.end();
		await closed;
		expect(job.connectionError).toBeInstanceOf(Error);
		expect(String(job.connectionError)).toMatch(/ended before the job finished/);
		expect(job.isActive).toBe(true);
	});

	it('stop() closes the watch even when the source ignores its signal', async () => {
		const source = new FakeJobSource();
		const job = new WatchedJob(
			{
				// A source that never looks at the signal and never yields.
				watch: () => ({
					[Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<JobSnapshot>>(() => {}) }),
				}),
				cancel: (id) => source.cancel(id),
			},
			'job-1',
		);
		const closed = job.start();
		expect(job.watching).toBe(true);
		job.stop();
		await closed;
		expect(job.watching).toBe(false);
		expect(job.connectionError).toBeNull();
	});

	it('older snapshots arriving late are ignored', async () => {
		const source = new FakeJobSource();
		const job = new WatchedJob(source, 'job-1');
		void job.start();
		const newer = snap({ status: 'running', progress: 50, stage: 'reading' });
		const older = {
			...snap({ status: 'running', progress: 50, stage: 'table' }),
			updatedAt: new Date(newer.updatedAt.getTime() - 5000),
		};
		await source.stream.push(newer);
		await source.stream.push(older);
		expect(job.stage).toBe('reading');
		job.stop();
	});

	it('a terminal snapshot stamped before the last tick still ends the job: nothing follows the end', async () => {
		const source = new FakeJobSource();
		const job = new WatchedJob(source, 'job-1');
		void job.start();
		const tick = snap({ status: 'running', progress: 60, stage: 'reading' });
		const cancelled = {
			...snap({ status: 'cancelled', progress: 60, stage: 'reading' }),
			updatedAt: new Date(tick.updatedAt.getTime() - 3),
		};
		await source.stream.push(tick);
		await source.stream.push(cancelled);
		expect(job.status).toBe('cancelled');
		job.stop();
	});
});
