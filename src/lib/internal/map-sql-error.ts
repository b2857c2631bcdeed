/**
 * SQLSTATE -> error class. One table for both adapters: postgres.js throws a
 * PostgresError ({ code, message, detail, hint }) and PostgREST answers a body
 * ({ code, message, details, hint }); both carry the SQLSTATE in `code`.
 */
import {
	IllegalTransitionError,
	InvalidJobInputError,
	JobAlreadyFinishedError,
	JobCancelledError,
	JobNotFoundError,
	JobNotRunningError,
	NoOpenQuestionError,
	NotRetryableError,
	PermissionDeniedError,
	QuotaExceededError,
	StaleAfterRequiredError,
	UnknownJobTableError,
	isJobError,
	type JobError,
	type JobErrorOptions,
} from '../errors.ts';

type Make = (message: string, options: JobErrorOptions) => JobError;

/**
 * The SQLSTATEs the job functions raise on purpose, and what each becomes.
 *
 * @example
 * const e = SQLSTATE_TO_ERROR.PT404?.('job not found', {}); // JobNotFoundError
 */
export const SQLSTATE_TO_ERROR: Readonly<Record<string, Make>> = {
	PT404: (m, o) => new JobNotFoundError(m, o),
	PT409: (m, o) => new JobAlreadyFinishedError(m, o),
	PT410: (m, o) => new JobCancelledError(m, o),
	PT429: (m, o) => new QuotaExceededError(m, o),
	'55000': (m, o) => new JobNotRunningError(m, o),
	SJ001: (m, o) => new IllegalTransitionError(m, o),
	SJ002: (m, o) => new NotRetryableError(m, o),
	SJ003: (m, o) => new NoOpenQuestionError(m, o),
	'22023': (m, o) => new InvalidJobInputError(m, o),
	// Raised by PostgreSQL itself rather than on purpose, but still bad input that
	// changed nothing: mapped so every adapter throws the same class for it.
	'22P02': (m, o) => new InvalidJobInputError(m, o), // invalid_text_representation: 'abc'::uuid
	'22021': (m, o) => new InvalidJobInputError(m, o), // character_not_in_repertoire: a NUL byte in text (postgres.js)
	'22P05': (m, o) => new InvalidJobInputError(m, o), // untranslatable_character: "\u0000" in JSON text (PostgREST)
	'42703': (m, o) => new InvalidJobInputError(m, o), // undefined_column: a mapped column the table lacks
	'42601': (m, o) => new InvalidJobInputError(m, o), // syntax_error: e.g. one column assigned twice
	'54023': (m, o) => new InvalidJobInputError(m, o), // too_many_arguments: a call over the 100-argument limit
	'22004': (m, o) => new StaleAfterRequiredError(m, o),
	'42P01': (m, o) => new UnknownJobTableError(m, o),
	'42501': (m, o) => new PermissionDeniedError(m, o),
};

/**
 * Anything shaped like a postgres.js PostgresError or a PostgREST error body.
 */
export interface SqlErrorLike {
	code?: unknown;
	message?: unknown;
	detail?: unknown;
	details?: unknown;
	hint?: unknown;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * Translates a database error into the matching {@link JobError}; anything it
 * does not recognise (another SQLSTATE, a network error, a JobError already)
 * comes back unchanged, so callers can always `throw fromPostgresError(e)`.
 *
 * @example
 * try {
 *   return await sql`select * from public.job_get(${id})`;
 * } catch (e) {
 *   throw fromPostgresError(e);
 * }
 * @example
 * const { data, error } = await supabase.rpc('job_get', { id });
 * if (error) throw fromPostgresError(error);
 */
export function fromPostgresError<E>(e: E): JobError | E {
	if (typeof e !== 'object' || e === null || isJobError(e)) return e;
	const like = e as SqlErrorLike;
	if (typeof like.code !== 'string') return e;
	const code = like.code.toUpperCase();
	const make = Object.hasOwn(SQLSTATE_TO_ERROR, code) ? SQLSTATE_TO_ERROR[code] : undefined;
	if (!make) return e;
	return make(text(like.message) ?? `database error ${like.code}`, {
		cause: e,
		details: text(like.detail) ?? text(like.details),
		hint: text(like.hint),
	});
}
