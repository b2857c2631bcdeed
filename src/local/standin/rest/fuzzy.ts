/**
 * The "Perhaps you meant ..." hints of PostgREST (Error.hs `getFuzzyHint`).
 * Upstream uses Data.FuzzySet (n-gram cosine, re-ranked by Levenshtein);
 * this approximation ranks by Levenshtein similarity only, with upstream's
 * thresholds (0.75 for names, 0.33 for parameter lists).
 */

function levenshtein(a: string, b: string): number {
	const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
	for (let i = 1; i <= a.length; i++) {
		let diag = prev[0]!;
		prev[0] = i;
		for (let j = 1; j <= b.length; j++) {
			const up = prev[j]!;
			prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
			diag = up;
		}
	}
	return prev[b.length]!;
}

export function similarity(a: string, b: string): number {
	const x = a.toLowerCase();
	const y = b.toLowerCase();
	const longest = Math.max(x.length, y.length);
	return longest === 0 ? 1 : 1 - levenshtein(x, y) / longest;
}

/** The best candidate scoring at least `minScore`, or null. */
export function closest(candidates: readonly string[], wanted: string, minScore: number): string | null {
	let best: string | null = null;
	let bestScore = -1;
	for (const c of candidates) {
		const score = similarity(c, wanted);
		if (score > bestScore) {
			best = c;
			bestScore = score;
		}
	}
	return bestScore >= minScore ? best : null;
}
