/**
 * SQLSTATE -> error class. One table for both adapters: postgres.js throws a
 * PostgresError ({ code, message, detail, hint }) and PostgREST answers a body
 * ({ code, message, details, hint }); both carry the SQLSTATE in `code`.
 */
import {
	DatabaseError,
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
	TimeoutError,
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
	'22003': (m, o) => new InvalidJobInputError(m, o), // numeric_value_out_of_range: 1e300 as an integer argument
	'22007': (m, o) => new InvalidJobInputError(m, o), // invalid_datetime_format: a time the database cannot read
	'22008': (m, o) => new InvalidJobInputError(m, o), // datetime_field_overflow: a time past year 294276
	'22009': (m, o) => new InvalidJobInputError(m, o), // invalid_time_zone_displacement_value
	'22015': (m, o) => new InvalidJobInputError(m, o), // interval_field_overflow: a 1e300-second interval
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

/**
 * The SQL argument (or job_enqueue_many item field) each TypeScript option is
 * sent as, in reverse: an error the database raises names its own argument
 * (`max_running`, `items[3].delay_ms`), and both adapters report the field the
 * caller wrote (`maxRunning`, `items[3].delayMs`). Names alike in both
 * (`kind`, `params`, `tags`, `priority`) are not listed.
 *
 * @internal
 */
export const SQL_FIELD_TO_TS: Readonly<Record<string, string>> = {
	max_attempts: 'maxAttempts',
	owner_id: 'ownerId',
	run_at: 'runAt',
	delay: 'delayMs',
	delay_ms: 'delayMs',
	expire_after: 'expireAfterMs',
	expire_after_ms: 'expireAfterMs',
	concurrency_key: 'concurrencyKey',
	idempotency_key: 'idempotencyKey',
	key_ttl: 'idempotencyTtlMs',
	expected_seconds: 'expectedSeconds',
	parent_id: 'parentId',
	max_running: 'maxRunning',
	max_running_per_key: 'maxRunningPerKey',
	heartbeat_ms: 'heartbeatMs',
	eta_seconds: 'etaSeconds',
	error_code: 'errorCode',
	stale_after: 'staleAfterMs',
	created_after: 'createdAfter',
	created_before: 'createdBefore',
	ended_before: 'endedBefore',
	per_ms: 'perMs',
};

/** `items[3].delay_ms` -> `items[3].delayMs`: the last part of the name through {@link SQL_FIELD_TO_TS}. */
export function typeScriptField(field: string): string {
	const dot = field.lastIndexOf('.');
	const name = field.slice(dot + 1);
	const ts = Object.hasOwn(SQL_FIELD_TO_TS, name) ? SQL_FIELD_TO_TS[name]! : name;
	return field.slice(0, dot + 1) + ts;
}

const codeOf = (e: unknown): string | null => {
	const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
	return typeof code === 'string' && code !== '' ? code : null;
};

/**
 * An owner id that is no user of the project breaks the job's foreign key to
 * auth.users (23503): the database names only the constraint, so it is read
 * here as the bad input it is, naming `owner_id` (the TypeScript side then says
 * `ownerId`). Nothing was written: the statement failed whole.
 */
function ownerNotAUser(e: unknown): SqlErrorLike | null {
	const like = (typeof e === 'object' && e !== null ? e : {}) as SqlErrorLike & { constraint_name?: unknown };
	if (like.code !== '23503') return null;
	const said = `${String(like.message ?? '')} ${String(like.constraint_name ?? '')}`;
	if (!said.includes('owner_id_fkey')) return null;
	return {
		code: '22023',
		message: 'owner_id is not a user of this project',
		detail: 'field=owner_id',
		hint: 'Nothing was written.',
	};
}

/**
 * A statement the database stopped (SQLSTATE 57014: statement_timeout, which
 * hosted Supabase sets per API role, or a cancel) as a {@link TimeoutError}
 * naming the call; null for any other error.
 */
function statementTimeout(e: unknown, call: string | undefined): TimeoutError | null {
	if (codeOf(e) !== '57014') return null;
	const like = e as SqlErrorLike;
	const said = text(like.message) ?? 'canceling statement due to statement timeout';
	return new TimeoutError(
		`${call ?? 'the call'}: ${said} (nothing it did was kept; make it smaller or give the role more time)`,
		{
			cause: e,
			call: call ?? null,
			sqlstate: '57014',
			details: text(like.detail) ?? text(like.details),
			hint: text(like.hint),
		},
	);
}

/**
 * What both adapters throw for any failure of a call: always a {@link JobError}.
 * A known SQLSTATE becomes its class (fromPostgresError); a 22023 names the
 * TypeScript field (the message says it too); a statement timeout (57014) is a
 * {@link TimeoutError} naming `call`; anything else (a lost connection, a
 * PostgREST error without a SQLSTATE) becomes a {@link DatabaseError} keeping
 * its code, message and the original as `cause`.
 *
 * @internal
 */
export function adapterError(e: unknown, call?: string): JobError {
	const timedOut = statementTimeout(e, call);
	if (timedOut) return timedOut;
	const mapped = fromPostgresError(ownerNotAUser(e) ?? e);
	if (mapped instanceof InvalidJobInputError && mapped.field !== null) {
		const field = typeScriptField(mapped.field);
		if (field === mapped.field) return mapped;
		const sqlName = mapped.field.slice(mapped.field.lastIndexOf('.') + 1);
		const tsName = field.slice(field.lastIndexOf('.') + 1);
		return new InvalidJobInputError(mapped.message.replace(new RegExp(`\\b${sqlName}\\b`, 'g'), tsName), {
			field,
			details: mapped.details,
			hint: mapped.hint,
			cause: e,
		});
	}
	if (isJobError(mapped)) return mapped;
	const like = (typeof e === 'object' && e !== null ? e : {}) as SqlErrorLike;
	const message = text(like.message) ?? (e instanceof Error ? e.message : `database error: ${String(e).slice(0, 200)}`);
	return new DatabaseError(message, {
		cause: e,
		sqlstate: codeOf(e),
		details: text(like.detail) ?? text(like.details),
		hint: text(like.hint),
	});
}
