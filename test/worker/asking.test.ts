/**
 * `ctx.ask` in a worker: the edge worker (createWorker) runs a handler that
 * asks its owner a question, the job parks (its slot free), the owner answers,
 * and a different worker (the Node runner) runs the handler again from the
 * top, where the same ask returns the answer. A stored answer the handler's
 * schema refuses fails the job with a sentence.
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
import { runWorkers } from '../../src/lib/worker/node-runner.ts';
import { claimsFor, createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
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

	it('a stored answer the handler no longer accepts fails the job with a sentence (invalid_answer)', async () => {
		const strict = defineJobKind({ name: 'test.strict', params: z.object({}) });
		const job = await store.enqueue(strict, {});
		const claimed = (await store.claim(job.id))!;
		// Asked with a looser schema than the handler's: the database took the answer.
		await store.ask(job.id, { key: 'ask-1', prompt: 'Number?', schema: { type: 'number' }, attempt: claimed.attempts });
		await store.answer(job.id, 7);
		let finished!: () => void;
		const done = new Promise<void>((r) => (finished = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [
				defineJobHandler(strict, async ({ ask }) => {
					await ask(z.number().max(5), { prompt: 'Number?' });
				}),
			],
			concurrency: 1,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: () => finished(),
		});
		await done;
		await runner.stop();
		expect(await store.get(job.id)).toMatchObject({
			status: 'failed',
			errorCode: 'invalid_answer',
			error: 'The answer given does not fit the question this job asks. Please try again.',
		});
	});
});
