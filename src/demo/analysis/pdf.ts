/**
 * PDF text, page by page, with unpdf (a serverless build of PDF.js that runs
 * in Node and Deno alike). Each page read is reported, so the bar can show a
 * real page counter instead of an estimate.
 */
import { joinLigatures } from './text.ts';
import { getDocumentProxy } from 'unpdf';

/**
 * Options of {@link pdfPages}.
 *
 * @example
 * const options: PdfPagesOptions = { signal, onPage: (done, total) => console.log(`${done}/${total}`) };
 */
export interface PdfPagesOptions {
	signal?: AbortSignal;
	/** Called after each page with pages read so far and the page count. */
	onPage?: (done: number, total: number) => void | Promise<void>;
}

/** The PDF could not be opened (damaged, encrypted, not a PDF). */
export class UnreadablePdfError extends Error {
	override readonly name = 'UnreadablePdfError';
}

/**
 * Reads the text of every page, in order (items joined with spaces, lines
 * with newlines). Stops between pages when `signal` aborts.
 *
 * @example
 * const pages = await pdfPages(bytes, { onPage: (done, total) => tracker.report('extract', { done: done / total }) });
 */
export async function pdfPages(bytes: Uint8Array, options: PdfPagesOptions = {}): Promise<string[]> {
	let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
	try {
		// PDF.js takes ownership of (detaches) the buffer it is given: hand it a copy.
		pdf = await getDocumentProxy(new Uint8Array(bytes));
	} catch (e) {
		throw new UnreadablePdfError(e instanceof Error ? e.message : String(e), { cause: e });
	}
	try {
		const pages: string[] = [];
		for (let n = 1; n <= pdf.numPages; n++) {
			options.signal?.throwIfAborted();
			const page = await pdf.getPage(n);
			const content = await page.getTextContent();
			let text = '';
			let previous: { end: number; y: number; size: number } | null = null;
			for (const item of content.items) {
				if (!('str' in item)) continue;
				// Runs that touch on the same line are one word: a typesetter draws a
				// ligature (fi, fl) as its own run, which a space would cut ("modi fi ed").
				const [, , , scaleY, x, y] = item.transform as number[];
				const size = Math.abs(scaleY ?? 0) || 1;
				if (previous && text !== '' && !text.endsWith('\n')) {
					const touching = Math.abs(y! - previous.y) < size * 0.2 && x! - previous.end < previous.size * 0.1;
					if (!touching && !text.endsWith(' ') && !item.str.startsWith(' ')) text += ' ';
				}
				text += item.str;
				if (item.hasEOL) text += '\n';
				previous = { end: x! + item.width, y: y!, size };
			}
			pages.push(joinLigatures(text.replace(/[ \t]+\n/g, '\n').trim()));
			page.cleanup();
			await options.onPage?.(n, pdf.numPages);
		}
		return pages;
	} finally {
		await pdf.destroy();
	}
}
