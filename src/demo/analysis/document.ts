/**
 * The demo's document analysis, as three steps the worker runs as phases
 * (extract -> analyse -> summarise). Each step is plain code with a signal and
 * a counter callback; the handler wires them to the ProgressTracker.
 */
import { countTerms, topKeywords, type TermCounts } from './keywords.ts';
import { guessLanguage } from './language.ts';
import { modelCallStandIn } from './model-stand-in.ts';
import { pdfPages } from './pdf.ts';
import { sumStats, textStats, type TextStats } from './stats.ts';
import { summarise } from './summary.ts';
import { chunks, decodeText, looksBinary, stripMarkdown } from './text.ts';

/** Largest upload the demo accepts (the job payload limit is 10 MiB). */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/** The same limit as people read it, in the binary unit it is counted in: "8 MiB". */
export const MAX_DOCUMENT_SIZE = `${MAX_DOCUMENT_BYTES / (1024 * 1024)} MiB`;

/** What kind of file it is, from its MIME type and, failing that, its name. */
export type DocumentFormat = 'pdf' | 'markdown' | 'text';

/**
 * Picks the reader for a file; null when the demo cannot read it.
 *
 * @example
 * documentFormat('application/pdf', 'a.bin'); // 'pdf'
 * documentFormat('', 'notes.md'); // 'markdown'
 */
export function documentFormat(mime: string, filename: string): DocumentFormat | null {
	const m = mime.toLowerCase().split(';')[0]!.trim();
	const ext = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() ?? '';
	if (m === 'application/pdf' || ext === 'pdf') return 'pdf';
	if (m === 'text/markdown' || m === 'text/x-markdown' || ext === 'md' || ext === 'markdown') return 'markdown';
	if (m.startsWith('text/') || ext === 'txt' || ext === 'text') return 'text';
	return null;
}

/**
 * The upload claims to be text but is not (binary bytes named `.txt`): a
 * permanent input error, which no retry can fix.
 *
 * @example
 * await extractDocument(randomBytes, 'text').catch((e) => e instanceof NotTextError); // true
 */
export class NotTextError extends Error {
	constructor(message = 'the file is not text') {
		super(message);
		this.name = 'NotTextError';
	}
}

/**
 * The extracted document.
 *
 * @example
 * const doc: ExtractedDocument = { text: 'Hello.', pages: null, format: 'text' };
 */
export interface ExtractedDocument {
	text: string;
	/** Page count for PDFs, null for text. */
	pages: number | null;
	format: DocumentFormat;
}

/**
 * How many characters the document has: the one count the job page (as the
 * job's metadata, while it runs) and the result page (in the report) both show.
 *
 * @example
 * documentCharacters({ text: 'One.\n\nTwo.', pages: null, format: 'text' }); // 11
 */
export function documentCharacters(doc: ExtractedDocument): number {
	return doc.text.length;
}

/**
 * Phase `extract`: PDF pages through unpdf (reporting each page), or text
 * decoded as UTF-8 (markdown stripped to prose).
 *
 * @example
 * const doc = await extractDocument(bytes, 'pdf', { signal, onProgress: (done, total) => report(done / total) });
 */
export async function extractDocument(
	bytes: Uint8Array,
	format: DocumentFormat,
	options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void | Promise<void> } = {},
): Promise<ExtractedDocument> {
	if (format === 'pdf') {
		const pages = await pdfPages(bytes, { signal: options.signal, onPage: options.onProgress });
		// PostgreSQL text cannot hold NUL (22021); a PDF's text layer sometimes does.
		return { text: pages.join('\n\n').replaceAll('\u0000', ''), pages: pages.length, format };
	}
	const raw = decodeText(bytes);
	if (looksBinary(raw)) throw new NotTextError(`the ${format} file is binary, not UTF-8 text`);
	await options.onProgress?.(1, 1);
	return { text: format === 'markdown' ? stripMarkdown(raw) : raw, pages: null, format };
}

/**
 * One chunk's findings.
 *
 * @example
 * const c: ChunkAnalysis = { index: 0, stats: textStats('a.'), keywords: ['alpha'] };
 */
export interface ChunkAnalysis {
	index: number;
	stats: TextStats;
	keywords: string[];
}

/**
 * The whole document's findings after phase `analyse`.
 *
 * @example
 * const { chunks, counts } = await analyseText(text, { signal, modelMs: 0 });
 */
export interface TextAnalysis {
	chunks: ChunkAnalysis[];
	/** Content-term counts over the whole document (for keywords and the summary). */
	counts: TermCounts;
}

/**
 * Phase `analyse`: cuts the text into chunks and, per chunk, counts words and
 * sentences, finds keywords, and waits the model-call stand-in (`modelMs`,
 * cancellable by `signal`). `onChunk` is called after each chunk with the
 * chunks done and the total: the real counter behind the bar.
 *
 * @example
 * await analyseText(doc.text, { signal, modelMs: 300, onChunk: (done, total) => tracker.report('analyse', { done: done / total }) });
 */
export async function analyseText(
	text: string,
	options: {
		signal?: AbortSignal;
		modelMs?: number;
		chunkChars?: number;
		onChunk?: (done: number, total: number, section: { text: string; counts: TermCounts }) => void | Promise<void>;
	} = {},
): Promise<TextAnalysis> {
	const signal = options.signal ?? new AbortController().signal;
	const parts = chunks(text, options.chunkChars);
	const counts: TermCounts = new Map();
	const out: ChunkAnalysis[] = [];
	for (const [index, part] of parts.entries()) {
		signal.throwIfAborted();
		const own = countTerms(part);
		for (const [t, n] of own) counts.set(t, (counts.get(t) ?? 0) + n);
		out.push({ index, stats: textStats(part), keywords: topKeywords(own, 5) });
		if ((options.modelMs ?? 0) > 0) await modelCallStandIn(options.modelMs!, signal);
		await options.onChunk?.(index + 1, parts.length, { text: part, counts: own });
	}
	return { chunks: out, counts };
}

/**
 * The record phase `summarise` writes.
 *
 * @example
 * const report: DocumentReport = buildReport(doc, analysis);
 * report.stats.words;
 */
export interface DocumentReport {
	stats: TextStats & { chunks: number; pages: number | null; format: DocumentFormat; language: 'en' | 'pt' | null };
	summary: string;
	keywords: string[];
	chunks: ChunkAnalysis[];
}

/**
 * Phase `summarise`: totals, top keywords and an extractive summary.
 *
 * @example
 * const report = buildReport(doc, await analyseText(doc.text));
 */
export function buildReport(doc: ExtractedDocument, analysis: TextAnalysis, maxSentences = 3): DocumentReport {
	return {
		stats: {
			...sumStats(analysis.chunks.map((c) => c.stats)),
			// The whole text's, not the chunks' sum (which leaves out the breaks between them).
			characters: documentCharacters(doc),
			chunks: analysis.chunks.length,
			pages: doc.pages,
			format: doc.format,
			language: guessLanguage(doc.text),
		},
		summary: summarise(doc.text, analysis.counts, maxSentences),
		keywords: topKeywords(analysis.counts, 10),
		chunks: analysis.chunks,
	};
}
