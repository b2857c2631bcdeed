/**
 * Kinds and handlers the in-process worker tests run (Node side; the Deno
 * function's own kinds live in functions/jobs-worker/handlers.ts).
 */
import { z } from 'zod';
import { defineJobKind } from '../../../src/lib/store/job-kind.ts';
import { PhasePlan } from '../../../src/lib/toolkit/phase-plan.ts';
import { defineJobHandler } from '../../../src/lib/worker/job-handler.ts';
import { JobUserError } from '../../../src/lib/worker/job-user-error.ts';

import { delay as sleep } from '../../../src/lib/toolkit/delay.ts';

export { sleep };

/** Takes `seconds` by its plan (one second per 1000 units of size = seconds * 1000). */
export const sized = defineJobKind({
	name: 'test.sized',
	params: z.object({ seconds: z.number().min(0) }),
	plan: PhasePlan.fromSeconds({ work: 0 }, { perKilochar: { work: 1 } }),
});
export const sizedHandler = defineJobHandler(sized, () => crypto.randomUUID(), {
	size: ({ params }) => params.seconds * 1000,
});

/** Always throws something unexpected. */
export const flaky = defineJobKind({
	name: 'test.flaky',
	params: z.object({}),
	plan: PhasePlan.fromSeconds({ work: 0.01 }),
});
export const flakyAttempts: { id: string; attempt: number; at: number }[] = [];
export const flakyHandler = defineJobHandler(flaky, ({ job, attempt }) => {
	flakyAttempts.push({ id: job.id, attempt, at: Date.now() });
	throw new Error(`boom: internal detail at attempt ${attempt}`);
});

/** Fails the expected way, with a sentence per language. */
export const picky = defineJobKind({
	name: 'test.picky',
	params: z.object({ filename: z.string() }),
	plan: PhasePlan.fromSeconds({ work: 0.01 }),
});
export const pickyHandler = defineJobHandler(picky, ({ params }) => {
	throw new JobUserError(
		{ en: `I could not read ${params.filename}.`, 'pt-BR': `Não consegui ler ${params.filename}.` },
		{ errorCode: 'unreadable_file' },
	);
});

/** Fails the expected way with the code it is given; its kind declares empty_file permanent. */
export const fussy = defineJobKind({
	name: 'test.fussy',
	params: z.object({ code: z.string() }),
	plan: PhasePlan.fromSeconds({ work: 0.01 }),
	permanentErrors: ['empty_file'],
});
export const fussyHandler = defineJobHandler(fussy, ({ params }) => {
	throw new JobUserError({ en: 'The file cannot be read.' }, { errorCode: params.code });
});

/** Ignores its signal and never ticks: finishes on its own after `ms`. */
export const deaf = defineJobKind({
	name: 'test.deaf',
	params: z.object({ ms: z.number() }),
	plan: PhasePlan.fromSeconds({ work: 0.01 }),
});
export const deafHandler = defineJobHandler(deaf, async ({ params }) => {
	await sleep(params.ms);
	return crypto.randomUUID();
});

/** Waits for its signal without ever reporting: only the worker's own heartbeat can tell it about a cancel. */
export const quiet = defineJobKind({
	name: 'test.quiet',
	params: z.object({}),
	plan: PhasePlan.fromSeconds({ work: 1 }),
});
export const quietAborts: { id: string; reason: unknown }[] = [];
export const quietHandler = defineJobHandler(quiet, ({ job, signal }) => {
	return new Promise<never>((_, reject) =>
		signal.addEventListener(
			'abort',
			() => {
				quietAborts.push({ id: job.id, reason: signal.reason });
				reject(signal.reason);
			},
			{ once: true },
		),
	);
});

/** Reads its payload and params; a strict schema for the "params no longer valid" case. */
export const strict = defineJobKind({
	name: 'test.strict',
	params: z.object({ pages: z.number().int().positive() }),
	plan: PhasePlan.fromSeconds({ read: 0.01 }),
});
export const strictHandler = defineJobHandler(strict, async ({ params, payload, tracker }) => {
	await tracker.run('read', () => sleep(1));
	return payload && params.pages ? crypto.randomUUID() : null;
});

/** Kinds that declare no plan: the worker fits one from history or uses the one-phase default. */
export const planless = defineJobKind({ name: 'test.planless', params: z.object({}) });
export const planlessHandler = defineJobHandler(planless, async ({ tracker }) => {
	await tracker.run('work', () => sleep(5));
});

/** Declares 30 s of work whatever its size: does not fit a nearly spent wall clock even before it is claimed. */
export const long = defineJobKind({
	name: 'test.long',
	params: z.object({}),
	plan: PhasePlan.fromSeconds({ work: 30 }),
});
export const longHandler = defineJobHandler(long, () => crypto.randomUUID());

/** Fails the expected way, with a sentence far over the 2,000-character limit (a long exception message quoted in it). */
export const verbose = defineJobKind({
	name: 'test.verbose',
	params: z.object({ length: z.number().int().positive() }),
	plan: PhasePlan.fromSeconds({ work: 0.01 }),
});
export const verboseHandler = defineJobHandler(verbose, ({ params }) => {
	throw new JobUserError(`I could not read the file: ${'x'.repeat(params.length)}`, { errorCode: 'unreadable_file' });
});

/** Finishes its work but returns something that is not a row id. */
export const badResult = defineJobKind({
	name: 'test.bad-result',
	params: z.object({ result: z.string() }),
	plan: PhasePlan.fromSeconds({ work: 0.01 }),
});
export const badResultRuns: string[] = [];
export const badResultHandler = defineJobHandler(badResult, ({ job, params }) => {
	badResultRuns.push(job.id);
	return params.result;
});

export const allHandlers = [
	longHandler,
	sizedHandler,
	flakyHandler,
	pickyHandler,
	fussyHandler,
	deafHandler,
	quietHandler,
	strictHandler,
	planlessHandler,
	verboseHandler,
	badResultHandler,
];
