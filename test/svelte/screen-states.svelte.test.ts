/**
 * Each state of a job reads as itself, in what is seen and what is spoken: a
 * running job nobody hears is "Not responding" in the badge and the bar (not
 * blue "Running", "20%, Analysing"); a retry waiting keeps the last attempt's
 * progress, greyed; a failed or cancelled bar stops where its work stopped
 * instead of filling like a finished one; the strip names stages for people.
 */
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import JobProgress from '../../src/lib/svelte/components/JobProgress.svelte';
import JobStatusBadge from '../../src/lib/svelte/components/JobStatusBadge.svelte';
import JobStrip from '../../src/lib/svelte/components/JobStrip.svelte';
import { JOB_MESSAGES } from '../../src/lib/svelte/messages.ts';
import type { JobSnapshot } from '../../src/lib/svelte/types.ts';
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

const bar = () => target.querySelector('[role="progressbar"]')!;
const fill = () => target.querySelector<HTMLElement>('.sj-progress__fill')!;
const root = () => target.querySelector<HTMLElement>('.sj-progress')!;

describe.each(['en', 'pt-BR'] as const)('a running job whose worker went silent (%s)', (locale) => {
	const m = JOB_MESSAGES[locale];

	it('the badge says "Not responding", not "Running"; it says "Running" again when the worker is heard', () => {
		const props = $state({ status: 'running' as const, silent: true, locale });
		app = mount(JobStatusBadge, { target: host(), props });
		flushSync();
		const badge = target.querySelector('.sj-badge')!;
		expect(badge.textContent?.trim()).toBe(m.silent);
		expect(badge.getAttribute('data-status')).toBe('silent');
		props.silent = false;
		flushSync();
		expect(badge.textContent?.trim()).toBe(m.status.running);
		expect(badge.getAttribute('data-status')).toBe('running');
	});

	it('the bar turns amber and speaks "20%, Not responding" instead of the stage', () => {
		const props = $state({
			job: snap({ status: 'running', progress: 20, stage: 'analyse', workerSilent: true }) as JobSnapshot,
			locale,
			stageLabel: (s: string) => (s === 'analyse' ? 'Analysing' : s),
		});
		app = mount(JobProgress, { target: host(), props });
		flushSync();
		expect(bar().getAttribute('aria-valuetext')).toBe(`20%, ${m.silent}`);
		expect(root().classList.contains('sj-progress--silent')).toBe(true);
		expect(root().dataset['status']).toBe('silent');
		expect(target.querySelector('[role="status"]')?.textContent).toBe(m.notResponding);
		props.job = snap({ status: 'running', progress: 21, stage: 'analyse', workerSilent: false });
		flushSync();
		expect(bar().getAttribute('aria-valuetext')).toBe('21%, Analysing');
		expect(root().classList.contains('sj-progress--silent')).toBe(false);
	});
});

describe('a retry waiting', () => {
	it('keeps the last attempt’s 20%, greyed, while the job waits again; the new attempt starts its own bar', () => {
		const props = $state({
			job: snap({ status: 'running', progress: 20, stage: 'analyse', attempts: 1, maxAttempts: 3 }) as JobSnapshot,
			locale: 'en',
		});
		app = mount(JobProgress, { target: host(), props });
		flushSync();
		expect(fill().style.width).toBe('20%');
		// Reclaimed: the row is queued again (an older row said 0; the bar keeps what it saw).
		props.job = snap({ status: 'queued', progress: 0, attempts: 1, maxAttempts: 3 });
		flushSync();
		expect(fill().style.width, 'not dropped to 0').toBe('20%');
		expect(root().classList.contains('sj-progress--held')).toBe(true);
		expect(bar().getAttribute('aria-valuetext')).toBe('Retrying (attempt 2 of 3)');
		expect(bar().getAttribute('aria-valuenow')).toBe('20');
		expect(target.querySelector('.sj-progress__percent')?.textContent).toBe('20%');
		// Claimed again: attempt 2 draws its own progress, no longer greyed.
		props.job = snap({ status: 'running', progress: 3, stage: 'extract', attempts: 2, maxAttempts: 3 });
		flushSync();
		expect(fill().style.width).toBe('3%');
		expect(root().classList.contains('sj-progress--held')).toBe(false);
	});

	it('a page opened while the retry waits shows the 35% the row kept from the last attempt, greyed', () => {
		app = mount(JobProgress, {
			target: host(),
			props: { job: snap({ status: 'queued', progress: 35, attempts: 1, maxAttempts: 3 }), locale: 'en' },
		});
		flushSync();
		expect(fill().style.width).toBe('35%');
		expect(root().classList.contains('sj-progress--held')).toBe(true);
		expect(bar().getAttribute('aria-valuetext')).toBe('Retrying (attempt 2 of 3)');
	});

	it('a retry whose last attempt got nowhere has nothing to keep: 0, not a made-up number', () => {
		app = mount(JobProgress, {
			target: host(),
			props: { job: snap({ status: 'queued', progress: 0, attempts: 1, maxAttempts: 3 }), locale: 'en' },
		});
		flushSync();
		expect(fill().style.width).toBe('0%');
		expect(root().classList.contains('sj-progress--held')).toBe(false);
	});
});

describe('an ended bar reads as what ended it', () => {
	for (const status of ['failed', 'cancelled'] as const) {
		it(`${status} at 40% stops at 40%, not full width, and shows no percentage`, () => {
			const props = $state({
				job: snap({ status: 'running', progress: 40, stage: 'analyse' }) as JobSnapshot,
				locale: 'en',
			});
			app = mount(JobProgress, { target: host(), props });
			flushSync();
			props.job = snap({ status, progress: 40, stage: 'analyse', error: status === 'failed' ? 'No.' : null });
			flushSync();
			expect(fill().style.width).toBe('40%');
			expect(target.querySelector('.sj-progress__percent')).toBeNull();
			expect(bar().getAttribute('aria-valuetext')).toBe(JOB_MESSAGES.en.status[status]);
		});
	}

	it('failed before any progress: an empty bar', () => {
		app = mount(JobProgress, {
			target: host(),
			props: { job: snap({ status: 'failed', progress: 0, error: 'I can read text only.' }), locale: 'en' },
		});
		flushSync();
		expect(fill().style.width).toBe('0%');
	});

	it('done fills the bar', () => {
		app = mount(JobProgress, { target: host(), props: { job: snap({ status: 'done', progress: 100 }), locale: 'en' } });
		flushSync();
		expect(fill().style.width).toBe('100%');
	});
});

describe('JobStrip', () => {
	it('names the stage for people ("Analisando", not "analyse") and a silent worker in the badge', () => {
		const stages: Record<string, string> = { analyse: 'Analisando' };
		app = mount(JobStrip, {
			target: host(),
			props: {
				jobs: [
					snap({ id: 'a', status: 'running', progress: 20, stage: 'analyse' }),
					snap({ id: 'b', status: 'running', progress: 50, stage: 'analyse', workerSilent: true }),
				],
				locale: 'pt-BR',
				stageLabel: (s: string) => stages[s] ?? s,
			},
		});
		flushSync();
		const rows = [...target.querySelectorAll('li')];
		expect(rows[0]!.querySelector('.sj-progress__stage')?.textContent).toBe('Analisando');
		expect(rows[0]!.querySelector('[role="progressbar"]')!.getAttribute('aria-valuetext')).toBe('20%, Analisando');
		expect(target.textContent).not.toContain('analyse');
		expect(rows[0]!.querySelector('.sj-badge')?.textContent?.trim()).toBe('Em execução');
		expect(rows[1]!.querySelector('.sj-badge')?.textContent?.trim()).toBe('Sem resposta');
	});
});

describe.each(['en', 'pt-BR'] as const)('a queued job held back says what holds it (%s)', (locale) => {
	const m = JOB_MESSAGES[locale];
	const held = (heldBy: 'kind' | 'paused' | 'rate', running: number, maxRunning: number) => {
		app = mount(JobProgress, {
			target: host(),
			props: {
				job: { ...snap({ status: 'queued' }), heldBy: { kind: 'export', heldBy, running, maxRunning } },
				locale,
			},
		});
		flushSync();
		return target.textContent ?? '';
	};

	it('paused by the operator, naming the kind, not a count of running jobs', () => {
		const text = held('paused', 0, 0);
		expect(text).toContain(m.paused.replace('{kind}', 'export'));
		expect(text).not.toContain(m.held.replace('{n}', '0').replace('{kind}', 'export'));
	});

	it('waiting for its rate limit, naming the kind', () => {
		expect(held('rate', 5, 5)).toContain(m.rateLimited.replace('{kind}', 'export'));
	});

	it('a full concurrency limit still says how many run', () => {
		expect(held('kind', 2, 2)).toContain(m.held.replace('{n}', '2').replace('{kind}', 'export'));
	});
});
