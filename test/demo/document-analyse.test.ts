/**
 * The demo's document.analyse handler under the real worker runtime and
 * database: a permanent input error fails the job at once, in the user's
 * language, instead of being retried until the attempts run out.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentAnalyse } from '../../src/demo/jobs.ts';
import { createDocumentAnalyseHandler } from '../../src/demo/worker/document-analyse.ts';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { createWorker, type JobWorker } from '../../src/lib/worker/create-worker.ts';
import { createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { RecordingLogger } from '../worker/helpers/recording-logger.ts';

let db: TestDatabase;
let store: JobStore;
let worker: JobWorker;

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
	worker = createWorker({
		store,
		handlers: [createDocumentAnalyseHandler({ databaseUrl: db.url, modelMs: 0 })],
		secret: 'document-analyse-test-secret-0123',
		logger: new RecordingLogger(),
		releaseOnUnload: false,
	});
});

describe('document.analyse: permanent input errors are not retried', () => {
	it('random bytes named .txt fail at once as not_text, with a sentence in the job language (pt-BR)', async () => {
		// Random bytes hold NULs, which PostgreSQL text refuses (22021): retrying can never help.
		const bytes = randomBytes(4096);
		bytes[10] = 0;
		const job = await store.enqueue('document.analyse', {
			params: { filename: 'notes.txt', mime: 'text/plain' },
			payload: bytes,
			maxAttempts: 3,
			locale: 'pt-BR',
		});
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
		const row = await store.get(job.id);
		expect(row).toMatchObject({ status: 'failed', attempts: 1, errorCode: 'not_text', resultId: null });
		expect(row.error).toMatch(/^Este arquivo não é um texto que eu consiga ler/);
		// The same bytes fail the same way: the kind says so, and the page offers no Try again.
		expect(documentAnalyse.permanentErrors).toContain(row.errorCode);
	});

	it('the same upload for an English reader reads in English; real text still succeeds', async () => {
		const binary = await store.enqueue('document.analyse', {
			params: { filename: 'data.txt', mime: 'text/plain' },
			payload: new Uint8Array([0, 1, 2, 3, 0, 255, 254, 0]),
			locale: 'en',
		});
		expect(await worker.process({ jobId: binary.id })).toMatchObject({ outcomes: { failed: 1 } });
		expect((await store.get(binary.id)).error).toMatch(/^This file is not text I can read/);

		const text = await store.enqueue('document.analyse', {
			params: { filename: 'notes.txt', mime: 'text/plain' },
			ownerId: (await createUser(db.sql)).sub, // the analysis row belongs to a user
			payload: 'The tender closes on Friday. The committee reads every proposal.',
		});
		expect(await worker.process({ jobId: text.id })).toMatchObject({ outcomes: { done: 1 } });
	});
});

describe('document.analyse: asking, and trying again', () => {
	/** Words in no language the demo knows. */
	const NO_LANGUAGE = 'Zorblat quimmen vask trelo. Brindo skaf plumet orvik. Tasko flen dorp wimble kraz.';

	it('a document in no language it can tell asks which; answered, the job runs again and records it; tried again, the new job reads the same file', async () => {
		const owner = (await createUser(db.sql)).sub;
		const job = await store.enqueue('document.analyse', {
			params: { filename: 'notes.txt', mime: 'text/plain' },
			ownerId: owner,
			payload: NO_LANGUAGE,
			locale: 'pt-BR',
		});
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { waiting: 1 } });
		const question = await store.question(job.id);
		expect(question?.prompt).toBe('Não consegui saber em que idioma está "notes.txt". Qual é?');
		expect(question?.schema).toMatchObject({ type: 'string', enum: ['en', 'pt'] });
		await store.answer(job.id, 'pt');
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { done: 1 } });
		const done = await store.get(job.id);
		const [analysis] = await db.sql<{ language: string }[]>`
			select stats ->> 'language' as language from public.document_analyses where id = ${done.resultId}`;
		expect(analysis!.language).toBe('pt');

		// Cancelled while it waits for its answer, then tried again: the new job has no payload, and reads the kept file.
		const second = await store.enqueue('document.analyse', {
			params: { filename: 'notes.txt', mime: 'text/plain' },
			ownerId: owner,
			payload: NO_LANGUAGE,
		});
		await worker.process({ jobId: second.id });
		await store.cancel(second.id);
		const again = await store.tryAgain(second.id);
		expect(again).toMatchObject({ retryOf: second.id, status: 'queued' });
		expect(await worker.process({ jobId: again.id })).toMatchObject({ outcomes: { waiting: 1 } });
		await store.answer(again.id, 'en');
		expect(await worker.process({ jobId: again.id })).toMatchObject({ outcomes: { done: 1 } });
		expect((await store.get(again.id)).resultId).not.toBeNull();
	});

	it("a job tried again is sized from its own input: every phase records the upload's size, as the first attempt did", async () => {
		const owner = (await createUser(db.sql)).sub;
		const text = 'The tender closes on Friday. The committee reads every proposal. '.repeat(40);
		const bytes = new TextEncoder().encode(text).byteLength;
		const first = await store.enqueue('document.analyse', {
			params: { filename: 'tender.txt', mime: 'text/plain', bytes },
			ownerId: owner,
			payload: text,
		});
		expect(await worker.process({ jobId: first.id })).toMatchObject({ outcomes: { done: 1 } });
		const sizes = async (id: string) =>
			(
				await db.sql<{ size: number | null }[]>`
				select (value ->> 'size')::int as size from supabase_jobs.job, jsonb_each(timings) where id = ${id}`
			).map((r) => r.size);
		expect(await sizes(first.id)).toEqual([bytes, bytes, bytes]);

		// Cancelled before it ran, then tried again: the new job has no payload; it reads the kept file.
		const second = await store.enqueue('document.analyse', {
			params: { filename: 'tender.txt', mime: 'text/plain', bytes },
			ownerId: owner,
			payload: text,
		});
		await store.cancel(second.id);
		const again = await store.tryAgain(second.id);
		expect(await worker.process({ jobId: again.id })).toMatchObject({ outcomes: { done: 1 } });
		expect(await sizes(again.id)).toEqual([bytes, bytes, bytes]);
	});
});
