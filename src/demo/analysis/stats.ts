/**
 * Counts per chunk and for the whole document: words, sentences, characters
 * and reading time. Pure functions.
 */
import { sentences, words } from './text.ts';

/** Adult silent reading speed used for the estimate (words per minute). */
export const WORDS_PER_MINUTE = 230;

/**
 * What the analysis counts in a piece of text.
 *
 * @example
 * const s: TextStats = { characters: 11, words: 2, sentences: 1, readingSeconds: 1 };
 */
export interface TextStats {
	characters: number;
	words: number;
	sentences: number;
	/** Seconds an adult needs to read it at {@link WORDS_PER_MINUTE}, rounded up. */
	readingSeconds: number;
}

/**
 * Counts one piece of text.
 *
 * @example
 * textStats('Hello world. Bye.'); // { characters: 17, words: 3, sentences: 2, readingSeconds: 1 }
 */
export function textStats(text: string): TextStats {
	const w = words(text).length;
	return {
		characters: text.length,
		words: w,
		sentences: sentences(text).length,
		readingSeconds: Math.ceil((w / WORDS_PER_MINUTE) * 60),
	};
}

/**
 * Adds up the stats of several chunks (reading time from the total words, so
 * rounding does not accumulate).
 *
 * @example
 * sumStats([textStats('a b.'), textStats('c.')]).words; // 3
 */
export function sumStats(parts: readonly TextStats[]): TextStats {
	const total = parts.reduce(
		(acc, p) => ({
			characters: acc.characters + p.characters,
			words: acc.words + p.words,
			sentences: acc.sentences + p.sentences,
		}),
		{ characters: 0, words: 0, sentences: 0 },
	);
	return { ...total, readingSeconds: Math.ceil((total.words / WORDS_PER_MINUTE) * 60) };
}
