/**
 * A limit the TypeScript side needs before a round trip. The database is the
 * source of truth (supabase_jobs.job_limits(),
 * supabase/schemas/02_limits_and_checks.sql); sentences over its length are
 * shortened there, not here.
 */

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
