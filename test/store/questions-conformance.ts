/**
 * Asking the owner mid-job, trying a job again and the admins' replay,
 * through JobStore: one suite run over postgres.js
 * (test/store/postgres-adapter.test.ts) and over supabase-js through the
 * stand-in (test/realtime/conformance.test.ts), with the same results.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
	InvalidJobInputError,
	NoOpenQuestionError,
	NotRetryableError,
	JobNotFoundError,
	PermissionDeniedError,
} from '../../src/lib/errors.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { ConformanceHarness } from './harness.ts';
import { openSuite, rejection, uniqueKind } from './conformance-setup.ts';

const LANGUAGE = z.toJSONSchema(z.enum(['en', 'pt-BR'])) as Record<string, unknown>;
const SETTINGS = z.toJSONSchema(
	z.object({ language: z.enum(['en', 'pt-BR']), notes: z.string().max(20).optional() }),
) as Record<string, unknown>;

/**
 * Registers the suite.
 *
 * @example
 * describeQuestionsConformance('postgres.js', async () => harness);
 */
export function describeQuestionsConformance(label: string, setup: () => Promise<ConformanceHarness>): void {
	let h: ConformanceHarness;
	let worker: JobStore;

	beforeAll(async () => ({ h, worker } = await openSuite(setup)));

	/** A user's job, claimed by the worker. */
	const running = async (kind = uniqueKind('ask')) => {
		const owner = await h.createUser();
		const user = new JobStore(h.adapter({ role: 'authenticated', sub: owner }));
		const queued = await user.enqueue(kind, { params: { text: 'olá' }, locale: 'pt-BR', tags: ['t1'], priority: 3 });
		const job = (await worker.claim(queued.id))!;
		return { owner, user, job };
	};
	const stranger = async () => new JobStore(h.adapter({ role: 'authenticated', sub: await h.createUser() }));
	const admin = async () => new JobStore(h.adapter({ role: 'authenticated', sub: await h.createUser(), admin: true }));

	describe(`Asking the owner over ${label}`, () => {
		test('ask parks the job (waiting) with its question kept for the owner; the answer queues it again and the same key returns it', async () => {
			const { user, job } = await running();
			const asked = await worker.ask(job.id, {
				key: 'ask-1',
				prompt: 'Qual é o idioma?',
				schema: LANGUAGE,
				timeoutMs: 60_000,
				attempt: job.attempts,
			});
			expect(asked.answered).toBe(false);
			expect((await user.get(job.id)).status).toBe('waiting');
			// Nothing claims a job waiting for an answer.
			expect(await worker.claim(job.id)).toBeNull();
			const question = await user.question(job.id);
			expect(question).toMatchObject({ jobId: job.id, key: 'ask-1', prompt: 'Qual é o idioma?' });
			expect(question!.schema).toMatchObject({ type: 'string', enum: ['en', 'pt-BR'] });
			expect(question!.expiresAt.getTime() - question!.askedAt.getTime()).toBe(60_000);

			const queued = await user.answer(job.id, 'pt-BR');
			expect(queued).toMatchObject({ id: job.id, status: 'queued', attempts: job.attempts - 1 });
			expect(await user.question(job.id)).toBeNull();
			const again = (await worker.claim(job.id))!;
			expect(again.attempts).toBe(job.attempts);
			expect(
				await worker.ask(job.id, {
					key: 'ask-1',
					prompt: 'Qual é o idioma?',
					schema: LANGUAGE,
					attempt: again.attempts,
				}),
			).toEqual({
				answered: true,
				answer: 'pt-BR',
			});
			expect((await worker.get(job.id)).status).toBe('running');
			// A second question is a new key: the job waits again.
			expect(
				(
					await worker.ask(job.id, {
						key: 'ask-2',
						prompt: 'Mais?',
						schema: { type: 'boolean' },
						attempt: again.attempts,
					})
				).answered,
			).toBe(false);
			await user.answer(job.id, true);
			const third = (await worker.claim(job.id))!;
			expect((await worker.succeed(job.id, { attempt: third.attempts })).status).toBe('done');
		});

		test('a wrong answer is refused naming the field and the job keeps waiting; with a zod schema it is refused before any call', async () => {
			const { user, job } = await running();
			await worker.ask(job.id, { key: 'settings', prompt: 'Configurações?', schema: SETTINGS, attempt: job.attempts });
			const wrongChoice = await rejection(user.answer(job.id, { language: 'fr' }));
			expect(wrongChoice).toBeInstanceOf(InvalidJobInputError);
			expect((wrongChoice as InvalidJobInputError).field).toBe('answer.language');
			const missing = await rejection(user.answer(job.id, { notes: 'x' }));
			expect((missing as InvalidJobInputError).field).toBe('answer.language');
			const tooLong = await rejection(user.answer(job.id, { language: 'en', notes: 'x'.repeat(21) }));
			expect((tooLong as InvalidJobInputError).field).toBe('answer.notes');
			const extra = await rejection(user.answer(job.id, { language: 'en', colour: 'blue' }));
			expect((extra as InvalidJobInputError).field).toBe('answer.colour');
			const notAnObject = await rejection(user.answer(job.id, 'en'));
			expect((notAnObject as InvalidJobInputError).field).toBe('answer');
			const early = await rejection(
				user.answer(job.id, { language: 'es' }, { schema: z.object({ language: z.enum(['en', 'pt-BR']) }) }),
			);
			expect((early as InvalidJobInputError).field).toBe('answer.language');
			expect((await user.get(job.id)).status).toBe('waiting');
			expect((await user.question(job.id))?.key).toBe('settings');
			expect((await user.answer(job.id, { language: 'en' }, { key: 'settings' })).status).toBe('queued');
		});

		test("an answer breaking the question's pattern or email format, which SQL does not check, is refused by the store naming the field; the job keeps waiting", async () => {
			const { user, job } = await running();
			const schema = z.toJSONSchema(z.object({ code: z.string().regex(/^[A-Z]{3}$/), email: z.email() })) as Record<
				string,
				unknown
			>;
			await worker.ask(job.id, { key: 'contact', prompt: 'Contato?', schema, attempt: job.attempts });
			const badCode = await rejection(user.answer(job.id, { code: 'abc', email: 'ana@example.com' }));
			expect(badCode).toBeInstanceOf(InvalidJobInputError);
			expect((badCode as InvalidJobInputError).field).toBe('answer.code');
			const badEmail = await rejection(user.answer(job.id, { code: 'ABC', email: 'not an address' }));
			expect((badEmail as InvalidJobInputError).field).toBe('answer.email');
			expect((await user.get(job.id)).status).toBe('waiting');
			expect((await user.answer(job.id, { code: 'ABC', email: 'ana@example.com' })).status).toBe('queued');
		});

		test('nobody but the owner or an admin sees or answers the question; an answer to no open question is refused', async () => {
			const { user, job } = await running();
			await worker.ask(job.id, { key: 'ask-1', prompt: 'Qual é o idioma?', schema: LANGUAGE, attempt: job.attempts });
			const other = await stranger();
			expect(await other.question(job.id)).toBeNull();
			expect(await rejection(other.answer(job.id, 'en'))).toBeInstanceOf(JobNotFoundError);
			expect((await user.get(job.id)).status).toBe('waiting');
			const boss = await admin();
			expect((await boss.question(job.id))?.prompt).toBe('Qual é o idioma?');
			expect((await boss.answer(job.id, 'en')).status).toBe('queued');
			expect(await rejection(user.answer(job.id, 'en'))).toBeInstanceOf(NoOpenQuestionError);
		});

		test('the owner cancels a job waiting for an answer: cancelled at once, the question gone', async () => {
			const { user, job } = await running();
			await worker.ask(job.id, { key: 'ask-1', prompt: 'Qual é o idioma?', schema: LANGUAGE, attempt: job.attempts });
			expect((await user.cancel(job.id))?.status).toBe('cancelled');
			expect(await user.question(job.id)).toBeNull();
			expect(await rejection(user.answer(job.id, 'en'))).toBeInstanceOf(NoOpenQuestionError);
		});

		test('a question unanswered past its deadline fails the job at the next reclaim, with a sentence in its language', async () => {
			const { user, job } = await running();
			await worker.ask(job.id, {
				key: 'ask-1',
				prompt: 'Qual é o idioma?',
				schema: LANGUAGE,
				timeoutMs: 1,
				attempt: job.attempts,
			});
			await h.reclaimAll();
			const failed = await user.get(job.id);
			expect(failed).toMatchObject({ status: 'failed', errorCode: 'question_unanswered' });
			expect(failed.error).toBe('A pergunta ficou sem resposta até o prazo, então o trabalho parou. Tente novamente.');
			expect(await user.question(job.id)).toBeNull();
			expect(await rejection(user.answer(job.id, 'en'))).toBeInstanceOf(NoOpenQuestionError);
		});
	});

	describe(`Trying a job again over ${label}`, () => {
		test('try again makes a new linked job with the same kind, params, owner and options; the old row is untouched; twice gives the same job', async () => {
			const { owner, user, job } = await running();
			const failed = await worker.fail(job.id, 'Não consegui ler.', { errorCode: 'unreadable', attempt: job.attempts });
			const again = await user.tryAgain(job.id);
			expect(again).toMatchObject({
				kind: job.kind,
				params: { text: 'olá' },
				ownerId: owner,
				locale: 'pt-BR',
				tags: ['t1'],
				priority: 3,
				maxAttempts: job.maxAttempts,
				status: 'queued',
				retryOf: job.id,
			});
			expect(again.id).not.toBe(job.id);
			expect(await user.get(job.id)).toEqual(failed);
			expect((await user.tryAgain(job.id)).id).toBe(again.id);
		});

		test('try again is refused for a job not failed or cancelled, and for anyone but its owner or an admin', async () => {
			const { user, job } = await running();
			expect(await rejection(user.tryAgain(job.id))).toBeInstanceOf(NotRetryableError);
			await user.cancel(job.id);
			const other = await stranger();
			expect(await rejection(other.tryAgain(job.id))).toBeInstanceOf(JobNotFoundError);
			const boss = await admin();
			expect((await boss.tryAgain(job.id)).retryOf).toBe(job.id);
		});

		test('a job failed for good (fail with permanent) reads failedForGood; try again throws NotRetryableError for its owner and an admin and writes nothing', async () => {
			const kind = uniqueKind('for-good');
			const { user, job } = await running(kind);
			const failed = await worker.fail(job.id, 'O arquivo está vazio.', {
				errorCode: 'empty_file',
				attempt: job.attempts,
				permanent: true,
			});
			expect(failed).toMatchObject({ status: 'failed', errorCode: 'empty_file', failedForGood: true });
			expect(failed.attempts).toBeLessThan(failed.maxAttempts);
			expect(await user.get(job.id)).toEqual(failed);
			const refusedToOwner = await rejection(user.tryAgain(job.id));
			expect(refusedToOwner).toBeInstanceOf(NotRetryableError);
			expect((refusedToOwner as Error).message).toContain('failed for good (empty_file)');
			const boss = await admin();
			expect(await rejection(boss.tryAgain(job.id))).toBeInstanceOf(NotRetryableError);
			expect(await rejection(worker.tryAgain(job.id))).toBeInstanceOf(NotRetryableError);
			const page = await user.listRecent({ kind });
			expect(page.jobs.map((j) => j.id)).toEqual([job.id]);
		});

		test('fail refuses a permanent that is not true or false, naming the field; the job keeps running', async () => {
			const { user, job } = await running();
			const bad = { attempt: job.attempts, permanent: 'yes' as unknown as boolean };
			const e = await rejection(worker.fail(job.id, 'Falhou.', bad));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('permanent');
			expect((await user.get(job.id)).status).toBe('running');
		});

		test('a replay skips the jobs failed for good and tries the other failed jobs of the filter again', async () => {
			const kind = uniqueKind('replay-for-good');
			const forGood = await running(kind);
			await worker.fail(forGood.job.id, 'Vazio.', { errorCode: 'empty_file', attempt: 1, permanent: true });
			const plain = await running(kind);
			await worker.fail(plain.job.id, 'Falhou.', { errorCode: 'empty_file', attempt: 1 });
			const boss = await admin();
			expect((await boss.replay({ kind })).map((j) => j.retryOf)).toEqual([plain.job.id]);
			expect(await boss.replay({ kind })).toEqual([]);
		});

		test('an admin replays failed jobs by kind and error code, once each; anyone else is refused', async () => {
			const kind = uniqueKind('replay');
			const ids: string[] = [];
			for (const code of ['worker_lost', 'worker_lost', 'unreadable']) {
				const { job } = await running(kind);
				await worker.fail(job.id, 'Falhou.', { errorCode: code, attempt: job.attempts });
				ids.push(job.id);
			}
			const other = await stranger();
			expect(await rejection(other.replay({ kind }))).toBeInstanceOf(PermissionDeniedError);
			const boss = await admin();
			const replayed = await boss.replay({ kind, errorCode: 'worker_lost', from: new Date(Date.now() - 3_600_000) });
			expect(replayed.map((j) => j.retryOf).sort()).toEqual(ids.slice(0, 2).sort());
			expect(replayed.every((j) => j.status === 'queued' && j.kind === kind)).toBe(true);
			// Replayed once: a second replay finds nothing new; the rest of the kind still can be.
			expect(await boss.replay({ kind, errorCode: 'worker_lost' })).toEqual([]);
			expect((await boss.replay({ kind })).map((j) => j.retryOf)).toEqual([ids[2]]);
			expect(await rejection(boss.replay({ from: new Date(), to: new Date(Date.now() - 1000) }))).toBeInstanceOf(
				InvalidJobInputError,
			);
			expect(await boss.replay({ kind, to: new Date(Date.now() - 3_600_000) })).toEqual([]);
		});
	});
}
