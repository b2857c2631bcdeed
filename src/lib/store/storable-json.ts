/**
 * What PostgreSQL's jsonb cannot hold, found before the round trip: a NUL
 * character (\u0000) or a lone UTF-16 surrogate in any key or string (22P05 /
 * 22P02 from the database, naming nothing), and numbers JSON has no text for
 * (NaN, ±Infinity, which JSON.stringify turns into null). One walk, used by
 * every write of a JSON value the caller gives.
 */
import { invalid } from './input-checks.ts';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored as PostgreSQL text, or null. */
export function textProblem(text: string): string | null {
	if (text.includes('\u0000')) return 'holds a NUL character';
	if (LONE_SURROGATE.test(text)) return 'holds a lone UTF-16 surrogate';
	return null;
}

function problemIn(value: unknown, depth: number): string | null {
	if (typeof value === 'string') return textProblem(value);
	if (typeof value === 'number') return Number.isFinite(value) ? null : `holds ${String(value)}, which JSON cannot`;
	if (typeof value !== 'object' || value === null || depth > 100) return null;
	if (Array.isArray(value)) {
		for (const v of value) {
			const p = problemIn(v, depth + 1);
			if (p) return p;
		}
		return null;
	}
	for (const [k, v] of Object.entries(value)) {
		const p = textProblem(k) ?? problemIn(v, depth + 1);
		if (p) return p;
	}
	return null;
}

/**
 * Throws InvalidJobInputError naming `field` when `value` holds what jsonb cannot store.
 *
 * @example
 * checkStorableJson('metadata', { note: 'a\u0000b' }); // throws: metadata holds a NUL character
 */
export function checkStorableJson(field: string, value: unknown): void {
	const problem = problemIn(value, 0);
	if (problem) throw invalid(field, `${field} ${problem}: PostgreSQL cannot store it`);
}
