/**
 * Limits the TypeScript side applies before a round trip. The database is
 * the source of truth: these mirror supabase_jobs.limits() in
 * supabase/migrations/20261130140100_job_tables.sql and must change with it.
 */

/**
 * The longest sentence (`error`, a cancel `reason`) the job functions take,
 * in characters (code points, as PostgreSQL's char_length counts them).
 * Mirrors `error_max` of supabase_jobs.limits(): SQL is the source.
 *
 * @internal
 * @example
 * ```ts
 * if ([...sentence].length > ERROR_MAX_CHARS) sentence = shortenSentence(sentence);
 * ```
 */
export const ERROR_MAX_CHARS = 2000;

const ELLIPSIS = '…';

/**
 * Cuts a sentence for the user down to {@link ERROR_MAX_CHARS}, ending it
 * with an ellipsis, so a long exception message can never make the database
 * refuse a close. Counts code points, so a surrogate pair is never split.
 *
 * @internal
 * @example
 * ```ts
 * await store.fail(id, shortenSentence(`I could not read the file: ${e.message}`));
 * ```
 */
export function shortenSentence(text: string, max: number = ERROR_MAX_CHARS): string {
	// A UTF-16 length within the limit is a code-point length within it too.
	if (text.length <= max) return text;
	const points = Array.from(text);
	if (points.length <= max) return text;
	return points.slice(0, max - ELLIPSIS.length).join('') + ELLIPSIS;
}

/**
 * The largest page job_list_recent serves. Mirrors `list_max` of
 * supabase_jobs.limits(): SQL is the source.
 *
 * @internal
 * @example
 * ```ts
 * const ask = limit < LIST_MAX ? limit + 1 : limit;
 * ```
 */
export const LIST_MAX = 1000;
