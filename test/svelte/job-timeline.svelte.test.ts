/**
 * <JobTimeline>: an ordered list named for screen readers, oldest entry first,
 * each with its time, its label in the locale, the attempt, and the message.
 */
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import JobTimeline from '../../src/lib/svelte/components/JobTimeline.svelte';
import type { JobTimelineEntry } from '../../src/lib/store/job-timeline.ts';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

function render(props: { entries: JobTimelineEntry[]; locale?: string; label?: string }) {
	target = document.createElement('div');
	document.body.appendChild(target);
	app = mount(JobTimeline, { target, props });
	flushSync();
	return target;
}

const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 18, 0, s));
const entries: JobTimelineEntry[] = [
	{
		at: at(0),
		source: 'transition',
		event: 'queued',
		attempt: 0,
		message: null,
		fields: null,
		actor: 'u1',
		userFacing: false,
	},
	{
		at: at(1),
		source: 'transition',
		event: 'claimed',
		attempt: 1,
		message: null,
		fields: null,
		actor: null,
		userFacing: false,
	},
	{
		at: at(2),
		source: 'log',
		event: 'info',
		attempt: 1,
		message: 'Page 3 read',
		fields: null,
		actor: null,
		userFacing: true,
	},
	{
		at: at(3),
		source: 'transition',
		event: 'cancelled',
		attempt: 1,
		message: 'Not needed.',
		fields: null,
		actor: 'admin-7',
		userFacing: false,
	},
];

describe('JobTimeline', () => {
	it('lists every entry in order, named "Timeline", with times, labels, attempts and who cancelled', () => {
		const el = render({ entries, locale: 'en' });
		const list = el.querySelector('ol')!;
		expect(list.getAttribute('aria-label')).toBe('Timeline');
		const items = [...list.querySelectorAll('li')];
		expect(items.map((li) => li.querySelector('.sj-timeline-event')!.textContent)).toEqual([
			'Queued',
			'Started',
			'Info',
			'Cancelled',
		]);
		expect(items[1]!.textContent).toContain('attempt 1');
		expect(items[2]!.textContent).toContain('Page 3 read');
		expect(items[3]!.textContent).toContain('by admin-7');
		expect(items[0]!.querySelector('time')!.getAttribute('datetime')).toBe('2026-12-01T18:00:00.000Z');
	});

	it('speaks pt-BR', () => {
		const el = render({ entries, locale: 'pt-BR' });
		expect(el.querySelector('ol')!.getAttribute('aria-label')).toBe('Linha do tempo');
		expect(el.querySelector('li:nth-child(2)')!.textContent).toContain('tentativa 1');
		expect(el.querySelector('li:nth-child(2) .sj-timeline-event')!.textContent).toBe('Iniciado');
	});

	it('says so when there is nothing yet', () => {
		const el = render({ entries: [], locale: 'en' });
		expect(el.querySelector('ol')).toBeNull();
		expect(el.textContent).toContain('Nothing recorded yet.');
	});
});
