/**
 * A guess at the document's language from its function words: enough to tell
 * English from Portuguese, which is all the demo shows.
 */
import { STOPWORDS_EN, STOPWORDS_PT } from './stopwords.ts';
import { words } from './text.ts';

/**
 * 'en', 'pt', or null when neither list matches enough words (under 5%).
 *
 * @example
 * guessLanguage('O contrato é para a entrega de materiais.'); // 'pt'
 */
export function guessLanguage(text: string): 'en' | 'pt' | null {
	let en = 0;
	let pt = 0;
	const all = words(text);
	for (const w of all) {
		const t = w.toLocaleLowerCase('und');
		if (STOPWORDS_EN.has(t)) en++;
		if (STOPWORDS_PT.has(t)) pt++;
	}
	if (all.length === 0 || Math.max(en, pt) / all.length < 0.05) return null;
	return en >= pt ? 'en' : 'pt';
}
