import { describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { fromPostgresError } from '../../src/lib/internal/map-sql-error.ts';
import { InvalidJobInputError, JobAlreadyFinishedError, JobNotFoundError, isJobError } from '../../src/lib/errors.ts';

const mapping = [
	['PT404', 'JobNotFoundError', 'job_not_found'],
	['PT409', 'JobAlreadyFinishedError', 'job_already_finished'],
	['PT410', 'JobCancelledError', 'job_cancelled'],
	['55000', 'JobNotRunningError', 'job_not_running'],
	['SJ001', 'IllegalTransitionError', 'illegal_transition'],
	['22023', 'InvalidJobInputError', 'invalid_input'],
	['22P02', 'InvalidJobInputError', 'invalid_input'],
	['42703', 'InvalidJobInputError', 'invalid_input'],
	['42601', 'InvalidJobInputError', 'invalid_input'],
	['54023', 'InvalidJobInputError', 'invalid_input'],
	['22004', 'StaleAfterRequiredError', 'stale_after_required'],
	['PT429', 'QuotaExceededError', 'quota_exceeded'],
	['42P01', 'UnknownJobTableError', 'unknown_job_table'],
	['42501', 'PermissionDeniedError', 'permission_denied'],
] as const;

// postgres.js builds its PostgresError from the server's fields; build one the same way.
function postgresJsError(fields: { code: string; message: string; detail?: string; hint?: string }): Error {
	const PostgresError = (postgres as unknown as { PostgresError: new (x: Record<string, string>) => Error })
		.PostgresError;
	return new PostgresError({ severity: 'ERROR', ...fields });
}

describe('fromPostgresError maps SQLSTATEs to error classes', () => {
	it.each(mapping)('%s from postgres.js becomes %s', (code, name, jobCode) => {
		const raw = postgresJsError({ code, message: 'the message', detail: 'field=kind', hint: 'the hint' });
		const e = fromPostgresError(raw);
		expect(isJobError(e)).toBe(true);
		expect(e).toMatchObject({ name, code: jobCode, message: 'the message', details: 'field=kind', hint: 'the hint' });
		expect((e as Error).cause).toBe(raw);
	});

	it.each(mapping)('%s from a PostgREST error body becomes %s', (code, name, jobCode) => {
		const body = { code, message: 'from PostgREST', details: 'field=params', hint: null };
		const e = fromPostgresError(body);
		expect(e).toMatchObject({ name, code: jobCode, message: 'from PostgREST', details: 'field=params', hint: null });
	});

	it('reads the field of invalid input from the DETAIL', () => {
		const e = fromPostgresError({ code: '22023', message: 'params must be an object', details: 'field=params' });
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect((e as InvalidJobInputError).field).toBe('params');
	});

	it('keeps subclassing: PT410 is also a JobAlreadyFinishedError', () => {
		expect(fromPostgresError({ code: 'PT410', message: 'cancelled' })).toBeInstanceOf(JobAlreadyFinishedError);
	});

	it('returns unknown errors unchanged', () => {
		const unique = postgresJsError({ code: '23505', message: 'duplicate key' });
		const pgrst = { code: 'PGRST202', message: 'Could not find the function', details: null, hint: null };
		const network = new TypeError('fetch failed');
		for (const e of [unique, pgrst, network, 'text', null, undefined, 42, { message: 'no code' }]) {
			expect(fromPostgresError(e)).toBe(e);
		}
	});

	it('returns a JobError unchanged rather than wrapping it twice', () => {
		const e = new JobNotFoundError('no job');
		expect(fromPostgresError(e)).toBe(e);
	});

	it('falls back to a message naming the SQLSTATE when the body has none', () => {
		expect(fromPostgresError({ code: 'PT404' })).toMatchObject({ message: 'database error PT404', details: null });
	});

	it('accepts lower-case codes and ignores prototype keys', () => {
		expect(fromPostgresError({ code: 'pt404', message: 'x' })).toBeInstanceOf(JobNotFoundError);
		const proto = { code: 'constructor', message: 'x' };
		expect(fromPostgresError(proto)).toBe(proto);
	});
});
