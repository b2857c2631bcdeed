import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import JobsDashboard from '../../src/lib/svelte/dashboard/JobsDashboard.svelte';
import type {
	DashboardActionResult,
	DashboardJob,
	JobsDashboardData,
} from '../../src/lib/svelte/dashboard/dashboard-data.ts';
import type { JobTimelineEntry } from '../../src/lib/store/job-timeline.ts';
import type { KindOverview } from '../../src/lib/store/store-options.ts';
import type { DashboardEnhance } from '../../src/lib/svelte/dashboard/jobs-dashboard.svelte.ts';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

const FAILED_ID = 'a0000001-1111-7000-8000-0000a0000001';
const NEW_ID = 'a0000001-2222-7000-8000-0000b0000002';

function kind(name: string, over: Partial<KindOverview> = {}): KindOverview {
	return {
		kind: name,
		counts: { queued: 0, running: 0, waiting: 0, done: 0, failed: 0, cancelled: 0 },
		doneLastHour: 0,
		failedLastHour: 0,
		pausedAt: null,
		rateLimit: null,
		maxRunning: null,
		maxRunningPerKey: null,
		...over,
	};
}

const failedJob: DashboardJob = {
	id: FAILED_ID,
	kind: 'export',
	status: 'failed',
	error: 'The export ran out of disk.',
	errorCode: 'disk_full',
	attempts: 3,
	maxAttempts: 3,
	ownerId: null,
	createdAt: '2026-12-01T14:00:00.000Z',
	startedAt: '2026-12-01T14:00:01.000Z',
	finishedAt: '2026-12-01T14:00:09.000Z',
	retryOf: null,
};

function entry(over: Partial<Omit<JobTimelineEntry, 'at'>> & { at: string }): JobTimelineEntry {
	return {
		source: 'transition',
		event: 'queued',
		attempt: 1,
		message: null,
		fields: null,
		actor: null,
		userFacing: false,
		...over,
		at: new Date(over.at),
	};
}

function data(over: Partial<JobsDashboardData> = {}): JobsDashboardData {
	return {
		kinds: [
			kind('analyse', {
				counts: { queued: 3, running: 1, waiting: 0, done: 12, failed: 0, cancelled: 1 },
				doneLastHour: 7,
			}),
			kind('export', {
				counts: { queued: 0, running: 0, waiting: 0, done: 0, failed: 1, cancelled: 0 },
				pausedAt: new Date('2026-12-01T14:30:00Z'),
			}),
			kind('mail', { rateLimit: { starts: 10, perMs: 60_000 } }),
		],
		failed: [failedJob],
		moreFailed: false,
		filter: {},
		selected: null,
		actions: [
			'cancel',
			'tryAgain',
			'replay',
			'cancelMany',
			'pause',
			'resume',
			'setRateLimit',
			'clearRateLimit',
			'deleteFinished',
		],
		generatedAt: '2026-12-01T15:00:00.000Z',
		...over,
	};
}

function show(props: {
	data: JobsDashboardData;
	form?: DashboardActionResult | null;
	locale?: string;
	enhance?: DashboardEnhance;
}) {
	target = document.createElement('div');
	document.body.appendChild(target);
	const state = $state(props);
	app = mount(JobsDashboard, { target, props: state });
	flushSync();
	return state;
}

const button = (name: string) =>
	[...target.querySelectorAll('button')].find((b) => b.textContent?.trim() === name) as HTMLButtonElement | undefined;

const rowOf = (kindName: string) => target.querySelector(`[data-testid=dashboard-queues] tr[data-kind="${kindName}"]`)!;

describe('JobsDashboard queues', () => {
	it('lays the kinds out as a table with column and row headers, counts by status and the last hour', () => {
		show({ data: data() });
		const headers = [...target.querySelectorAll('[data-testid=dashboard-queues] thead th')].map((th) => th.textContent);
		expect(headers).toEqual([
			'Kind',
			'Queued',
			'Running',
			'Waiting',
			'Done',
			'Failed',
			'Cancelled',
			'Done, last hour',
			'Failed, last hour',
			'At most running',
			'State',
			'Rate limit',
			'Actions',
		]);
		const analyse = rowOf('analyse');
		expect(analyse.querySelector('th[scope=row]')!.textContent).toBe('analyse');
		expect(analyse.querySelector('[data-status=queued]')!.textContent).toBe('3');
		expect([...analyse.querySelectorAll('td')].map((td) => td.textContent)[6]).toBe('7');
	});

	it('shows each kind’s rate limit with a labelled form to set it (filled with the current one) and, when set, to remove it', () => {
		show({ data: data() });
		expect(rowOf('mail').querySelector('[data-testid=kind-rate]')!.textContent).toBe('10 per 60 s');
		expect(rowOf('analyse').querySelector('[data-testid=kind-rate]')!.textContent).toBe('none');
		const set = button('Set rate limit of mail')!.form!;
		expect(set.getAttribute('action')).toBe('?/setRateLimit');
		const field = (name: string) => set.querySelector<HTMLInputElement>(`input[name=${name}]`)!;
		expect([field('kind').value, field('starts').value, field('perSeconds').value]).toEqual(['mail', '10', '60']);
		expect(field('starts').labels![0]!.textContent!.trim()).toMatch(/^Starts/);
		expect(field('perSeconds').labels![0]!.textContent!.trim()).toMatch(/^per seconds/);
		expect(button('Remove rate limit of mail')!.form!.getAttribute('action')).toBe('?/clearRateLimit');
		expect(button('Remove rate limit of analyse'), 'nothing to remove').toBeUndefined();
		expect(rowOf('analyse').querySelector<HTMLInputElement>('input[name=starts]')!.value).toBe('');
	});

	it('the tables scroll sideways inside a region the keyboard reaches, named by its section', () => {
		show({ data: data() });
		const region = target.querySelector('[data-testid=dashboard-queues] .sj-scroll')!;
		expect([region.getAttribute('role'), region.getAttribute('tabindex'), region.getAttribute('aria-label')]).toEqual([
			'region',
			'0',
			'Queues',
		]);
	});

	it('says which kinds are paused or rate-limited, and offers resume for a paused kind and pause for the others', () => {
		show({ data: data() });
		expect(rowOf('export').querySelector('[data-testid=kind-state]')!.textContent).toBe('Paused');
		expect(rowOf('mail').querySelector('[data-testid=kind-state]')!.textContent).toBe('Rate-limited (10 per 60 s)');
		expect(rowOf('analyse').querySelector('[data-testid=kind-state]')!.textContent).toBe('Active');
		expect(button('Resume export')).toBeDefined();
		expect(button('Pause export')).toBeUndefined();
		expect(button('Pause analyse')).toBeDefined();
		expect(button('Cancel queued analyse'), 'only kinds with queued jobs').toBeDefined();
		expect(button('Cancel queued mail')).toBeUndefined();
	});

	it('posts each action as a plain form to the named action, keeping the page query, with the kind as a field', () => {
		show({ data: data({ filter: { kind: 'export' } }) });
		const form = button('Pause analyse')!.form!;
		expect(form.method).toBe('post');
		expect(form.getAttribute('action')).toBe('?kind=export&/pause');
		expect(Object.fromEntries(new FormData(form))).toEqual({ kind: 'analyse' });
	});
});

describe('JobsDashboard failed jobs', () => {
	it('shows the sentence the user saw and its code, with a named button to try the job again', () => {
		show({ data: data() });
		const row = target.querySelector(`[data-testid=dashboard-failed] tr[data-job="${FAILED_ID}"]`)!;
		expect(row.querySelector('[data-testid=failed-sentence]')!.textContent).toBe('The export ran out of disk.');
		expect(row.textContent).toContain('disk_full');
		const again = button('Try job a0000001 again')!;
		expect(again.form!.getAttribute('action')).toBe('?/tryAgain');
		expect(Object.fromEntries(new FormData(again.form!))).toEqual({ id: FAILED_ID });
		expect(row.querySelector('a')!.getAttribute('href')).toBe(`?job=${FAILED_ID}`);
		expect(row.querySelector('a')!.getAttribute('aria-label')).toBe('Open job a0000001');
	});

	it('sends the filter with the bulk replay, asks when for the delete, and fills the filter form from it', () => {
		show({ data: data({ filter: { kind: 'export', errorCode: 'disk_full', from: '2026-12-01T00:00:00.000Z' } }) });
		const replay = button('Replay matching failed jobs')!.form!;
		expect(Object.fromEntries(new FormData(replay))).toEqual({
			kind: 'export',
			errorCode: 'disk_full',
			from: '2026-12-01T00:00:00.000Z',
		});
		const remove = button('Delete finished jobs')!.form!;
		expect(Object.fromEntries(new FormData(remove)), 'the kind, and an end the admin must give').toEqual({
			kind: 'export',
			to: '',
		});
		expect(remove.querySelector('input[name=to]')!.hasAttribute('required')).toBe(true);
		expect(target.textContent).toContain('Done, failed and cancelled export jobs that ended before:');
		const filter = target.querySelector('form[method=GET]') as HTMLFormElement;
		expect(Object.fromEntries(new FormData(filter))).toEqual({
			kind: 'export',
			errorCode: 'disk_full',
			from: '2026-12-01T00:00',
			to: '',
		});
	});

	it('offers only the actions the store has', () => {
		show({ data: data({ actions: ['cancel'] }) });
		expect(target.querySelectorAll('[data-testid=dashboard-queues] button')).toHaveLength(0);
		expect(button('Try job a0000001 again')).toBeUndefined();
		expect(button('Replay matching failed jobs')).toBeUndefined();
	});
});

describe('JobsDashboard after an action', () => {
	it('announces what the action did in a polite live region, with a link to the job a replay made', () => {
		const props = show({ data: data() });
		const region = target.querySelector('[role=status]')!;
		expect(region.getAttribute('aria-live')).toBe('polite');
		expect(region.textContent!.trim()).toBe('');
		props.form = { action: 'tryAgain', ok: true, count: 1, jobId: FAILED_ID, newJobId: NEW_ID };
		flushSync();
		expect(region.textContent).toContain('Job a0000001 queued again as job b0000002.');
		expect(region.querySelector('a')!.getAttribute('href')).toBe(`?job=${NEW_ID}`);
		props.form = { action: 'pause', ok: true, count: 1, kind: 'analyse' };
		flushSync();
		expect(region.textContent!.trim()).toBe('analyse paused: no new job of this kind starts.');
		props.form = { action: 'replay', ok: false, code: 'invalid_input', message: 'to is later than from', field: 'to' };
		flushSync();
		expect(region.textContent!.trim()).toBe('Not done: to is later than from');
	});

	it('speaks Portuguese when asked', () => {
		show({ data: data(), locale: 'pt-BR', form: { action: 'replay', ok: true, count: 4 } });
		expect(target.querySelector('h1')!.textContent).toBe('Trabalhos');
		expect(button('Retomar export')).toBeDefined();
		expect(target.querySelector('[role=status]')!.textContent!.trim()).toBe(
			'4 trabalhos com falha colocados na fila de novo.',
		);
		expect(rowOf('export').querySelector('[data-testid=kind-state]')!.textContent).toBe('Pausada');
	});

	it('with enhance, marks the action busy and holds the other buttons until the update lands', async () => {
		let submit: Parameters<DashboardEnhance>[1];
		let release!: () => void;
		const enhance: DashboardEnhance = (form, onSubmit) => {
			if (form.getAttribute('action')?.endsWith('/pause') && form.querySelector('input')?.value === 'analyse')
				submit = onSubmit;
			return { destroy() {} };
		};
		show({ data: data(), enhance });
		const after = submit!()!;
		flushSync();
		expect(button('Pause analyse')!.getAttribute('aria-busy')).toBe('true');
		expect(button('Resume export')!.disabled).toBe(true);
		const landed = after({ update: () => new Promise<void>((resolve) => (release = resolve)) });
		release();
		await landed;
		flushSync();
		expect(button('Pause analyse')!.getAttribute('aria-busy')).toBe('false');
		expect(button('Resume export')!.disabled).toBe(false);
	});
});

describe('JobsDashboard with a job open', () => {
	it('shows its facts, its timeline in order, and the action its status allows', () => {
		show({
			data: data({
				selected: {
					job: { ...failedJob, retryOf: NEW_ID },
					timeline: [
						entry({ at: '2026-12-01T14:00:00Z', event: 'queued', attempt: 0 }),
						entry({ at: '2026-12-01T14:00:01Z', event: 'claimed' }),
						entry({ at: '2026-12-01T14:00:05Z', source: 'log', event: 'warn', message: 'disk at 99%' }),
						entry({ at: '2026-12-01T14:00:09Z', event: 'failed', message: 'The export ran out of disk.' }),
					],
				},
			}),
		});
		const section = target.querySelector('[data-testid=dashboard-job]')!;
		expect(section.querySelector('h2')!.textContent).toBe('Job a0000001');
		const items = [...section.querySelectorAll('ol li')].map((li) =>
			li
				.textContent!.replace(/^.*?(AM|PM)/, '')
				.replace(/\s+/g, ' ')
				.trim(),
		);
		expect(items).toEqual([
			'Queued',
			'Started attempt 1',
			'Warning attempt 1 disk at 99%',
			'Failed attempt 1 The export ran out of disk.',
		]);
		expect(section.querySelector('ol')!.getAttribute('aria-label')).toBe('Timeline of job a0000001');
		expect(section.textContent).toContain('Tries again');
		expect([...section.querySelectorAll('button')].map((b) => b.textContent!.trim())).toEqual([
			'Try job a0000001 again',
		]);
	});

	it('offers cancel for a job still queued or running, and says when there is no timeline', () => {
		show({ data: data({ selected: { job: { ...failedJob, status: 'running', error: null }, timeline: [] } }) });
		const section = target.querySelector('[data-testid=dashboard-job]')!;
		expect([...section.querySelectorAll('button')].map((b) => b.textContent!.trim())).toEqual(['Cancel job a0000001']);
		expect(section.textContent).toContain('Nothing recorded yet.');
	});
});
