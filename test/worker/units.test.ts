/**
 * The worker's pure parts: locale choice, backoff, the Bearer check, the
 * wake-up body, the wall-clock budget and the plan's estimate.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { retryDelaySeconds } from '../../src/lib/worker/backoff.ts';
import { bearerChecker, signWakeUpToken, timingSafeEqualText } from '../../src/lib/worker/bearer-secret.ts';
import { JobUserError } from '../../src/lib/worker/job-user-error.ts';
import { isJobError } from '../../src/lib/errors.ts';
import { parseKickRequest } from '../../src/lib/worker/kick-request.ts';
import { pickLocale, UNEXPECTED_FAILURE } from '../../src/lib/worker/messages.ts';
import { estimateSeconds } from '../../src/lib/worker/plan-source.ts';
import { WallClockBudget } from '../../src/lib/worker/wall-clock.ts';

describe('JobUserError', () => {
	it('picks the job locale: exact tag, same language, English, then the first', () => {
		const e = new JobUserError({ 'pt-BR': 'Arquivo vazio.', en: 'Empty file.' }, { errorCode: 'empty_file' });
		expect([
			e.sentenceFor('pt-BR'),
			e.sentenceFor('PT-br'),
			e.sentenceFor('pt'),
			e.sentenceFor('de'),
			e.sentenceFor(null),
		]).toEqual(['Arquivo vazio.', 'Arquivo vazio.', 'Arquivo vazio.', 'Empty file.', 'Empty file.']);
		expect(e.message).toBe('Empty file.');
		expect(e.errorCode).toBe('empty_file');
		expect(isJobError(e, 'job_user_error')).toBe(true);
		expect(isJobError(new Error('x'), 'job_user_error')).toBe(false);
		expect(pickLocale({ es: 'Hola.' }, 'pt-BR')).toBe('Hola.');
		expect(new JobUserError('Plain sentence.').sentenceFor('pt-BR')).toBe('Plain sentence.');
	});

	it('refuses an error code that is not snake_case', () => {
		expect(() => new JobUserError('x', { errorCode: 'Bad Code' })).toThrow(/snake_case/);
	});

	it('the generic sentences exist in English and Brazilian Portuguese', () => {
		expect(pickLocale(UNEXPECTED_FAILURE, 'pt-BR')).toMatch(/^Algo deu errado/);
		expect(pickLocale(UNEXPECTED_FAILURE, 'en-GB')).toMatch(/^Something went wrong/);
	});
});

describe('retryDelaySeconds', () => {
	it('doubles from the base and stops at the max', () => {
		expect([1, 2, 3, 4, 5].map((a) => retryDelaySeconds(a, { baseSeconds: 2, maxSeconds: 10 }))).toEqual([
			2, 4, 8, 10, 10,
		]);
		expect(retryDelaySeconds(1000)).toBe(300);
		expect(() => retryDelaySeconds(1, { baseSeconds: -1 })).toThrow(RangeError);
	});
});

describe('the Bearer secret', () => {
	const secret = 'a-long-enough-secret-123';
	const req = (authorization?: string) =>
		new Request('http://w/', { method: 'POST', headers: authorization ? { authorization } : {} });

	it('accepts exactly `Bearer <secret>` and nothing else', async () => {
		const check = bearerChecker(secret);
		expect(await check(req(`Bearer ${secret}`))).toBe(true);
		expect(await check(req(`bearer ${secret}`))).toBe(true);
		for (const h of [
			undefined,
			secret,
			`Bearer ${secret}x`,
			`Bearer ${secret.slice(0, -1)}`,
			`Basic ${secret}`,
			'Bearer ',
		]) {
			expect(await check(req(h)), String(h)).toBe(false);
		}
		expect(await timingSafeEqualText('a', 'a')).toBe(true);
		expect(await timingSafeEqualText('a', 'b')).toBe(false);
		expect(() => bearerChecker('short')).toThrow(/16 characters/);
	});
});

describe("the signed wake-up token (no plain secret in pg_net's queue)", () => {
	const secret = 'a-long-enough-secret-123';
	const req = (authorization: string) => new Request('http://w/', { method: 'POST', headers: { authorization } });
	const at = 1_800_000_000;

	it('is HMAC-SHA256 of "v1.<seconds>" under the secret, as node:crypto computes it', async () => {
		const expected = createHmac('sha256', secret).update(`v1.${at}`).digest('hex');
		expect(await signWakeUpToken(secret, at)).toBe(`v1.${at}.${expected}`);
	});

	it('is accepted for 5 minutes either side of now, and refused forged, stale or under another secret', async () => {
		const check = bearerChecker(secret, () => (at + 60) * 1000);
		expect(await check(req(`Bearer ${await signWakeUpToken(secret, at)}`))).toBe(true);
		expect(await check(req(`Bearer ${await signWakeUpToken(secret, at - 301 + 60)}`))).toBe(false);
		expect(await check(req(`Bearer ${await signWakeUpToken('another-long-enough-secret', at)}`))).toBe(false);
		const forged = (await signWakeUpToken(secret, at)).replace(/.$/, (c) => (c === '0' ? '1' : '0'));
		expect(await check(req(`Bearer ${forged}`))).toBe(false);
		// A token for another moment does not become valid by editing its time.
		expect(await check(req(`Bearer ${(await signWakeUpToken(secret, at)).replace(`v1.${at}`, `v1.${at + 1}`)}`))).toBe(
			false,
		);
	});
});

describe('parseKickRequest', () => {
	it('reads the body the kick path sends, and an empty body as a drain', () => {
		const id = '6f1e0c1a-7a8e-4f59-9d61-3c1f1b0c2d3e';
		expect(
			parseKickRequest(JSON.stringify({ job_id: id, job_table: 'jobs', kind: 'extract', count: 1, reason: 'enqueue' })),
		).toEqual({
			jobId: id,
			jobTable: 'jobs',
			kind: 'extract',
			count: 1,
			reason: 'enqueue',
		});
		expect(parseKickRequest('')).toEqual({ jobId: null, jobTable: null, kind: null, count: null, reason: null });
		expect(parseKickRequest('{"job_id": null, "kind": "x", "count": 12, "reason": "backstop"}')).toMatchObject({
			jobId: null,
			kind: 'x',
			count: 12,
		});
		expect(() => parseKickRequest('{')).toThrow(/must be JSON/);
		expect(() => parseKickRequest('{"job_id": "42"}')).toThrow(/job_id/);
		expect(() => parseKickRequest('[]')).toThrow(/invalid wake-up/);
	});
});

describe('the wall-clock budget', () => {
	it('counts from the isolate start and keeps the margin free', () => {
		let now = 0;
		const budget = new WallClockBudget({ wallClockMs: 150_000, marginMs: 15_000, now: () => now });
		expect(budget.remainingMs()).toBe(135_000);
		expect(budget.fits(135)).toBe(true);
		now = 100_000;
		expect(budget.fits(35)).toBe(true);
		expect(budget.fits(36)).toBe(false);
		expect(new WallClockBudget({ wallClockMs: Infinity }).fits(1e9)).toBe(true);
	});

	it('estimates a job from its plan at its size', () => {
		const plan = PhasePlan.fromSeconds({ pdf: 1, table: 30 }, { perKilochar: { table: 0.5 } });
		expect(estimateSeconds(plan)).toBe(31);
		expect(estimateSeconds(plan, 10_000)).toBe(36);
		expect(estimateSeconds(plan, { table: 20_000 })).toBe(41);
	});
});
