/**
 * Keywords by frequency, with English and Portuguese function words left out.
 * Pure functions; counts can be merged across chunks.
 */
import { STOPWORDS } from './stopwords.ts';
import { words } from './text.ts';

/** Term -> occurrences. */
export type TermCounts = Map<string, number>;

/**
 * Lower-cased content words of a text (no stopwords, no numbers, at least 3 letters).
 *
 * @example
 * contentTerms('The Tender and the PRICE of 2024'); // ['tender', 'price']
 */
export function contentTerms(text: string, stopwords: ReadonlySet<string> = STOPWORDS): string[] {
	const out: string[] = [];
	for (const w of words(text)) {
		const term = w.toLocaleLowerCase('und').replace(/^['’-]+|['’-]+$/g, '');
		if (term.length < 3 || /^\p{N}+$/u.test(term) || stopwords.has(term)) continue;
		out.push(term);
	}
	return out;
}

/**
 * Counts the content terms of a text, into `into` when given (to merge chunks).
 *
 * @example
 * const counts = countTerms('price price tender'); // Map { 'price' => 2, 'tender' => 1 }
 */
export function countTerms(text: string, into: TermCounts = new Map()): TermCounts {
	for (const term of contentTerms(text)) into.set(term, (into.get(term) ?? 0) + 1);
	return into;
}

/**
 * The `limit` most frequent terms, ties broken alphabetically so the answer is stable.
 *
 * @example
 * topKeywords(countTerms('b a b c a b'), 2); // ['b', 'a']
 */
export function topKeywords(counts: TermCounts, limit = 8): string[] {
	return [...counts.entries()]
		.sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
		.slice(0, limit)
		.map(([term]) => term);
}
