/**
 * Properties of answers to a job's question over both adapters (ask, then
 * answer) and of public.job_answer called directly: an answer that does not
 * fit the question's schema is refused with a typed error naming `answer`
 * (or a part of it) and the job keeps waiting with its question open; one
 * that fits is stored as sent and the job is queued again.
 */
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/lib/store/job-store.ts';
import type { AnswerSchema } from '../../src/lib/store/questions.ts';
import { checkProperty, fc } from '../helpers/property.ts';
import { checkStorableJson } from '../../src/lib/store/input-checks.ts';

import {
	anyNumber,
	as,
	expectSqlRefusal,
	expectTypedRefusal,
	hostileString,
	openSurfaces,
	refusedOrStored,
	serviceRole,
	wrongType,
	jsonRoundTrip,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();

const storable = (value: unknown): boolean => {
	try {
		checkStorableJson('answer', value);
		return true;
	} catch {
		return false;
	}
};
const KIND = 'property.answers';

/** The schemas a question is asked with, and the same rules written out here, independently of the database. */
const SCHEMAS: { schema: AnswerSchema; fits: (v: unknown) => boolean }[] = [
	{ schema: { type: 'boolean' }, fits: (v: unknown) => typeof v === 'boolean' },
	{ schema: { type: 'string', enum: ['pt-BR', 'en'] }, fits: (v: unknown) => v === 'pt-BR' || v === 'en' },
	{
		schema: { type: 'integer', minimum: 1, maximum: 10 },
		fits: (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 10,
	},
	{
		schema: { type: 'string', minLength: 1, maxLength: 5 },
		fits: (v: unknown) => typeof v === 'string' && [...v].length >= 1 && [...v].length <= 5,
	},
	{
		schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false },
		fits: (v: unknown) =>
			typeof v === 'object' &&
			v !== null &&
			!Array.isArray(v) &&
			Object.keys(v).length === 1 &&
			typeof (v as { n?: unknown }).n === 'number' &&
			Number.isFinite((v as { n: number }).n),
	},
	{
		schema: { type: 'array', items: { type: 'string' }, maxItems: 2 },
		fits: (v: unknown) => Array.isArray(v) && v.length <= 2 && v.every((x: unknown) => typeof x === 'string'),
	},
];

const answerValue = fc.oneof(
	fc.boolean(),
	fc.constantFrom(
		'pt-BR',
		'en',
		'EN',
		'',
		'abcdef',
		'😀😀',
		[],
		['a'],
		['a', 'b', 'c'],
		[1],
		{ n: 1 },
		{ n: '1' },
		{ n: 1, m: 2 },
		{},
	),
	fc.integer({ min: -2, max: 12 }),
	anyNumber,
	hostileString,
	wrongType,
	fc.record({ n: anyNumber }),
);

/** A job waiting on a question asked with SCHEMAS[which]. */
async function waitingJob(store: JobStore, which: number): Promise<string> {
	const job = await store.enqueue(KIND);
	const claimed = (await store.claim(job.id))!;
	await store.ask(job.id, { key: 'q', prompt: 'Which?', schema: SCHEMAS[which]!.schema, attempt: claimed.attempts });
	return job.id;
}

const question = async (id: string) => {
	const [q] = await f.db.sql`select answer, answered_at from supabase_jobs.job_question where job_id = ${id}`;
	const [j] = await f.db.sql`select status from supabase_jobs.job where id = ${id}`;
	return { answer: q!.answer as unknown, answered: q!.answered_at !== null, status: j!.status as string };
};

const cases = fc.record({ which: fc.nat({ max: SCHEMAS.length - 1 }), value: answerValue });

describe.each(stores)('answers over $name', ({ store }) => {
	it('answer refuses what does not fit the schema naming answer, or stores it as sent and queues the job', async () => {
		const seen = new Set<string>();
		await checkProperty(cases, async ({ which, value }) => {
			const id = await waitingJob(store, which);
			seen.add(
				await refusedOrStored({
					call: () => store.answer(id, value),
					snapshot: () => question(id),
					refusal: (e) => {
						expectTypedRefusal(e, ['answer']);
						// Refused either by the schema or because PostgreSQL cannot store it (NUL, a lone surrogate).
						expect(SCHEMAS[which]!.fits(value) && storable(value), 'a refused answer does not fit').toBe(false);
					},
					stored: async () => {
						expect(SCHEMAS[which]!.fits(value), 'a stored answer fits').toBe(true);
						expect(await question(id)).toEqual({ answer: jsonRoundTrip(value), answered: true, status: 'queued' });
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});

describe('public.job_answer called directly', () => {
	it('refuses what does not fit the schema with 22023 naming answer, or stores it as sent and queues the job', async () => {
		const seen = new Set<string>();
		const worker = stores[0]!.store;
		await checkProperty(cases, async ({ which, value }) => {
			const text = JSON.stringify(value);
			// jsonb holds no NUL and no lone surrogate, and JSON has no NaN: no SQL caller can send them.
			fc.pre(text !== undefined && !/\\u(0000|d[89a-f])/i.test(text));
			const sent = JSON.parse(text) as unknown;
			const id = await waitingJob(worker, which);
			seen.add(
				await refusedOrStored({
					call: () =>
						as(f.db.sql, serviceRole, (tx) => tx`select (public.job_answer(${id}::uuid, ${text}::text::jsonb)).status`),
					snapshot: () => question(id),
					refusal: (e) => {
						expectSqlRefusal(e, ['answer']);
						expect(SCHEMAS[which]!.fits(sent), 'a refused answer does not fit').toBe(false);
					},
					stored: async () => {
						expect(SCHEMAS[which]!.fits(sent), 'a stored answer fits').toBe(true);
						expect(await question(id)).toEqual({ answer: sent, answered: true, status: 'queued' });
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});
