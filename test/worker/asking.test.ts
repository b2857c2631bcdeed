/**
 * `ctx.ask` in a worker: the edge worker (createWorker) runs a handler that
 * asks its owner a question, the job parks (its slot free), the owner answers,
 * and a different worker (the Node runner) runs the handler again from the
 * top, where the same ask returns the answer. A stored answer the handler's
 * schema refuses is asked again with the reason, in the job's language; only
 * answers that never fit fail the job.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { createWorker } from '../../src/lib/worker/create-worker.ts';
import { defineJobHandler } from '../../src/lib/worker/job-handler.ts';
import type { JobOutcome } from '../../src/lib/worker/job-runner.ts';
import { MAX_ASKS } from '../../src/lib/worker/messages.ts';
import { runWorkers } from '../../src/lib/worker/node-runner.ts';
import { as, claimsFor, createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';

const SECRET = 'in-process-worker-secret-0123456789';
let db: TestDatabase;
let store: JobStore;

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
});

const analyse = defineJobKind({ name: 'test.analyse', params: z.object({ text: z.string() }) });
const resultId = randomUUID();
const runs: { jobId: string; language?: string; sure?: boolean }[] = [];
const handler = defineJobHandler(analyse, async ({ job, ask }) => {
	const run: (typeof runs)[number] = { jobId: job.id };
	runs.push(run);
	run.language = await ask(z.enum(['en', 'pt-BR']), {
		prompt: { en: 'Which language is it?', 'pt-BR': 'Qual é o idioma?' },
	});
	run.sure = await ask(z.boolean(), { prompt: 'Sure?', key: 'sure' });
	return resultId;
});

/** A Node runner of one handler whose settled outcomes are read in order with next(). */
function runOne(handler: ReturnType<typeof defineJobHandler>) {
	const outcomes: JobOutcome[] = [];
	const waiters: ((o: JobOutcome) => void)[] = [];
	const runner = runWorkers({
		sql: db.sql,
		store,
		handlers: [handler],
		concurrency: 1,
		handleSignals: false,
		logger: new RecordingLogger(),
		onJobSettled: (_job, outcome) => {
			const waiter = waiters.shift();
			if (waiter) waiter(outcome);
			else outcomes.push(outcome);
		},
	});
	return {
		next: () =>
			outcomes.length > 0
				? Promise.resolve(outcomes.shift()!)
				: new Promise<JobOutcome>((resolve) => waiters.push(resolve)),
		stop: () => runner.stop(),
	};
}

describe('ctx.ask in a worker', () => {
	it('the edge worker parks the job on a question; answered, the Node runner runs the handler again and gets the answers', async () => {
		const owner = await createUser(db.sql);
		const user = new JobStore(postgresAdapter(db.sql, { claims: claimsFor(owner) }));
		const job = await user.enqueue(analyse, { params: { text: 'olá' }, locale: 'pt-BR' });

		const edgeOutcomes: JobOutcome[] = [];
		const edge = createWorker({
			store,
			handlers: [handler],
			secret: SECRET,
			logger: new RecordingLogger(),
			releaseOnUnload: false,
			onJobSettled: (_job: Job, outcome: JobOutcome) => edgeOutcomes.push(outcome),
		});
		const res = await edge(
			new Request('http://worker.test/jobs-worker', {
				method: 'POST',
				headers: { authorization: `Bearer ${SECRET}` },
				body: JSON.stringify({ job_id: job.id }),
			}),
		);
		expect(res.status).toBe(202);
		await edge.idle();
		expect(edgeOutcomes).toEqual(['waiting']);
		expect((await user.get(job.id)).status).toBe('waiting');
		const first = await user.question(job.id);
		expect(first).toMatchObject({ key: 'ask-1', prompt: 'Qual é o idioma?' });
		expect(first!.schema).toMatchObject({ type: 'string', enum: ['en', 'pt-BR'] });
		await user.answer(job.id, 'pt-BR');

		// Another worker from here on: the Node runner.
		const settled: JobOutcome[] = [];
		let finished!: () => void;
		const done = new Promise<void>((r) => (finished = r));
		let parked!: () => void;
		const waiting = new Promise<void>((r) => (parked = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [handler],
			concurrency: 1,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (_job, outcome) => {
				settled.push(outcome);
				if (outcome === 'waiting') parked();
				if (outcome === 'done' || outcome === 'failed') finished();
			},
		});
		await waiting;
		expect((await user.question(job.id))?.key).toBe('sure');
		expect(await user.answer(job.id, 'yes').catch((e: { field?: string }) => e.field)).toBe('answer');
		await user.answer(job.id, true);
		await done;
		await runner.stop();

		expect(settled).toEqual(['waiting', 'done']);
		expect(runs.filter((r) => r.jobId === job.id)).toEqual([
			{ jobId: job.id },
			{ jobId: job.id, language: 'pt-BR' },
			{ jobId: job.id, language: 'pt-BR', sure: true },
		]);
		// Asking spent no attempt: one claim's worth, however many runs.
		expect(await store.get(job.id)).toMatchObject({ status: 'done', resultId, attempts: 1 });
	});

	it('a stored answer the handler no longer accepts is asked again, saying why; the job does not fail', async () => {
		const strict = defineJobKind({ name: 'test.strict', params: z.object({}) });
		const job = await store.enqueue(strict, {});
		const claimed = (await store.claim(job.id))!;
		// Asked with a looser schema than the handler's: the database took the answer.
		await store.ask(job.id, { key: 'ask-1', prompt: 'Number?', schema: { type: 'number' }, attempt: claimed.attempts });
		await store.answer(job.id, 7);
		const runner = runOne(
			defineJobHandler(strict, async ({ ask }) => {
				await ask(z.number().max(5), { prompt: 'Number?' });
			}),
		);
		expect(await runner.next()).toBe('waiting');
		expect(await store.question(job.id)).toMatchObject({
			key: 'ask-1~2',
			prompt: 'Your previous answer was not accepted: it is too large or too long. Please answer again.\n\nNumber?',
		});
		await store.answer(job.id, 4);
		expect(await runner.next()).toBe('done');
		await runner.stop();
		expect(await store.get(job.id)).toMatchObject({ status: 'done' });
	});

	it("an answer breaking a pattern the database does not check is asked again with the reason in the user's language", async () => {
		const coded = defineJobKind({ name: 'test.coded', params: z.object({}) });
		const owner = await createUser(db.sql);
		const user = new JobStore(postgresAdapter(db.sql, { claims: claimsFor(owner) }));
		const job = await user.enqueue(coded, { params: {}, locale: 'pt-BR' });
		const codes: string[] = [];
		const runner = runOne(
			defineJobHandler(coded, async ({ ask }) => {
				codes.push(
					await ask(z.object({ code: z.string().regex(/^[A-Z]{3}$/) }), {
						prompt: { en: 'Code?', 'pt-BR': 'Código?' },
					}).then((a) => a.code),
				);
			}),
		);
		expect(await runner.next()).toBe('waiting');
		// Past the store, straight to the database: SQL does not check a JavaScript pattern.
		await as(db.sql, owner, (tx) => tx`select job_answer(${job.id}::uuid, '{"code": "abc"}'::jsonb)`);
		expect(await runner.next()).toBe('waiting');
		expect(await user.question(job.id)).toMatchObject({
			key: 'ask-1~2',
			prompt:
				'Sua resposta anterior não foi aceita: “code” não está no formato esperado. Responda novamente.\n\nCódigo?',
		});
		await user.answer(job.id, { code: 'ABC' });
		expect(await runner.next()).toBe('done');
		await runner.stop();
		expect(codes).toEqual(['ABC']);
	});

	it(`after ${MAX_ASKS} askings whose answers never fit, the job fails with a sentence (invalid_answer)`, async () => {
		const strict = defineJobKind({ name: 'test.stubborn', params: z.object({}) });
		const job = await store.enqueue(strict, {});
		const keys = ['ask-1', ...Array.from({ length: MAX_ASKS - 1 }, (_, i) => `ask-1~${i + 2}`)];
		await db.sql`insert into supabase_jobs.job_question (job_id, key, job_table, prompt, answer_schema, expires_at, answer, answered_at)
			select ${job.id}::uuid, k, 'jobs', 'Number?', '{"type": "number"}', now() + interval '1 hour', '7', now()
			  from unnest(${keys}::text[]) k`;
		const runner = runOne(
			defineJobHandler(strict, async ({ ask }) => {
				await ask(z.number().max(5), { prompt: 'Number?' });
			}),
		);
		expect(await runner.next()).toBe('failed');
		await runner.stop();
		expect(await store.get(job.id)).toMatchObject({
			status: 'failed',
			errorCode: 'invalid_answer',
			error: 'The answer given does not fit the question this job asks. Please try again.',
		});
	});
});
