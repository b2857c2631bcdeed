/**
 * The worker side of `document.analyse`: three phases of real work on the
 * uploaded file, reported through the tracker with real counters, and a row
 * in public.document_analyses whose id becomes the job's result_id.
 *
 * Runs under Deno (functions/jobs-worker/handlers.ts) and Node alike: it
 * reads its settings from Deno.env or process.env and talks to the database
 * with postgres.js over SUPABASE_DB_URL, as the worker's own store does.
 */
import postgres from 'postgres';
import { z } from 'zod';
import { JobStore, postgresAdapter } from 'supabase-jobs';
import { JobUserError, defineJobHandler } from 'supabase-jobs/worker';
import {
	analyseText,
	buildReport,
	documentCharacters,
	documentFormat,
	extractDocument,
	MAX_DOCUMENT_BYTES,
	MAX_DOCUMENT_SIZE,
	NotTextError,
} from '../analysis/document.ts';
import { modelDelayMs } from '../analysis/model-stand-in.ts';
import { guessLanguage } from '../analysis/language.ts';
import { summarise } from '../analysis/summary.ts';
import { chunks as sections } from '../analysis/text.ts';
import { UnreadablePdfError } from '../analysis/pdf.ts';
import { DOCUMENT_PLAN, documentAnalyse } from '../jobs.ts';
import { LivePlan } from './live-plan.ts';

/** An environment variable under Deno or Node; empty counts as unset. */
export function envVar(name: string): string | undefined {
	const g = globalThis as {
		Deno?: { env: { get(n: string): string | undefined } };
		process?: { env: Record<string, string | undefined> };
	};
	const value = g.Deno ? g.Deno.env.get(name) : g.process?.env[name];
	return value === undefined || value === '' ? undefined : value;
}

/** How many sections analyseText cuts the text into (its chunks). */
function sectionCount(text: string, chunkChars: number): number {
	return sections(text, chunkChars).length;
}

/**
 * Options of {@link createDocumentAnalyseHandler}.
 *
 * @example
 * const options: DocumentAnalyseOptions = { databaseUrl: 'postgres://...', modelMs: 0 };
 */
export interface DocumentAnalyseOptions {
	/** Where document_analyses lives. @default SUPABASE_DB_URL */
	databaseUrl?: string;
	/** The model-call stand-in per chunk. @default DEMO_MODEL_MS, else 300 */
	modelMs?: number;
	/** Characters per chunk. @default DEMO_CHUNK_CHARS, else 1500 */
	chunkChars?: number;
}

/**
 * Builds the handler (one database connection, opened on first use; the
 * phase plan refitted from this kind's history as jobs finish).
 *
 * @example
 * export const handlers = [createDocumentAnalyseHandler()];
 */
export function createDocumentAnalyseHandler(options: DocumentAnalyseOptions = {}) {
	const modelMs = options.modelMs ?? modelDelayMs(envVar('DEMO_MODEL_MS'));
	const chunkChars = options.chunkChars ?? Number(envVar('DEMO_CHUNK_CHARS') ?? 1500);
	let sql: postgres.Sql | null = null;
	const db = (): postgres.Sql | null => {
		const url = options.databaseUrl ?? envVar('SUPABASE_DB_URL');
		if (!url) return null;
		// prepare:false: usable through Supabase's transaction pooler too.
		sql ??= postgres(url, { max: 1, prepare: false, onnotice: () => {} });
		return sql;
	};
	const keptUpload = async (jobId: string): Promise<Uint8Array | null> => {
		const s = db();
		if (!s) return null;
		const [row] = await s<{ bytes: Uint8Array }[]>`select bytes from public.document_uploads where job_id = ${jobId}`;
		return row?.bytes ?? null;
	};
	const plan = new LivePlan({
		kind: documentAnalyse.name,
		fallback: DOCUMENT_PLAN,
		source: () => {
			const s = db();
			return s ? new JobStore(postgresAdapter(s)) : null;
		},
		onError: (e) => console.warn('[document.analyse] could not fit the plan from history; keeping the last one', e),
	});
	void plan.refresh(true);

	return defineJobHandler(
		plan.bind(documentAnalyse),
		async ({ job, params, payload: claimed, tracker, ask, stream, setMetadata }) => {
			// A job tried again has no payload (a job drops it when it ends): its file was kept (document_uploads.sql).
			const payload = claimed ?? (await keptUpload(job.id));
			if (!payload || payload.byteLength === 0)
				throw new JobUserError(
					{ en: 'The file is empty.', 'pt-BR': 'O arquivo está vazio.' },
					{ errorCode: 'empty_file' },
				);
			if (payload.byteLength > MAX_DOCUMENT_BYTES)
				throw new JobUserError(
					{
						en: `The file is larger than ${MAX_DOCUMENT_SIZE}.`,
						'pt-BR': `O arquivo tem mais de ${MAX_DOCUMENT_SIZE}.`,
					},
					{ errorCode: 'file_too_large' },
				);
			const format = documentFormat(params.mime, params.filename);
			if (!format)
				throw new JobUserError(
					{
						en: 'I can read text, Markdown and PDF files only.',
						'pt-BR': 'Só consigo ler arquivos de texto, Markdown e PDF.',
					},
					{ errorCode: 'unsupported_format' },
				);

			const doc = await tracker.run('extract', (signal) =>
				extractDocument(payload, format, {
					signal,
					// A real page counter: it overrides the estimate and may fill the phase.
					onProgress: (done, total) => tracker.report('extract', { done: done / total }),
				}).catch((e: unknown) => {
					if (e instanceof UnreadablePdfError)
						throw new JobUserError(
							{ en: 'I could not open this PDF.', 'pt-BR': 'Não consegui abrir este PDF.' },
							{ errorCode: 'unreadable_pdf', cause: e },
						);
					// The same bytes fail the same way on every attempt: fail now rather than retry for minutes.
					if (e instanceof NotTextError)
						throw new JobUserError(
							{
								en: 'This file is not text I can read: it looks like a binary file with a text name. Upload a UTF-8 text, Markdown or PDF file.',
								'pt-BR':
									'Este arquivo não é um texto que eu consiga ler: parece um arquivo binário com nome de texto. Envie um arquivo de texto UTF-8, Markdown ou PDF.',
							},
							{ errorCode: 'not_text', cause: e },
						);
					throw e;
				}),
			);
			if (doc.text.trim() === '')
				throw new JobUserError(
					{
						en: 'The file has no text I can read (a scanned PDF?).',
						'pt-BR': 'O arquivo não tem texto que eu consiga ler (um PDF escaneado?).',
					},
					{ errorCode: 'no_text' },
				);

			// Unsure of the language: the person says (the job waits, its worker free; it runs again from the top with the answer).
			const language =
				guessLanguage(doc.text) ??
				(await ask(z.enum(['en', 'pt']), {
					prompt: {
						en: `I could not tell which language "${params.filename}" is in. Which is it?`,
						'pt-BR': `Não consegui saber em que idioma está "${params.filename}". Qual é?`,
					},
					timeoutMs: 24 * 3_600_000,
				}));

			await setMetadata({
				pages: doc.pages,
				characters: documentCharacters(doc),
				sections: sectionCount(doc.text, chunkChars),
			});
			// The running summary, written as each section is read (as a model would write it): watchers see it grow.
			const summary = stream('summary');
			const analysis = await tracker.run('analyse', (signal) =>
				analyseText(doc.text, {
					signal,
					modelMs,
					chunkChars,
					onChunk: (done, total, section) => {
						const sentence = summarise(section.text, section.counts, 1).trim();
						if (sentence !== '') summary.write(`${sentence}\n\n`);
						return tracker.report('analyse', { done: done / total });
					},
				}),
			);

			const resultId = await tracker.run('summarise', async (signal) => {
				const built = buildReport(doc, analysis);
				const report = { ...built, stats: { ...built.stats, language } };
				signal.throwIfAborted();
				const s = db();
				if (!s) throw new Error('document.analyse: set SUPABASE_DB_URL (where document_analyses lives)');
				const [row] = await s<{ id: string }[]>`
						insert into public.document_analyses (owner_id, job_id, filename, stats, summary, keywords)
						values (${job.ownerId}, ${job.id}, ${params.filename},
						        ${s.json({ ...report.stats, perChunk: report.chunks } as unknown as postgres.JSONValue)},
						        ${report.summary}, ${report.keywords})
						returning id`;
				return row!.id;
			});
			// The job closes after this returns; its timings join the history the next fit reads.
			setTimeout(() => void plan.refresh(), 1000);
			return resultId;
		},
		{
			// One size for every phase, known before the first: the upload's bytes. With
			// every phase sized up front the spans never shift mid-run (a later, larger
			// size would leave the bar waiting for the real count to catch up), and
			// the recorded timings fit slopes per kilobyte of upload. A job tried again or
			// replayed has no payload: the size its params carry (they are copied) sizes it.
			size: ({ job, params }) => job.payload?.byteLength ?? params.bytes ?? null,
		},
	);
}
