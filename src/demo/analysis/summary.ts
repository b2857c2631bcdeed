/**
 * An extractive summary: the sentences that carry the document's most
 * frequent content words, in the order they appear. No model, no network.
 */
import { contentTerms, type TermCounts } from './keywords.ts';
import { sentences } from './text.ts';

/**
 * Picks up to `maxSentences` sentences scoring highest by the document-wide
 * frequency of their content terms (divided by the square root of their length,
 * so long sentences do not win by size alone), and returns them in document order.
 *
 * @example
 * summarise('Cats purr. Dogs bark. Cats sleep a lot.', countTerms('Cats purr. Dogs bark. Cats sleep a lot.'), 1);
 * // 'Cats sleep a lot.'
 */
export function summarise(text: string, counts: TermCounts, maxSentences = 3): string {
	const every = sentences(text);
	// Titles and headings (no closing punctuation) only when there is nothing else to say.
	const closed = every.filter((s) => /[.!?…]["'”’)\]]*$/.test(s));
	const all = closed.length >= Math.min(maxSentences, every.length) ? closed : every;
	if (all.length <= maxSentences) return all.join(' ');
	const scored = all.map((s, index) => {
		const terms = contentTerms(s);
		const weight = terms.reduce((sum, t) => sum + (counts.get(t) ?? 0), 0);
		return { index, s, score: terms.length ? weight / Math.sqrt(terms.length) : 0 };
	});
	// A sentence repeated across the document would otherwise win every slot.
	const seen = new Set<string>();
	const unique = scored
		.sort((a, b) => b.score - a.score || a.index - b.index)
		.filter((x) => {
			const key = x.s.trim().toLowerCase();
			if (seen.has(key)) return false;
			seen.add(key);
			return true;
		});
	return unique
		.slice(0, maxSentences)
		.sort((a, b) => a.index - b.index)
		.map((x) => x.s)
		.join(' ');
}
