/**
 * The demo's analysis modules: pure functions over text and PDF bytes (the
 * PDFs are made with pdf-lib, so the page counter is checked against a known
 * page count).
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import {
	analyseText,
	buildReport,
	documentCharacters,
	documentFormat,
	extractDocument,
	NotTextError,
} from '../../src/demo/analysis/document.ts';
import { contentTerms, countTerms, topKeywords } from '../../src/demo/analysis/keywords.ts';
import { guessLanguage } from '../../src/demo/analysis/language.ts';
import { DEFAULT_MODEL_MS, modelCallStandIn, modelDelayMs } from '../../src/demo/analysis/model-stand-in.ts';
import { pdfPages, UnreadablePdfError } from '../../src/demo/analysis/pdf.ts';
import { sumStats, textStats } from '../../src/demo/analysis/stats.ts';
import { summarise } from '../../src/demo/analysis/summary.ts';
import {
	chunks,
	decodeText,
	joinLigatures,
	looksBinary,
	sentences,
	stripMarkdown,
	words,
} from '../../src/demo/analysis/text.ts';

async function pdfWith(pages: string[]): Promise<Uint8Array> {
	const doc = await PDFDocument.create();
	const font = await doc.embedFont(StandardFonts.Helvetica);
	for (const text of pages) doc.addPage().drawText(text, { x: 50, y: 700, size: 12, font });
	return await doc.save();
}

describe('text', () => {
	it('decodes UTF-8, drops a BOM and normalises to NFC', () => {
		const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('ola\u0301 mundo')]);
		expect(decodeText(bytes)).toBe('olá mundo');
	});

	it('strips markdown to the words a reader reads', () => {
		const md =
			'# Title\n\n> quoted\n\n- item **bold** and _it_\n\nSee [the docs](https://x.y) and `code`.\n\n```ts\nx\n```';
		const plain = stripMarkdown(md);
		expect(plain).not.toMatch(/[#*_`[\]]|https/);
		expect(words(plain)).toEqual([
			'Title',
			'quoted',
			'item',
			'bold',
			'and',
			'it',
			'See',
			'the',
			'docs',
			'and',
			'code',
			'x',
		]);
	});

	it('counts words with apostrophes, hyphens and accents as one word each', () => {
		expect(words("It's a guarda-chuva, não é? 42")).toEqual(["It's", 'a', 'guarda-chuva', 'não', 'é', '42']);
	});

	it('splits sentences at . ! ? … and at blank lines', () => {
		expect(sentences('One. Two? Three! Four… Five\n\nHeading\n\nSix.')).toEqual([
			'One.',
			'Two?',
			'Three!',
			'Four…',
			'Five',
			'Heading',
			'Six.',
		]);
	});

	it('chunks at paragraph and sentence boundaries without splitting a sentence', () => {
		const para = Array.from({ length: 10 }, (_, i) => `Sentence number ${i} is here.`).join(' ');
		const text = `${para}\n\nShort paragraph.`;
		const parts = chunks(text, 100);
		expect(parts.length).toBeGreaterThan(2);
		for (const p of parts) expect(p.length).toBeLessThanOrEqual(100);
		expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(text.replace(/\s+/g, ' '));
		expect(chunks('', 10)).toEqual([]);
		expect(() => chunks('x', 0)).toThrow(RangeError);
	});
});

describe('stats', () => {
	it('counts characters, words, sentences and reading time', () => {
		expect(textStats('Hello world. Bye.')).toEqual({ characters: 17, words: 3, sentences: 2, readingSeconds: 1 });
		const long = 'word '.repeat(460);
		expect(textStats(long).readingSeconds).toBe(120);
	});

	it('sums chunk stats with reading time from the total words', () => {
		const total = sumStats([textStats('a b c.'), textStats('d e.')]);
		expect(total).toMatchObject({ words: 5, sentences: 2, readingSeconds: 2 });
	});
});

describe('keywords', () => {
	it('leaves out English and Portuguese stopwords, numbers and short words', () => {
		expect(contentTerms('The tender and the PRICE of 2024 é para uma obra')).toEqual(['tender', 'price', 'obra']);
	});

	it('ranks by frequency with alphabetical ties', () => {
		const counts = countTerms('beta alpha beta gamma alpha beta delta');
		expect(topKeywords(counts, 3)).toEqual(['beta', 'alpha', 'delta']);
	});

	it('never offers "every", "new" or "long" (or "novo", "longo") as a keyword, however often they occur', () => {
		const text =
			'Every new ledger keeps a long record. Every new clerk reads the long ledger. Todo novo livro é longo. '.repeat(
				5,
			);
		const keywords = topKeywords(countTerms(text), 5);
		expect(keywords).toEqual(['ledger', 'clerk', 'keeps', 'livro', 'reads']);
		for (const word of ['every', 'new', 'long', 'novo', 'longo']) expect(keywords).not.toContain(word);
	});
});

describe('summary and language', () => {
	it('picks the sentences carrying the frequent terms, in document order', () => {
		const text =
			'Tenders need prices. The weather was nice yesterday. Prices in tenders must include delivery. Lunch was late. Delivery of tenders follows prices.';
		const summary = summarise(text, countTerms(text), 2);
		expect(summary).toBe('Prices in tenders must include delivery. Delivery of tenders follows prices.');
		expect(summarise('Only one.', countTerms('Only one.'), 3)).toBe('Only one.');
	});

	it('keeps a title on its own line apart from the first sentence, and out of the summary', () => {
		expect(sentences('The Ledger\nEvery evening the clerk adds a line.\nIt never ends.')).toEqual([
			'The Ledger',
			'Every evening the clerk adds a line.',
			'It never ends.',
		]);
		// A sentence wrapped across lines is still one sentence.
		expect(sentences('The clerk adds\nanother line.')).toEqual(['The clerk adds another line.']);
		const text = 'The Ledger\nEvery evening the ledger grows. The ledger is long. Nobody reads the ledger.';
		const summary = summarise(text, countTerms(text), 3);
		expect(summary).not.toMatch(/Ledger Every/);
		expect(summary.startsWith('Every evening')).toBe(true);
	});

	it('never repeats a sentence, even one the document repeats', () => {
		const text =
			Array.from({ length: 5 }, () => 'Tenders need prices and delivery.').join(' ') +
			' Prices matter. Lunch was late.';
		const summary = summarise(text, countTerms(text), 3);
		expect(summary.match(/Tenders need prices and delivery\./g)).toHaveLength(1);
		expect(summary).toContain('Prices matter.');
	});

	it('tells English from Portuguese', () => {
		expect(guessLanguage('The contract is for the delivery of the materials to the site.')).toBe('en');
		expect(guessLanguage('O contrato é para a entrega dos materiais na obra, que fica em Lisboa.')).toBe('pt');
		expect(guessLanguage('xyzzy plugh')).toBeNull();
	});
});

describe('formats and PDF', () => {
	it('picks the reader from the MIME type, then the extension', () => {
		expect(documentFormat('application/pdf', 'x')).toBe('pdf');
		expect(documentFormat('', 'notes.MD')).toBe('markdown');
		expect(documentFormat('text/plain; charset=utf-8', 'a')).toBe('text');
		expect(documentFormat('application/octet-stream', 'a.txt')).toBe('text');
		expect(documentFormat('image/png', 'a.png')).toBeNull();
	});

	it('reads every PDF page in order and reports a real page counter', async () => {
		const bytes = await pdfWith(['First page text.', 'Second page text.', 'Third page text.']);
		const seen: [number, number][] = [];
		const pages = await pdfPages(bytes, { onPage: (done, total) => void seen.push([done, total]) });
		expect(pages).toEqual(['First page text.', 'Second page text.', 'Third page text.']);
		expect(seen).toEqual([
			[1, 3],
			[2, 3],
			[3, 3],
		]);
		// The caller's buffer is still usable (PDF.js detaches what it is given).
		expect(bytes.byteLength).toBeGreaterThan(0);
	});

	it('joins ligatures a PDF typesets as separate runs: "modi fi ed" reads "modified"', async () => {
		// A typesetter draws the fi ligature as its own glyph run; PDF.js hands it back as its own item.
		const doc = await PDFDocument.create();
		const font = await doc.embedFont(StandardFonts.Helvetica);
		const page = doc.addPage();
		let x = 50;
		for (const run of ['The report was modi', 'fi', 'ed twice; the', ' ', 'fi', 'nal', '  ', 'fl', 'ow is set.']) {
			page.drawText(run, { x, y: 700, size: 12, font });
			x += font.widthOfTextAtSize(run, 12);
		}
		// And words drawn apart, with no space character between them, stay apart.
		page.drawText('Separate', { x: 50, y: 650, size: 12, font });
		page.drawText('words', { x: 120, y: 650, size: 12, font });
		const [text] = await pdfPages(await doc.save());
		expect(text!.replace(/\s+/g, ' ')).toBe('The report was modified twice; the final flow is set. Separate words');
	});

	it('turns ligature characters into letters and leaves real words alone', () => {
		expect(joinLigatures('e\uFB03cient \uFB02ow')).toBe('efficient flow');
		expect(joinLigatures('if fine, off we go')).toBe('if fine, off we go');
	});

	it('stops between pages when the signal aborts', async () => {
		const bytes = await pdfWith(['a', 'b', 'c']);
		const controller = new AbortController();
		const read: number[] = [];
		await expect(
			pdfPages(bytes, {
				signal: controller.signal,
				onPage: (done) => {
					read.push(done);
					if (done === 1) controller.abort(new Error('stop'));
				},
			}),
		).rejects.toThrow('stop');
		expect(read).toEqual([1]);
	});

	it('refuses what is not a PDF with UnreadablePdfError', async () => {
		await expect(pdfPages(new TextEncoder().encode('not a pdf'))).rejects.toBeInstanceOf(UnreadablePdfError);
	});

	it('refuses binary bytes named .txt or .md with NotTextError, but still reads Latin-1 text', async () => {
		const random = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256);
		await expect(extractDocument(random, 'text')).rejects.toBeInstanceOf(NotTextError);
		await expect(extractDocument(new Uint8Array([104, 105, 0, 33]), 'markdown')).rejects.toBeInstanceOf(NotTextError);
		const latin1 = new Uint8Array([
			...new TextEncoder().encode('Licita'),
			0xe7,
			0xe3,
			0x6f,
			0x20,
			0x61,
			0x62,
			0x65,
			0x72,
			0x74,
			0x61,
		]);
		expect((await extractDocument(latin1, 'text')).text).toBe('Licita\uFFFD\uFFFDo aberta');
		expect(looksBinary('plain words\tand a tab\r\n')).toBe(false);
	});

	it('extracts markdown as prose and text as is', async () => {
		const md = await extractDocument(new TextEncoder().encode('# Hi\n\n**Bold** text.'), 'markdown');
		expect(md).toEqual({ text: 'Hi\n\nBold text.', pages: null, format: 'markdown' });
		const pdf = await extractDocument(await pdfWith(['One.', 'Two.']), 'pdf');
		expect(pdf).toEqual({ text: 'One.\n\nTwo.', pages: 2, format: 'pdf' });
	});
});

describe('analysis', () => {
	const text = Array.from(
		{ length: 6 },
		(_, i) => `Paragraph ${i} talks about tenders and prices. It has two sentences.`,
	).join('\n\n');

	it('analyses chunk by chunk with a real counter and totals that match the whole text', async () => {
		const seen: number[] = [];
		const analysis = await analyseText(text, {
			chunkChars: 150,
			onChunk: (done, total) => void seen.push(done / total),
		});
		expect(analysis.chunks.length).toBe(seen.length);
		expect(seen.at(-1)).toBe(1);
		expect(seen).toEqual([...seen].sort((a, b) => a - b));
		const report = buildReport({ text, pages: null, format: 'text' }, analysis);
		expect(report.stats.words).toBe(words(text).length);
		// One count of characters: the document's, the number the job page shows while it runs.
		expect(report.stats.characters).toBe(documentCharacters({ text, pages: null, format: 'text' }));
		expect(report.stats.characters).toBe(text.length);
		expect(report.stats.sentences).toBe(12);
		expect(report.stats.chunks).toBe(analysis.chunks.length);
		expect(report.stats.language).toBe('en');
		expect(report.keywords.slice(0, 3)).toEqual(['paragraph', 'prices', 'sentences']);
		expect(report.summary.length).toBeGreaterThan(0);
	});

	it('waits the model-call stand-in per chunk and stops it when cancelled', async () => {
		const controller = new AbortController();
		let chunksDone = 0;
		const started = performance.now();
		const run = analyseText(text, {
			chunkChars: 150,
			modelMs: 10_000,
			signal: controller.signal,
			onChunk: () => void chunksDone++,
		});
		queueMicrotask(() => controller.abort(new Error('cancelled by the user')));
		await expect(run).rejects.toThrow('cancelled by the user');
		expect(chunksDone).toBe(0);
		expect(performance.now() - started).toBeLessThan(5_000);
	});

	it('reads DEMO_MODEL_MS, defaulting to 300 ms', async () => {
		expect(modelDelayMs(undefined)).toBe(DEFAULT_MODEL_MS);
		expect(modelDelayMs('')).toBe(300);
		expect(modelDelayMs('25')).toBe(25);
		expect(() => modelDelayMs('-1')).toThrow(RangeError);
		expect(() => modelDelayMs('soon')).toThrow(RangeError);
		const controller = new AbortController();
		controller.abort(new Error('already'));
		await expect(modelCallStandIn(10, controller.signal)).rejects.toThrow('already');
	});
});
