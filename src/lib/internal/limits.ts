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

/** Mirrors supabase_jobs.max_attempts_max(). */
export const MAX_ATTEMPTS_MAX = 100;
/** Mirrors supabase_jobs.kind_max(). */
export const KIND_MAX = 64;
/** Mirrors supabase_jobs.kind_pattern(). */
export const KIND_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/;
/** Mirrors supabase_jobs.locale_pattern(). */
export const LOCALE_PATTERN = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/;
/** Mirrors supabase_jobs.tags_max() and tag_max_length(). */
export const TAGS_MAX = 10;
export const TAG_MAX_LENGTH = 64;
/** Mirrors supabase_jobs.idempotency_key_max(): the longest idempotency or concurrency key. */
export const CONCURRENCY_KEY_MAX = 200;
/**
 * Mirrors supabase_jobs.duration_max_ms() (3650 days): the longest delayMs,
 * expireAfterMs and idempotencyTtlMs; a runAt lies at most this far from now.
 */
export const DURATION_MAX_MS = 315_360_000_000;
/** A priority is a smallint: supabase_jobs.priority_min()/priority_max(). A user's is bounded further by the kind. */
export const PRIORITY_MIN = -32768;
export const PRIORITY_MAX = 32767;
/** Mirrors supabase_jobs.log_lines_max(): log lines kept per job. */
export const LOG_LINES_MAX = 500;
/** Mirrors supabase_jobs.log_message_max(). */
export const LOG_MESSAGE_MAX = 2000;
/** Mirrors supabase_jobs.log_fields_max_bytes(). */
export const LOG_FIELDS_MAX_BYTES = 4096;
/** Mirrors supabase_jobs.batch_max(): the most rows one batch call writes. */
export const BATCH_MAX = 5000;
/** Mirror supabase_jobs.rate_starts_max(), rate_per_ms_min() and rate_per_ms_max(): a rate limit's bounds. */
export const RATE_STARTS_MAX = 100_000;
export const RATE_PER_MS_MIN = 100;
export const RATE_PER_MS_MAX = 86_400_000;
/** Mirrors supabase_jobs.metadata_max_bytes(): a job's metadata, as JSON text. */
export const METADATA_MAX_BYTES = 16384;
/** Mirrors supabase_jobs.stream_max_bytes(): UTF-8 bytes of all the streams of one attempt of a job. */
export const STREAM_MAX_BYTES = 4194304;
/** Mirrors supabase_jobs.stream_chunk_max_bytes(): one append. */
export const STREAM_CHUNK_MAX_BYTES = 65536;
/** Mirrors the stream name pattern of job_stream_append. */
export const STREAM_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
