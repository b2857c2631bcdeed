import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import CancelButton from '../../src/lib/svelte/components/CancelButton.svelte';
import JobProgress from '../../src/lib/svelte/components/JobProgress.svelte';
import JobStatusBadge from '../../src/lib/svelte/components/JobStatusBadge.svelte';
import JobStrip from '../../src/lib/svelte/components/JobStrip.svelte';
import { messagesFor, resolveJobLocale, startTime } from '../../src/lib/svelte/messages.ts';
import type { JobSnapshot, JobSnapshotStatus } from '../../src/lib/svelte/types.ts';
import { snap } from './fixtures/sources.ts';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

function host(): HTMLElement {
	target = document.createElement('div');
	document.body.appendChild(target);
	return target;
}

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

describe('JobProgress fed raw rows', () => {
	it('never goes backwards within one attempt, even without a WatchedJob: 40 then 30 shows 40', () => {
		const props = $state({ job: snap({ progress: 40, stage: 'table', attempts: 1 }) as JobSnapshot, locale: 'en' });
		app = mount(JobProgress, { target: host(), props });
		flushSync();
		const bar = target.querySelector('[role="progressbar"]')!;
		expect(bar.getAttribute('aria-valuenow')).toBe('40');
		props.job = snap({ progress: 30, stage: 'table', attempts: 1 });
		flushSync();
		expect(bar.getAttribute('aria-valuenow')).toBe('40');
		props.job = snap({ progress: 10, stage: 'pdf', attempts: 2 });
		flushSync();
		expect(bar.getAttribute('aria-valuenow')).toBe('10');
		expect(bar.getAttribute('aria-valuetext')).toBe('10%, pdf');
	});

	it('clamps nonsense to 0..100, and shows 100% only together with Done', () => {
		const props = $state({ job: snap({ progress: 140 }) as JobSnapshot });
		app = mount(JobProgress, { target: host(), props });
		flushSync();
		const bar = target.querySelector('[role="progressbar"]')!;
		expect(bar.getAttribute('aria-valuenow'), 'a running job is not done at 100').toBe('99');
		props.job = snap({ progress: Number.NaN, attempts: 3 });
		flushSync();
		expect(bar.getAttribute('aria-valuenow')).toBe('0');
	});

	it('takes an accessible label of its own', () => {
		app = mount(JobProgress, { target: host(), props: { job: snap({ progress: 5 }), label: 'Reading the tender' } });
		flushSync();
		expect(target.querySelector('[role="progressbar"]')!.getAttribute('aria-label')).toBe('Reading the tender');
	});
});

describe('JobProgress stage labels', () => {
	it('reads the stage as people would, in text and aria-valuetext', () => {
		const labels: Record<string, string> = { analyse: 'Analysing' };
		app = mount(JobProgress, {
			target: host(),
			props: { job: snap({ progress: 33, stage: 'analyse' }), stageLabel: (s: string) => labels[s] ?? s },
		});
		flushSync();
		expect(target.querySelector('[role="progressbar"]')!.getAttribute('aria-valuetext')).toBe('33%, Analysing');
		expect(target.textContent).toContain('Analysing');
		expect(target.textContent).not.toContain('analyse');
	});
});

describe('JobProgress when the worker goes silent', () => {
	it('says "not responding — it will be retried" while a running job\'s worker is silent, in the user\'s language, and stops saying it when it comes back', () => {
		const props = $state({
			job: snap({ status: 'running', progress: 4, workerSilent: true }) as JobSnapshot,
			locale: 'pt-BR',
		});
		app = mount(JobProgress, { target: host(), props });
		flushSync();
		expect(target.querySelector('.sj-progress__silent')?.textContent).toBe(messagesFor('pt-BR').notResponding);
		props.job = snap({ status: 'running', progress: 5, workerSilent: false });
		flushSync();
		expect(target.querySelector('.sj-progress__silent')).toBeNull();
		props.job = snap({ status: 'failed', progress: 5, workerSilent: true });
		flushSync();
		expect(target.textContent).not.toContain(messagesFor('pt-BR').notResponding);
	});
});

describe('JobProgress says how much longer, honestly', () => {
	it('"about 1 min left" from the run\'s pace, then "taking longer than usual" once a phase overruns it', () => {
		vi.useFakeTimers();
		try {
			const start = new Date(Date.now() - 60_000);
			const props = $state({
				job: snap({
					status: 'running',
					progress: 50,
					stage: 'table',
					startedAt: start,
					updatedAt: new Date(),
				}) as JobSnapshot,
				locale: 'en',
			});
			app = mount(JobProgress, { target: host(), props });
			flushSync();
			expect(target.querySelector('.sj-progress__eta')?.textContent).toBe('about 1 min left');
			// The phase overruns: no tick moves the bar for three minutes.
			vi.advanceTimersByTime(180_000);
			flushSync();
			expect(target.querySelector('.sj-progress__eta')?.textContent).toBe('taking longer than usual');
			// Done: no estimate left.
			props.job = snap({ status: 'done', progress: 100, startedAt: start, updatedAt: new Date() });
			flushSync();
			expect(target.querySelector('.sj-progress__eta')).toBeNull();
		} finally {
			vi.useRealTimers();
		}
	});
});

describe('JobProgress of a job given back to the queue', () => {
	it('says "retrying (attempt 2 of 3)" once an attempt ended early and the job waits again', () => {
		app = mount(JobProgress, {
			target: host(),
			props: { job: snap({ status: 'queued', progress: 0, attempts: 1, maxAttempts: 3 }), locale: 'en' },
		});
		flushSync();
		expect(target.querySelector('.sj-progress__stage')!.textContent).toBe('Retrying (attempt 2 of 3)');
	});
});

describe('JobProgress of a scheduled job', () => {
	it('says "Scheduled for <time>" while a queued job waits for its start, in the locale, then the status', () => {
		const at = new Date(Date.now() + 3_600_000);
		const props = $state({
			job: snap({ status: 'queued', progress: 0, availableAt: at }) as JobSnapshot,
			locale: 'pt-BR',
		});
		app = mount(JobProgress, { target: host(), props });
		flushSync();
		const expected = messagesFor('pt-BR').scheduledFor.replace('{time}', startTime(at, 'pt-BR'));
		expect(target.querySelector('[role="progressbar"]')!.getAttribute('aria-valuetext')).toBe(expected);
		props.job = snap({ status: 'queued', progress: 0, availableAt: new Date(Date.now() - 1000) });
		flushSync();
		expect(target.textContent).toContain(messagesFor('pt-BR').status.queued);
	});
});

describe('JobStatusBadge', () => {
	const cases: [JobSnapshotStatus, string, boolean][] = [
		['queued', 'Queued', false],
		['running', 'Running', false],
		['done', 'Done', false],
		['failed', 'Failed', true],
		['cancelled', 'Cancelled', false],
	];
	for (const [status, text, highlighted] of cases) {
		it(`${status} reads "${text}"${highlighted ? ' and is highlighted' : ' and is not highlighted as a failure'}`, () => {
			app = mount(JobStatusBadge, { target: host(), props: { status, locale: 'en' } });
			flushSync();
			const badge = target.querySelector('.sj-badge')!;
			expect(badge.textContent?.trim()).toBe(text);
			expect(badge.getAttribute('data-status')).toBe(status);
			expect(badge.classList.contains('sj-badge--failed')).toBe(highlighted);
		});
	}
});

describe('CancelButton', () => {
	it('is gone once the job ended, and says "Cancelling…" while cancelling', () => {
		const job = $state({ isTerminal: false, cancelling: false, cancel: () => (job.cancelling = true) });
		app = mount(CancelButton, { target: host(), props: { job, locale: 'en' } });
		flushSync();
		const button = target.querySelector('button')!;
		expect(button.disabled).toBe(false);
		expect(button.getAttribute('type')).toBe('button');
		button.click();
		flushSync();
		expect(button.textContent?.trim()).toBe('Cancelling…');
		expect(button.getAttribute('aria-busy')).toBe('true');
		job.isTerminal = true;
		job.cancelling = false;
		flushSync();
		expect(target.querySelector('button')).toBeNull();
	});
});

describe('CancelButton and focus', () => {
	it('moves focus to the status after the cancelled job ends, instead of losing it to the body', () => {
		const status = document.createElement('span');
		status.tabIndex = -1;
		document.body.appendChild(status);
		try {
			const job = $state({ isTerminal: false, cancelling: false, cancel: () => (job.cancelling = true) });
			app = mount(CancelButton, { target: host(), props: { job, locale: 'en', focusAfter: () => status } });
			flushSync();
			const button = target.querySelector('button')!;
			button.focus();
			button.click();
			flushSync();
			job.isTerminal = true;
			job.cancelling = false;
			flushSync();
			expect(target.querySelector('button')).toBeNull();
			expect(document.activeElement).toBe(status);
		} finally {
			status.remove();
		}
	});
});

describe('JobStrip', () => {
	it('lists what is queued or running, leaves terminal rows out, and says so when empty', () => {
		const props = $state({
			jobs: [
				snap({ id: 'a', status: 'running', progress: 20, stage: 'table' }),
				snap({ id: 'b', status: 'done', progress: 100 }),
				snap({ id: 'c', status: 'queued', attempts: 0 }),
			] as JobSnapshot[],
			locale: 'en',
		});
		app = mount(JobStrip, { target: host(), props });
		flushSync();
		const section = target.querySelector('section')!;
		expect(section.getAttribute('aria-label')).toBe('Queued or running');
		expect([...target.querySelectorAll('li')].map((li) => li.dataset['jobId'])).toEqual(['a', 'c']);
		expect(target.querySelectorAll('[role="progressbar"]')).toHaveLength(2);
		props.jobs = [];
		flushSync();
		expect(target.querySelector('li')).toBeNull();
		expect(target.querySelector('.sj-strip__empty')?.textContent).toBe('Nothing queued or running.');
		props.locale = 'pt-BR';
		flushSync();
		expect(target.querySelector('.sj-strip__empty')?.textContent).toBe('Nada na fila nem em execução.');
	});
});

describe('messages', () => {
	it('any Portuguese tag reads as pt-BR, anything else as en', () => {
		expect(resolveJobLocale('pt-BR')).toBe('pt-BR');
		expect(resolveJobLocale('pt')).toBe('pt-BR');
		expect(resolveJobLocale('PT_pt')).toBe('pt-BR');
		expect(resolveJobLocale('en-GB')).toBe('en');
		expect(resolveJobLocale('de')).toBe('en');
	});

	it('without a tag it follows navigator.language in the browser', () => {
		const original = Object.getOwnPropertyDescriptor(window.navigator, 'language');
		Object.defineProperty(window.navigator, 'language', { value: 'pt-BR', configurable: true });
		try {
			expect(resolveJobLocale()).toBe('pt-BR');
			expect(messagesFor().status.cancelled).toBe('Cancelado');
		} finally {
			if (original) Object.defineProperty(window.navigator, 'language', original);
			else delete (window.navigator as { language?: string }).language;
		}
		expect(resolveJobLocale()).toBe(resolveJobLocale(window.navigator.language));
	});

	it('every locale names every status and button', () => {
		for (const tag of ['en', 'pt-BR']) {
			const m = messagesFor(tag);
			for (const status of ['queued', 'running', 'done', 'failed', 'cancelled'] as const)
				expect(m.status[status]).toMatch(/\S/);
			for (const key of [
				'loading',
				'cancel',
				'cancelling',
				'progress',
				'inFlight',
				'nothingInFlight',
				'loadMore',
			] as const)
				expect(m[key]).toMatch(/\S/);
		}
	});
});
