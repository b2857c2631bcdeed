/**
 * Text in, text out: decoding an upload and splitting it into the units the
 * analysis counts (words, sentences, chunks). Pure functions, no I/O.
 */

/** The MIME types the demo reads as text (PDF goes through pdf.ts). */
export const TEXT_MIME = ['text/plain', 'text/markdown', 'text/x-markdown'] as const;

/**
 * True when decoded "text" is really binary: it holds a NUL (which PostgreSQL
 * text cannot store: 22021) or mostly undecodable bytes and control
 * characters. A Latin-1 file, with a few U+FFFD marks, is still text.
 *
 * @example
 * looksBinary(decodeText(crypto.getRandomValues(new Uint8Array(4096)))); // true
 */
export function looksBinary(text: string): boolean {
	if (text.includes('\u0000')) return true;
	if (text.length === 0) return false;
	// C0 controls other than tab, LF, FF and CR, DEL, and the replacement character.
	let odd = 0;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d) || c === 0x7f || c === 0xfffd) odd++;
	}
	return odd / text.length > 0.3;
}

/**
 * Decodes bytes as UTF-8 (a BOM is dropped; invalid sequences become U+FFFD
 * rather than failing, so a Latin-1 file still reads, with marks).
 *
 * @example
 * decodeText(new TextEncoder().encode('olá')); // 'olá'
 */
export function decodeText(bytes: Uint8Array): string {
	return new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes).normalize('NFC');
}

/**
 * Markdown to plain prose: drops code fences, headings' hashes, emphasis
 * marks, link targets and HTML tags, so counts are of words a reader reads.
 *
 * @example
 * stripMarkdown('# Title\n\nSee [the docs](https://x.y) **now**.'); // 'Title\n\nSee the docs now.'
 */
export function stripMarkdown(markdown: string): string {
	return markdown
		.replace(/^```.*$/gm, '')
		.replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/<[^>]+>/g, '')
		.replace(/^\s{0,3}#{1,6}\s+/gm, '')
		.replace(/^\s{0,3}>\s?/gm, '')
		.replace(/^\s*[-*+]\s+/gm, '')
		.replace(/(\*\*|__|\*|_|`)(?=\S)([^*_`]*?\S)\1/g, '$2');
}

/** Letters (any script), digits, and inner apostrophes/hyphens: "don't", "guarda-chuva". */
const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

/**
 * The words of a text, in order, as written.
 *
 * @example
 * words("It's a guarda-chuva."); // ["It's", 'a', 'guarda-chuva']
 */
export function words(text: string): string[] {
	return text.match(WORD) ?? [];
}

/**
 * Ligature glyphs (ﬁ ﬂ ﬀ ﬃ ﬄ) as their letters, so "eﬃcient" is found as
 * "efficient". (A ligature typeset as a run of its own is joined where the
 * PDF is read, by position: see pdf.ts.)
 *
 * @example
 * joinLigatures('eﬃcient ﬂow'); // 'efficient flow'
 */
export function joinLigatures(text: string): string {
	return text.replace(/[\uFB00-\uFB06]/g, (c) => c.normalize('NFKC'));
}

/** A line that stands alone as a title: short, capitalised, no closing punctuation, followed by a capitalised line. */
const TITLE_LINE = /^(\p{Lu}[^\n.!?…:;,]{0,80}?)[ \t]*\n(?=[ \t]*[\p{Lu}\p{N}“"])/gmu;

/**
 * Splits prose into sentences at . ! ? … (and at blank lines, which end a
 * heading or a list item), keeping each sentence's own punctuation. A title
 * on its own line ("The Ledger" above "Every evening…") is a sentence of its
 * own, never glued to the first sentence after it.
 *
 * @example
 * sentences('One. Two? Three'); // ['One.', 'Two?', 'Three']
 * sentences('The Ledger\nEvery evening it grows.'); // ['The Ledger', 'Every evening it grows.']
 */
export function sentences(text: string): string[] {
	const out: string[] = [];
	for (const block of text.replace(TITLE_LINE, '$1\n\n').split(/\n\s*\n/)) {
		const flat = block.replace(/\s+/g, ' ').trim();
		if (!flat) continue;
		for (const s of flat.match(/[^.!?…]+(?:[.!?…]+["'”’)\]]*|$)/g) ?? []) {
			const t = s.trim();
			if (words(t).length > 0) out.push(t);
		}
	}
	return out;
}

/**
 * Cuts a text into chunks of about `targetChars`, at paragraph boundaries when
 * it can and at sentence boundaries when a paragraph is too long, so no
 * sentence is split across chunks (one longer than the target stays whole).
 *
 * @example
 * chunks('a. b.\n\nc.', 3); // ['a. b.', 'c.']
 */
export function chunks(text: string, targetChars = 1500): string[] {
	if (!(targetChars > 0)) throw new RangeError(`targetChars must be positive, got ${targetChars}`);
	const pieces: string[] = [];
	for (const paragraph of text.split(/\n\s*\n/)) {
		const p = paragraph.trim();
		if (!p) continue;
		if (p.length <= targetChars) pieces.push(p);
		else pieces.push(...sentences(p));
	}
	const out: string[] = [];
	let current = '';
	for (const piece of pieces) {
		if (current && current.length + 2 + piece.length > targetChars) {
			out.push(current);
			current = piece;
		} else {
			current = current ? `${current}\n\n${piece}` : piece;
		}
	}
	if (current) out.push(current);
	return out;
}
