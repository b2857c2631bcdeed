/**
 * The demo's one kind of work, declared once and shared by the page that
 * enqueues it and the worker that runs it (so both are typed by it).
 */
import { z } from 'zod';
import { defineJobKind } from 'supabase-jobs';
import { PhasePlan } from 'supabase-jobs/worker';

/**
 * The declared fallback plan, measured on this machine with DEMO_MODEL_MS=300.
 * Sizes are the upload's bytes for every phase (see the handler's `size`):
 * extract is near-instant for text and ~40 ms per PDF page; analyse is the
 * model-call stand-in (300 ms per ~1500-character chunk, so ~0.2 s per
 * kilobyte of text); summarise builds the report over every chunk (about
 * 1.5 ms per kilobyte: 0.4 s for 280 KB) and inserts one row. Once the demo has finished
 * jobs, the worker fits the plan from their recorded timings instead
 * (PhasePlan.fromHistory with this as the fallback: see worker/live-plan.ts).
 */
export const DOCUMENT_PLAN = PhasePlan.fromSeconds(
	{ extract: 0.05, analyse: 0.3, summarise: 0.05 },
	{ perKilochar: { extract: 0.002, analyse: 0.2, summarise: 0.0015 } },
);

/**
 * `document.analyse`: params name the file; the payload is its bytes. The
 * worker writes a running summary to the stream `summary` (one sentence per
 * section, as it reads it) and reports the document's size as metadata.
 *
 * @example
 * await store.enqueue(documentAnalyse, { params: { filename: file.name, mime: file.type, bytes: bytes.byteLength }, payload: bytes, locale });
 */
export const documentAnalyse = defineJobKind({
	name: 'document.analyse',
	params: z.object({
		filename: z.string().trim().min(1).max(255),
		mime: z.string().max(255),
		// The file's size: a job tried again or replayed has no payload (a job drops it when it
		// ends) but copies its params, so its plan is sized from its own input too.
		bytes: z.number().int().nonnegative().optional(),
	}),
	plan: DOCUMENT_PLAN,
	label: { en: 'Document analysis', 'pt-BR': 'Análise de documento' },
	// Failures of the file itself: the same bytes fail the same way, so the page does not offer Try again.
	permanentErrors: ['empty_file', 'file_too_large', 'unsupported_format', 'unreadable_pdf', 'not_text', 'no_text'],
	// What the page shows while the work runs: the document's size, once read.
	metadata: z.object({ pages: z.number().int().nullable(), characters: z.number().int(), sections: z.number().int() }),
});

/** The kinds the dashboard filters by. */
export const DEMO_KINDS = [documentAnalyse] as const;

/**
 * A kind's name as people read it, in their language (the name itself for a kind the demo does not declare).
 *
 * @example
 * kindLabel('document.analyse', 'pt-BR'); // 'Análise de documento'
 */
export function kindLabel(name: string, locale: string): string {
	return DEMO_KINDS.find((k) => k.name === name)?.labelFor(locale) ?? name;
}
