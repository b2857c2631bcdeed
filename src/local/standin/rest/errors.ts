/**
 * PostgREST's error responses: the `{code, message, details, hint}` body and
 * the SQLSTATE -> HTTP status table, ported from PostgREST/postgrest
 * src/library/PostgREST/Error.hs (`mapSQLtoHTTP`, ApiRequestError and
 * SchemaCacheError instances).
 */
import type { PgrstErrorBody } from '../jwt.ts';

export type { PgrstErrorBody };

/** An error the REST layer answers with directly. */
export class RestError extends Error {
	constructor(
		readonly status: number,
		readonly body: PgrstErrorBody,
		readonly headers: Record<string, string> = {},
	) {
		super(body.message);
	}
}

/** Error.hs `mapSQLtoHTTP`: `authed` is true when the request's role is not the anon role. */
export function statusForSqlState(code: string, message: string, authed: boolean): number {
	if (code.startsWith('08')) return 503;
	if (code.startsWith('09')) return 500;
	if (code.startsWith('0L')) return 403;
	if (code.startsWith('0P')) return 403;
	if (code === '23503' || code === '23505') return 409;
	if (code === '25006') return 405;
	if (code === '21000') return message.endsWith('requires a WHERE clause') ? 400 : 500;
	if (code === '22023') return message.startsWith('role') && message.endsWith('does not exist') ? 401 : 400;
	if (code.startsWith('25')) return 500;
	if (code.startsWith('28')) return 403;
	if (code.startsWith('2D')) return 500;
	if (code.startsWith('38')) return 500;
	if (code.startsWith('39')) return 500;
	if (code.startsWith('3B')) return 500;
	if (code.startsWith('40')) return 500;
	if (code === '53400') return 500;
	if (code.startsWith('53')) return 503;
	if (code.startsWith('54')) return 500;
	if (code.startsWith('55')) return 500;
	if (code === '57P01') return 503;
	if (code.startsWith('57')) return 500;
	if (code.startsWith('58')) return 500;
	if (code.startsWith('F0')) return 500;
	if (code.startsWith('HV')) return 500;
	if (code === 'P0001') return 400;
	if (code.startsWith('P0')) return 500;
	if (code.startsWith('XX')) return 500;
	if (code === '42883') return message.startsWith('function xmlagg(') ? 406 : 404;
	if (code === '42P01') return 404;
	if (code === '42P17') return 500;
	if (code === '42501') return authed ? 403 : 401;
	if (code.startsWith('PT')) {
		const n = Number(code.slice(2));
		return Number.isInteger(n) && n >= 100 && n <= 999 ? n : 500;
	}
	return 400;
}

interface PgLikeError {
	code?: unknown;
	message?: unknown;
	detail?: unknown;
	hint?: unknown;
}

function isPgError(e: unknown): e is PgLikeError & { code: string; message: string } {
	return (
		typeof e === 'object' &&
		e !== null &&
		typeof (e as PgLikeError).code === 'string' &&
		(e as { name?: string }).name === 'PostgresError'
	);
}

/** Turns a PostgreSQL error into PostgREST's response (Error.hs `PgError` instance). */
export function restErrorFromDb(e: unknown, authed: boolean): RestError {
	if (isPgError(e)) {
		const body: PgrstErrorBody = {
			code: e.code,
			message: e.message,
			details: typeof e.detail === 'string' ? e.detail : null,
			hint: typeof e.hint === 'string' ? e.hint : null,
		};
		const status = statusForSqlState(e.code, e.message, authed);
		return new RestError(status, body, status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {});
	}
	if (e instanceof RestError) return e;
	// Connection-level failures: Error.hs answers 503 PGRST000 "Database connection error."
	return new RestError(503, {
		code: 'PGRST000',
		message: 'Database connection error. Retrying the connection.',
		details: e instanceof Error ? e.message : String(e),
		hint: null,
	});
}

/** 406 PGRST106 (Error.hs `UnacceptableSchema`). */
export function unacceptableSchema(schema: string, exposed: readonly string[]): RestError {
	return new RestError(406, {
		code: 'PGRST106',
		message: `Invalid schema: ${schema}`,
		details: null,
		hint: `Only the following schemas are exposed: ${exposed.join(', ')}`,
	});
}

/** 400 PGRST102 (Error.hs `InvalidBody`; message from ApiRequest.hs). */
export function invalidBody(message = 'Empty or invalid json'): RestError {
	return new RestError(400, { code: 'PGRST102', message, details: null, hint: null });
}

/** 400 PGRST100 (Error.hs `QueryParamError`). */
export function queryParamError(message: string, details: string): RestError {
	return new RestError(400, { code: 'PGRST100', message, details, hint: null });
}

/** 406 PGRST116 (Error.hs `SingularityError`). */
export function singularityError(rows: number): RestError {
	return new RestError(406, {
		code: 'PGRST116',
		message: 'Cannot coerce the result to a single JSON object',
		details: `The result contains ${rows} rows`,
		hint: null,
	});
}

/** 405 PGRST117 (Error.hs `UnsupportedMethod`). */
export function unsupportedMethod(method: string): RestError {
	return new RestError(405, {
		code: 'PGRST117',
		message: `Unsupported HTTP method: ${method}`,
		details: null,
		hint: null,
	});
}

/** 416 PGRST103 body (Error.hs `InvalidRange (OutOfBounds ...)`). */
export function outOfBoundsBody(offset: number, total: number): string {
	return JSON.stringify({
		code: 'PGRST103',
		details: `An offset of ${offset} was requested, but there are only ${total} rows.`,
		hint: null,
		message: 'Requested range not satisfiable',
	});
}
