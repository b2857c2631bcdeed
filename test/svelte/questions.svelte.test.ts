import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import JobProgress from '../../src/lib/svelte/components/JobProgress.svelte';
import JobQuestion from '../../src/lib/svelte/components/JobQuestion.svelte';
import TryAgainButton from '../../src/lib/svelte/components/TryAgainButton.svelte';
import { InvalidJobInputError, NotRetryableError } from '../../src/lib/errors.ts';
import type { AskedQuestion } from '../../src/lib/store/questions.ts';
import { AskingSource, asked } from './fixtures/asking.ts';
import type { JobSnapshot } from '../../src/lib/svelte/types.ts';
import { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import { snap } from './fixtures/sources.ts';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;
let job: WatchedJob | null = null;

function host(): HTMLElement {
	target = document.createElement('div');
	document.body.appendChild(target);
	return target;
}

afterEach(() => {
	if (app) unmount(app);
	app = null;
	job?.stop();
	job = null;
	target?.remove();
});

/** A watched job that has just started waiting on `question`, with JobQuestion mounted on it. */
async function waitingOn(question: AskedQuestion, props: Record<string, unknown> = {}) {
	const source = new AskingSource();
	job = new WatchedJob(source, 'job-1');
	void job.start();
	app = mount(JobQuestion, { target: host(), props: { job, locale: 'en', ...props } });
	await source.stream.push(snap({ status: 'waiting' }));
	expect(source.questionCalls.map((c) => c.id)).toEqual(['job-1']);
	source.questionCalls[0]!.answer.resolve(question);
	await source.questionCalls[0]!.answer.promise;
	flushSync();
	return source;
}

describe('JobQuestion', () => {
	it('a waiting job shows its question as a choice from the enum; the chosen value is sent and the form goes once the job is queued again', async () => {
		const source = await waitingOn(asked({ type: 'string', enum: ['en', 'pt-BR'] }), {
			labels: { en: 'English', 'pt-BR': 'Português' },
		});
		const form = target.querySelector('form')!;
		expect(form.getAttribute('aria-labelledby')).toBeTruthy();
		expect(target.textContent).toContain('Which language is it?');
		const radios = [...target.querySelectorAll<HTMLInputElement>('input[type="radio"]')];
		expect(radios.map((r) => r.parentElement!.textContent!.trim())).toEqual(['English', 'Português']);
		radios[1]!.click();
		flushSync();
		target.querySelector<HTMLButtonElement>('button[type="submit"]')!.click();
		flushSync();
		expect(source.answerCalls.map((c) => [c.id, c.value])).toEqual([['job-1', 'pt-BR']]);
		expect(target.querySelector('button[type="submit"]')!.getAttribute('aria-busy')).toBe('true');
		source.answerCalls[0]!.answer.resolve(snap({ status: 'queued' }));
		await source.answerCalls[0]!.answer.promise;
		await Promise.resolve();
		flushSync();
		expect(job!.status).toBe('queued');
		expect(target.querySelector('form')).toBeNull();
	});

	it('a refusal from the database is shown with the field it names, in the locale, and the question stays', async () => {
		const source = await waitingOn(asked({ type: 'boolean' }, 'Tem certeza?'), { locale: 'pt-BR' });
		const labels = [...target.querySelectorAll('label')].map((l) => l.textContent!.trim());
		expect(labels).toEqual(['Sim', 'Não']);
		target.querySelectorAll<HTMLInputElement>('input[type="radio"]')[0]!.click();
		flushSync();
		target.querySelector('form')!.requestSubmit();
		flushSync();
		expect(source.answerCalls.map((c) => c.value)).toEqual([true]);
		source.answerCalls[0]!.answer.reject(
			new InvalidJobInputError('answer must be boolean; got string', { field: 'answer' }),
		);
		await source.answerCalls[0]!.answer.promise.catch(() => {});
		await Promise.resolve();
		flushSync();
		const alert = target.querySelector('[role="alert"]')!;
		expect(alert.textContent).toContain('Esta resposta não foi aceita (answer):');
		expect(alert.textContent).toContain('answer must be boolean');
		expect(target.querySelector('form')).not.toBeNull();
	});

	it('a text answer the schema refuses is refused before any request, naming the field', async () => {
		const source = await waitingOn(asked({ type: 'string', minLength: 1, maxLength: 50 }, 'Why?'));
		const input = target.querySelector<HTMLInputElement>('input[type="text"]')!;
		expect(input.labels![0]!.textContent).toBe('Why?');
		target.querySelector('form')!.requestSubmit();
		flushSync();
		expect(source.answerCalls).toEqual([]);
		expect(target.querySelector('[role="alert"]')!.textContent).toContain('(answer)');
		expect(input.getAttribute('aria-invalid')).toBe('true');
		input.value = 'Because the scan is blurry';
		input.dispatchEvent(new Event('input', { bubbles: true }));
		flushSync();
		target.querySelector('form')!.requestSubmit();
		flushSync();
		expect(source.answerCalls.map((c) => c.value)).toEqual(['Because the scan is blurry']);
	});

	it('the bar of a job waiting on its question says it waits for the answer, in the locale', async () => {
		await waitingOn(asked({ type: 'boolean' }));
		const bar = mount(JobProgress, { target: host(), props: { job: job!, locale: 'pt-BR' } });
		flushSync();
		expect(target.querySelector('[role="progressbar"]')!.getAttribute('aria-valuetext')).toContain(
			'aguardando a sua resposta',
		);
		unmount(bar);
	});

	it('a job waiting for its children asks and shows no question', async () => {
		const source = new AskingSource();
		job = new WatchedJob(source, 'job-1');
		void job.start();
		app = mount(JobQuestion, { target: host(), props: { job } });
		await source.stream.push(snap({ status: 'waiting' }));
		source.questionCalls[0]!.answer.resolve(null);
		await source.questionCalls[0]!.answer.promise;
		flushSync();
		expect(job.question).toBeNull();
		expect(target.querySelector('form')).toBeNull();
	});
});

describe('TryAgainButton', () => {
	it('shows on a failed job only; the click tries it again once and hands the new job over', async () => {
		const source = new AskingSource();
		job = new WatchedJob(source, 'job-1', snap({ status: 'running' }));
		const retried: JobSnapshot[] = [];
		app = mount(TryAgainButton, {
			target: host(),
			props: { job, locale: 'pt-BR', onretried: (j: JobSnapshot) => retried.push(j) },
		});
		flushSync();
		expect(target.querySelector('button')).toBeNull();
		void job.start();
		await source.stream.push(snap({ status: 'failed', error: 'Falhou.', finishedAt: new Date() }));
		flushSync();
		const button = target.querySelector('button')!;
		expect(button.textContent!.trim()).toBe('Tentar de novo');
		button.click();
		button.click();
		flushSync();
		expect(source.tryAgainCalls.map((c) => c.id)).toEqual(['job-1']);
		expect(button.textContent!.trim()).toBe('Começando de novo…');
		const again = snap({ id: 'job-2', status: 'queued' });
		source.tryAgainCalls[0]!.answer.resolve(again);
		await source.tryAgainCalls[0]!.answer.promise;
		await Promise.resolve();
		flushSync();
		expect(retried).toEqual([again]);
	});

	it('a refusal is announced next to the button', async () => {
		const source = new AskingSource();
		job = new WatchedJob(source, 'job-1', snap({ status: 'cancelled', finishedAt: new Date() }));
		app = mount(TryAgainButton, { target: host(), props: { job, locale: 'en' } });
		flushSync();
		target.querySelector('button')!.click();
		flushSync();
		// Without onretried too, the click tries it again.
		expect(source.tryAgainCalls.map((c) => c.id)).toEqual(['job-1']);
		source.tryAgainCalls[0]!.answer.reject(new NotRetryableError('job job-1 is running'));
		await source.tryAgainCalls[0]!.answer.promise.catch(() => {});
		await Promise.resolve();
		flushSync();
		expect(target.querySelector('[role="alert"]')!.textContent).toBe(
			'It could not be started again: job job-1 is running',
		);
	});
});
