import { describe, expect, it } from 'vitest';
import { isHttpError } from '@sveltejs/kit';
import { httpStatusOf, toHttpError } from '../../src/lib/kit.ts';
import {
	InvalidJobInputError,
	JobAlreadyFinishedError,
	JobCancelledError,
	JobNotFoundError,
	JobNotRunningError,
	PermissionDeniedError,
	QuotaExceededError,
	StaleAfterRequiredError,
} from '../../src/lib/errors.ts';

function thrown(e: unknown): unknown {
	try {
		toHttpError(e);
	} catch (caught) {
		return caught;
	}
	throw new Error('toHttpError returned');
}

describe('toHttpError translates job errors at the SvelteKit boundary', () => {
	it.each([
		[new JobNotFoundError('no job 42'), 404],
		[new JobAlreadyFinishedError('already done'), 409],
		[new JobCancelledError('cancelled by the user'), 409],
		[new InvalidJobInputError('params must be an object', { field: 'params' }), 400],
		[new PermissionDeniedError('not yours'), 403],
		[new QuotaExceededError('too many jobs waiting'), 429],
	])('%s -> %i', (e, status) => {
		const out = thrown(e);
		expect(isHttpError(out, status)).toBe(true);
		expect((out as { body: unknown }).body).toMatchObject({ message: e.message, code: e.code });
	});

	it('invalid input carries the field at fault', () => {
		const out = thrown(new InvalidJobInputError('bad', { field: 'max_attempts' }));
		expect((out as { body: unknown }).body).toEqual({ message: 'bad', code: 'invalid_input', field: 'max_attempts' });
	});

	it('translates raw database errors first (a PostgREST body with PT404 is a 404)', () => {
		const out = thrown({ code: 'PT404', message: 'job not found', details: null, hint: null });
		expect(isHttpError(out, 404)).toBe(true);
		expect(httpStatusOf({ code: '42501', message: 'permission denied for function job_claim' })).toBe(403);
	});

	it('a quota error, raw from PostgREST (PT429), is a 429 naming the limit reached', () => {
		const out = thrown({ code: 'PT429', message: 'quota exceeded', details: 'quota=max_active_per_owner', hint: null });
		expect(isHttpError(out, 429)).toBe(true);
		expect((out as { body: unknown }).body).toEqual({
			message: 'quota exceeded',
			code: 'quota_exceeded',
			quota: 'max_active_per_owner',
		});
		expect(httpStatusOf({ code: 'PT429', message: 'quota exceeded' })).toBe(429);
	});

	it('rethrows everything else unchanged, so a bug stays a 500', () => {
		for (const e of [
			new Error('boom'),
			new JobNotRunningError(),
			new StaleAfterRequiredError(),
			{ code: '23505' },
			'text',
		]) {
			expect(thrown(e)).toBe(e);
			expect(httpStatusOf(e)).toBeNull();
		}
	});
});
