import { describe, expect, it } from 'vitest';
import {
	IllegalTransitionError,
	InvalidJobInputError,
	JobAlreadyFinishedError,
	JobCancelledError,
	JobError,
	JobNotFoundError,
	JobNotRunningError,
	PermissionDeniedError,
	StageInterruptedError,
	StaleAfterRequiredError,
	QuotaExceededError,
	TimeoutError,
	UnknownJobTableError,
	isJobError,
} from '../../src/lib/errors.ts';

const table = [
	[JobNotFoundError, 'job_not_found'],
	[JobAlreadyFinishedError, 'job_already_finished'],
	[JobCancelledError, 'job_cancelled'],
	[JobNotRunningError, 'job_not_running'],
	[IllegalTransitionError, 'illegal_transition'],
	[InvalidJobInputError, 'invalid_input'],
	[StaleAfterRequiredError, 'stale_after_required'],
	[QuotaExceededError, 'quota_exceeded'],
	[UnknownJobTableError, 'unknown_job_table'],
	[PermissionDeniedError, 'permission_denied'],
	[StageInterruptedError, 'stage_interrupted'],
	[TimeoutError, 'timeout'],
] as const;

describe('errors with stable codes', () => {
	it.each(table)('%o carries its code, its name, and is a JobError', (Cls, code) => {
		const e = new Cls('why', { details: 'd', hint: 'h', cause: 'root' });
		expect(e.code).toBe(code);
		expect(e.name).toBe(Cls.name);
		expect(e).toBeInstanceOf(JobError);
		expect(e).toBeInstanceOf(Error);
		expect(isJobError(e)).toBe(true);
		expect(isJobError(e, code)).toBe(true);
		expect(e.cause).toBe('root');
		expect(e.toJSON()).toEqual({ name: Cls.name, code, message: 'why', details: 'd', hint: 'h' });
	});

	it('isJobError with a code accepts only that code (and job_already_finished its subclass)', () => {
		for (const [Cls] of table) {
			const e = new Cls();
			const accepted = table.filter(([, code]) => isJobError(e, code)).map(([C]) => C.name);
			const expected = Cls === JobCancelledError ? ['JobAlreadyFinishedError', 'JobCancelledError'] : [Cls.name];
			expect(accepted).toEqual(expected);
		}
	});

	it('JobCancelledError is a subclass of JobAlreadyFinishedError, so a worker can tell "we did as told" from "the concurrency is wrong"', () => {
		const cancelled = new JobCancelledError();
		const finished = new JobAlreadyFinishedError();
		expect(cancelled).toBeInstanceOf(JobAlreadyFinishedError);
		expect(isJobError(cancelled, 'job_already_finished')).toBe(true);
		expect(isJobError(cancelled, 'job_cancelled')).toBe(true);
		expect(isJobError(finished, 'job_cancelled')).toBe(false);
	});

	it('guards check the code, not instanceof: an error from another copy of the package still matches', () => {
		const foreign = Object.assign(new Error('no job'), { __isJobError: true, code: 'job_not_found' });
		expect(foreign).not.toBeInstanceOf(JobError);
		expect(isJobError(foreign, 'job_not_found')).toBe(true);
		expect(isJobError({ code: 'job_not_found' })).toBe(false); // a PostgREST body is not a JobError
		expect(isJobError(null)).toBe(false);
		expect(isJobError('job_not_found')).toBe(false);
	});

	it('toJSON leaves out the stack and the cause', () => {
		const e = new JobNotFoundError('no job 42', { cause: new Error('secret connection string') });
		const json = JSON.parse(JSON.stringify(e));
		expect(json).toEqual({
			name: 'JobNotFoundError',
			code: 'job_not_found',
			message: 'no job 42',
			details: null,
			hint: null,
		});
	});

	it('InvalidJobInputError names the field, from the option or the DETAIL field=<name>', () => {
		expect(new InvalidJobInputError('bad', { field: 'params' }).field).toBe('params');
		expect(new InvalidJobInputError('bad', { details: 'field=max_attempts' }).field).toBe('max_attempts');
		expect(new InvalidJobInputError('bad', { details: 'something else' }).field).toBeNull();
	});

	it('StageInterruptedError says which stage stopped and on what status', () => {
		const e = new StageInterruptedError('stopped', { stage: 'table', status: 'cancelled' });
		expect([e.stage, e.status]).toEqual(['table', 'cancelled']);
		expect([new StageInterruptedError().stage, new StageInterruptedError().status]).toEqual([null, null]);
	});
});
