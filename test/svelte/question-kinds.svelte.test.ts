/**
 * JobQuestion answers each kind of question a handler asks with zod's common
 * types, rendered from the JSON Schema `z.toJSONSchema` writes: the right
 * input, labelled and described by what an answer must be; a value out of
 * range or off its pattern refused before any request with a sentence naming
 * the bound; the typed value sent (a number as a number, a date as the ISO
 * string the schema's format says, a list as an array).
 */
import { flushSync, mount, unmount } from 'svelte';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import JobQuestion from '../../src/lib/svelte/components/JobQuestion.svelte';
import { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import { AskingSource, asked } from './fixtures/asking.ts';
import { snap } from './fixtures/sources.ts';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;
let job: WatchedJob | null = null;

afterEach(() => {
	if (app) unmount(app);
	app = null;
	job?.stop();
	job = null;
	target?.remove();
});

/** JobQuestion mounted on a job that has just started waiting on a question whose answer is `schema`. */
async function asking(schema: z.ZodType, prompt: string, locale = 'en') {
	const source = new AskingSource();
	job = new WatchedJob(source, 'job-1');
	void job.start();
	target = document.createElement('div');
	document.body.appendChild(target);
	app = mount(JobQuestion, { target, props: { job, locale } });
	await source.stream.push(snap({ status: 'waiting' }));
	source.questionCalls[0]!.answer.resolve(asked(z.toJSONSchema(schema) as Record<string, unknown>, prompt));
	await source.questionCalls[0]!.answer.promise;
	flushSync();
	return source;
}

function type(input: HTMLInputElement, value: string) {
	input.value = value;
	input.dispatchEvent(new Event('input', { bubbles: true }));
	flushSync();
}

function send() {
	target.querySelector('form')!.requestSubmit();
	flushSync();
}

/** The text of the elements `el`'s aria-describedby names. */
function description(el: Element): string {
	return (el.getAttribute('aria-describedby') ?? '')
		.split(/\s+/)
		.filter(Boolean)
		.map((id) => document.getElementById(id)!.textContent!.trim())
		.join(' | ');
}

const alert = () => target.querySelector('[role="alert"]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null;

describe('JobQuestion, for each kind of answer', () => {
	it('a number with a range: a labelled number input with its bounds; 11 is refused naming "at most 10"; 7.5 is sent as a number', async () => {
		const source = await asking(z.number().min(1).max(10), 'How sure are you?');
		const input = target.querySelector<HTMLInputElement>('input[type="number"]')!;
		expect(input.labels![0]!.textContent).toBe('How sure are you?');
		expect([input.min, input.max, input.step]).toEqual(['1', '10', 'any']);
		expect(description(input)).toBe('A number: at least 1, at most 10.');
		type(input, '11');
		send();
		expect(source.answerCalls).toEqual([]);
		expect(alert()).toBe('This answer was not accepted (answer): A number: at least 1, at most 10.');
		expect(input.getAttribute('aria-invalid')).toBe('true');
		expect(description(input)).toContain('This answer was not accepted');
		type(input, '7.5');
		expect(alert()).toBeNull();
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual([7.5]);
	});

	it('an integer: step 1, no bound zod writes for every int shown; 2.5 is refused as "A whole number", 3 is sent as 3', async () => {
		const source = await asking(z.int().positive(), 'Quantas páginas?', 'pt-BR');
		const input = target.querySelector<HTMLInputElement>('input[type="number"]')!;
		expect(input.step).toBe('1');
		expect(input.max).toBe('');
		expect(description(input)).toBe('Um número inteiro: maior que 0.');
		type(input, '2.5');
		send();
		expect(source.answerCalls).toEqual([]);
		expect(alert()).toBe('Esta resposta não foi aceita (answer): Um número inteiro: maior que 0.');
		type(input, '3');
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual([3]);
		expect(typeof source.answerCalls[0]!.value).toBe('number');
	});

	it('a date: a date input, sent as the YYYY-MM-DD string format "date" says; nothing chosen is refused', async () => {
		const source = await asking(z.iso.date(), 'From which day?');
		const input = target.querySelector<HTMLInputElement>('input[type="date"]')!;
		expect(input.labels![0]!.textContent).toBe('From which day?');
		expect(description(input)).toBe('A date (year-month-day).');
		send();
		expect(source.answerCalls).toEqual([]);
		expect(alert()).toBe('This answer was not accepted (answer): A date (year-month-day).');
		type(input, '2026-12-01');
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual(['2026-12-01']);
	});

	it('a date and time: a datetime-local input, sent as the ISO string (UTC) format "date-time" says', async () => {
		const source = await asking(z.iso.datetime(), 'When?');
		const input = target.querySelector<HTMLInputElement>('input[type="datetime-local"]')!;
		type(input, '2026-12-01T14:30');
		send();
		const sent = source.answerCalls.map((c) => c.value);
		expect(sent).toEqual([new Date('2026-12-01T14:30').toISOString()]);
		expect(z.iso.datetime().safeParse(sent[0]).success).toBe(true);
	});

	it('one of several (a union of number literals): radios in a fieldset whose legend is the question; the literal is sent with its type', async () => {
		const source = await asking(z.union([z.literal(1), z.literal(2), z.literal(3)]), 'How many columns?');
		const fieldset = target.querySelector('fieldset')!;
		expect(fieldset.querySelector('legend')!.textContent).toBe('How many columns?');
		expect(description(fieldset)).toBe('Choose one.');
		const radios = [...fieldset.querySelectorAll<HTMLInputElement>('input[type="radio"]')];
		expect(radios.map((r) => r.parentElement!.textContent!.trim())).toEqual(['1', '2', '3']);
		send();
		expect(source.answerCalls).toEqual([]);
		expect(alert()).toBe('This answer was not accepted (answer): Choose one.');
		radios[1]!.click();
		flushSync();
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual([2]);
	});

	it('one of several (an enum of strings): radios, the chosen string sent', async () => {
		const source = await asking(z.enum(['low', 'high']), 'Which quality?');
		const radios = [...target.querySelectorAll<HTMLInputElement>('fieldset input[type="radio"]')];
		radios[0]!.click();
		flushSync();
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual(['low']);
	});

	it('several of several (an array of an enum): checkboxes; fewer than the minimum refused naming it, the ticked ones sent in order', async () => {
		const source = await asking(
			z
				.array(z.enum(['a', 'b', 'c']))
				.min(2)
				.max(3),
			'Which sections?',
		);
		const fieldset = target.querySelector('fieldset')!;
		expect(fieldset.querySelector('legend')!.textContent).toBe('Which sections?');
		expect(description(fieldset)).toBe('Choose from 2 to 3.');
		const boxes = [...fieldset.querySelectorAll<HTMLInputElement>('input[type="checkbox"]')];
		expect(boxes.map((b) => b.parentElement!.textContent!.trim())).toEqual(['a', 'b', 'c']);
		boxes[2]!.click();
		flushSync();
		send();
		expect(source.answerCalls).toEqual([]);
		expect(alert()).toBe('This answer was not accepted (answer): Choose from 2 to 3.');
		boxes[0]!.click();
		flushSync();
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual([['a', 'c']]);
	});

	it('nothing ticked of an optional list is sent as an empty array', async () => {
		const source = await asking(z.array(z.enum(['x', 'y'])), 'Anything else?');
		expect(description(target.querySelector('fieldset')!)).toBe('Choose any of them.');
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual([[]]);
	});

	it('a text with a pattern: the hint says what the handler described; a value off the pattern is refused with it', async () => {
		const source = await asking(
			z
				.string()
				.regex(/^[A-Z]{3}$/)
				.describe('three capital letters, e.g. BRL'),
			'Currency?',
		);
		const input = target.querySelector<HTMLInputElement>('input[type="text"]')!;
		expect(description(input)).toBe('Text: three capital letters, e.g. BRL.');
		type(input, 'brl');
		send();
		expect(source.answerCalls).toEqual([]);
		expect(alert()).toBe('This answer was not accepted (answer): Text: three capital letters, e.g. BRL.');
		type(input, 'BRL');
		send();
		expect(source.answerCalls.map((c) => c.value)).toEqual(['BRL']);
	});

	it('a text with an undescribed pattern names the pattern itself, in Portuguese', async () => {
		const source = await asking(z.string().regex(/^\d{5}-\d{3}$/), 'CEP?', 'pt-BR');
		const input = target.querySelector<HTMLInputElement>('input[type="text"]')!;
		type(input, '123');
		send();
		expect(source.answerCalls).toEqual([]);
		expect(alert()).toBe('Esta resposta não foi aceita (answer): Texto: no formato ^\\d{5}-\\d{3}$.');
	});
});
