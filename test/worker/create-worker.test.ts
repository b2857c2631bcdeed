/**
 * createWorker in this process, over the real database: the wall-clock
 * budget, retries with backoff, user errors in the job's language, params
 * that no longer parse, a late finish after a cancel, the heartbeat, giving
 * jobs back, other job tables.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { createWorker, type CreateWorkerOptions, type JobWorker } from '../../src/lib/worker/create-worker.ts';
import type { JobOutcome } from '../../src/lib/worker/job-runner.ts';
import { InvalidJobInputError, NotRetryableError } from '../../src/lib/errors.ts';
import { INTERNAL_FAILURE, INVALID_PARAMS, UNEXPECTED_FAILURE } from '../../src/lib/worker/messages.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { counting, createJobTable } from '../store/harness.ts';
import { allHandlers, badResultRuns, flaky, flakyAttempts, quietAborts, sleep } from './helpers/kinds.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';
import { follow } from './helpers/watch.ts';

const SECRET = 'in-process-worker-secret-0123456789';
let db: TestDatabase;
let store: JobStore;

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
});

function makeWorker(options: Partial<CreateWorkerOptions> = {}) {
	const logger = new RecordingLogger();
	const outcomes = new Map<string, JobOutcome[]>();
	const worker: JobWorker = createWorker({
		store,
		handlers: allHandlers,
		secret: SECRET,
		logger,
		releaseOnUnload: false,
		onJobSettled: (job: Job, outcome: JobOutcome) => outcomes.set(job.id, [...(outcomes.get(job.id) ?? []), outcome]),
		...options,
	});
	return { worker, logger, outcomes };
}

const post = (worker: JobWorker, body: unknown) =>
	worker(
		new Request('http://worker.test/jobs-worker', {
			method: 'POST',
			headers: { authorization: `Bearer ${SECRET}` },
			body: JSON.stringify(body),
		}),
	);

describe('the wall-clock budget', () => {
	// 10 s left of a 100 s wall clock (the isolate started 90 s ago), no margin.
	const budget = () => ({ wallClockMs: 100_000, marginMs: 0, startedAtMs: performance.now() - 90_000 });

	it('a job whose plan needs more than the wall clock left is not claimed', async () => {
		const { worker, logger } = makeWorker(budget());
		const big = await store.enqueue('test.sized', { params: { seconds: 60 } });
		const res = await post(worker, { job_id: big.id });
		expect(res.status).toBe(202);
		await worker.idle();
		expect(await store.get(big.id)).toMatchObject({ status: 'queued', attempts: 0, startedAt: null });
		expect(logger.about(big.id).map((l) => l.message)).toEqual([
			expect.stringMatching(/needs ~60\.0 s; \d+\.\d s left in this isolate: not claimed/),
		]);

		const small = await store.enqueue('test.sized', { params: { seconds: 1 } });
		expect(await worker.process({ jobId: small.id })).toMatchObject({ claimed: [small.id], outcomes: { done: 1 } });
	});

	it('a drain claims nothing of a kind whose plan cannot fit, and gives back a claimed job too big for what is left', async () => {
		const { worker } = makeWorker(budget());
		const long = await store.enqueue('test.long');
		expect(await worker.process({ kind: 'test.long' })).toEqual({
			claimed: [],
			outcomes: {},
			stoppedBy: 'over_budget',
		});
		expect(await store.get(long.id)).toMatchObject({ status: 'queued', attempts: 0, startedAt: null });

		// A sized job's size only shows once claimed: it goes back unspent and the drain stops.
		const big = await store.enqueue('test.sized', { params: { seconds: 60 } });
		expect(await worker.process({ kind: 'test.sized' })).toMatchObject({ claimed: [], stoppedBy: 'over_budget' });
		expect(await store.get(big.id)).toMatchObject({ status: 'queued', attempts: 0 });
		await store.cancel(big.id);
		await store.cancel(long.id);
	});

	it('a job no isolate could ever finish is failed with a sentence, and the drain goes on past it', async () => {
		const { worker, logger } = makeWorker(budget());
		// Only this test's jobs of the kind are queued (an earlier one left a 60 s job for a fresh isolate).
		for (const j of (await store.listRecent({ kind: 'test.sized', status: 'queued', limit: 100 })).jobs)
			await store.cancel(j.id);
		const huge = await store.enqueue('test.sized', { params: { seconds: 600 }, locale: 'pt-BR' });
		const small = await store.enqueue('test.sized', { params: { seconds: 1 } });
		const report = await worker.process({ kind: 'test.sized' });
		expect(report.claimed).toEqual(expect.arrayContaining([huge.id, small.id]));
		expect(report.outcomes).toMatchObject({ failed: 1, done: 1 });
		expect(await store.get(huge.id)).toMatchObject({
			status: 'failed',
			errorCode: 'too_long_for_worker',
			error: expect.stringMatching(/grande demais/),
		});
		expect(await store.get(small.id)).toMatchObject({ status: 'done' });
		expect(logger.about(huge.id).map((l) => l.message)).toEqual([
			expect.stringMatching(/needs ~600\.0 s, more than a whole isolate allows: failed/),
		]);
		// The same by id.
		const named = await store.enqueue('test.sized', { params: { seconds: 600 } });
		expect(await worker.process({ jobId: named.id })).toMatchObject({ claimed: [named.id], outcomes: { failed: 1 } });
	});

	it('a job still running when the margin begins is given back: released, its attempt not spent, before the isolate ends', async () => {
		// 2.5 s left before the margin; test.quiet's plan says 1 s, but it runs until it is stopped.
		const { worker, logger, outcomes } = makeWorker({
			wallClockMs: 100_000,
			marginMs: 10_000,
			startedAtMs: performance.now() - 87_500,
		});
		const job = await store.enqueue('test.quiet');
		const report = await worker.process({ jobId: job.id });
		expect(report).toMatchObject({ claimed: [job.id], outcomes: { released: 1 } });
		expect(outcomes.get(job.id)).toEqual(['released']);
		expect(await store.get(job.id)).toMatchObject({ status: 'queued', attempts: 0 });
		expect(logger.lines.map((l) => l.message)).toContainEqual(
			expect.stringMatching(/wall clock is nearly spent: giving 1 running job\(s\) back before it ends/),
		);
		worker.close();
		await store.cancel(job.id);
	});

	it('without a limit (wallClockMs: Infinity) it claims whatever is queued', async () => {
		const { worker } = makeWorker({ wallClockMs: Infinity });
		const big = await store.enqueue('test.sized', { params: { seconds: 600 } });
		expect(await worker.process({ jobId: big.id })).toMatchObject({ outcomes: { done: 1 } });
	});
});

describe('how a handler ends decides how the row closes', () => {
	it('an unexpected exception is retried with exponential backoff until max_attempts; the user reads a generic sentence in pt-BR', async () => {
		const { worker, logger } = makeWorker({ retry: { baseSeconds: 0.1, maxSeconds: 10 } });
		const job = await store.enqueue(flaky, { params: {}, maxAttempts: 3, locale: 'pt-BR' });
		const delays: number[] = [];
		for (const attempt of [1, 2, 3]) {
			const report = await worker.process({ jobId: job.id });
			expect(report.claimed).toEqual([job.id]);
			const row = await store.get(job.id);
			expect(row.attempts).toBe(attempt);
			expect(row.error).toBe(UNEXPECTED_FAILURE['pt-BR']);
			if (attempt < 3) {
				expect(report.outcomes).toEqual({ retried: 1 });
				expect(row).toMatchObject({ status: 'queued', errorCode: 'retrying' });
				delays.push(Math.round(row.availableAt.getTime() - row.updatedAt.getTime()));
				// Not claimable before its backoff is over.
				expect(await worker.process({ jobId: job.id })).toMatchObject({ claimed: [], stoppedBy: 'not_claimed' });
				await sleep(Math.max(0, row.availableAt.getTime() - Date.now()) + 5);
			} else {
				expect(report.outcomes).toEqual({ failed: 1 });
				expect(row).toMatchObject({ status: 'failed', errorCode: 'attempts_exhausted' });
			}
		}
		expect(delays).toEqual([100, 200]);
		expect(flakyAttempts.filter((a) => a.id === job.id).map((a) => a.attempt)).toEqual([1, 2, 3]);
		// The trace went to the log, with the job id; never to the row.
		const errors = logger.lines.filter((l) => l.level === 'error');
		expect(errors).toHaveLength(3);
		for (const e of errors) {
			expect(e.message).toContain(job.id);
			expect((e.details[0] as Error).stack).toMatch(/boom: internal detail/);
		}
		expect((await store.get(job.id)).error).not.toMatch(/boom|Error|\bat /);
	});

	it('JobUserError fails the job at once with its sentence in the job language', async () => {
		const { worker } = makeWorker();
		const cases = [
			{ locale: 'pt-BR', error: 'Não consegui ler edital.pdf.' },
			{ locale: 'pt-PT', error: 'Não consegui ler edital.pdf.' },
			{ locale: 'en', error: 'I could not read edital.pdf.' },
			{ locale: 'fr', error: 'I could not read edital.pdf.' },
		];
		for (const c of cases) {
			const job = await store.enqueue('test.picky', {
				params: { filename: 'edital.pdf' },
				locale: c.locale,
				maxAttempts: 5,
			});
			expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
			expect(await store.get(job.id)).toMatchObject({
				status: 'failed',
				attempts: 1,
				error: c.error,
				errorCode: 'unreadable_file',
			});
		}
	});

	it('a JobUserError whose code its kind declares permanent fails the job for good: no retry, and try again is refused', async () => {
		const { worker } = makeWorker();
		const job = await store.enqueue('test.fussy', { params: { code: 'empty_file' }, maxAttempts: 5 });
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
		expect(await store.get(job.id)).toMatchObject({
			status: 'failed',
			attempts: 1,
			errorCode: 'empty_file',
			failedForGood: true,
		});
		expect(await store.tryAgain(job.id).catch((e: unknown) => e)).toBeInstanceOf(NotRetryableError);
		const page = await store.listRecent({ kind: 'test.fussy', statuses: ['queued', 'running'] });
		expect(page.jobs).toEqual([]);
	});

	it('a JobUserError whose code its kind does not declare permanent fails the job, and it may be tried again', async () => {
		const { worker } = makeWorker();
		const job = await store.enqueue('test.fussy', { params: { code: 'locked_file' }, maxAttempts: 5 });
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
		expect(await store.get(job.id)).toMatchObject({ status: 'failed', errorCode: 'locked_file', failedForGood: false });
		expect(await store.tryAgain(job.id)).toMatchObject({ status: 'queued', retryOf: job.id, failedForGood: false });
	});

	it('a job whose params no longer parse fails with a sentence for the user, without running', async () => {
		const { worker, logger } = makeWorker();
		const job = await store.enqueue('test.strict', { params: { pages: 'many' } });
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
		expect(await store.get(job.id)).toMatchObject({
			status: 'failed',
			error: INVALID_PARAMS.en,
			errorCode: 'invalid_params',
		});
		expect(logger.about(job.id)[0]?.message).toMatch(/params no longer satisfy the schema of test.strict: .*pages/);
	});

	it('the handler gets typed params and the payload; its return value becomes result_id', async () => {
		const { worker } = makeWorker();
		const job = await store.enqueue('test.strict', { params: { pages: 3 }, payload: 'hello' });
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { done: 1 } });
		const row = await store.get(job.id);
		expect(row).toMatchObject({ status: 'done', payload: null, progress: 100 });
		expect(row.resultId).toMatch(/^[0-9a-f-]{36}$/);
		expect(Object.keys(row.timings ?? {})).toEqual(['read']);
	});

	it('a handler that finishes after a cancel cannot overwrite it: succeed is refused, logged, not failed', async () => {
		const { worker, logger, outcomes } = makeWorker();
		const job = await store.enqueue('test.deaf', { params: { ms: 400 } });
		const row = follow(store, job.id, 10);
		const run = worker.process({ jobId: job.id });
		await row.until((j) => j.status === 'running');
		await store.cancel(job.id);
		expect(await run).toMatchObject({ outcomes: { cancelled: 1 } });
		expect(outcomes.get(job.id)).toEqual(['cancelled']);
		expect(logger.about(job.id).map((l) => [l.level, l.message])).toEqual([
			['info', expect.stringMatching(/was cancelled before its done could land; left cancelled/)],
		]);
		expect(await store.get(job.id)).toMatchObject({ status: 'cancelled', resultId: null });
	});

	it('a handler that never reports still heartbeats, and learns a cancel through its signal', async () => {
		const { worker, logger } = makeWorker({ heartbeatMs: 80 });
		const job = await store.enqueue('test.quiet');
		const row = follow(store, job.id, 10);
		const run = worker.process({ jobId: job.id });
		await row.until((j) => j.status === 'running');
		const beats = new Set<number>();
		while (beats.size < 3) {
			const { heartbeatAt } = await store.get(job.id);
			if (heartbeatAt) beats.add(heartbeatAt.getTime());
			await sleep(30);
		}
		await store.cancel(job.id);
		expect(await run).toMatchObject({ outcomes: { cancelled: 1 } });
		const aborted = quietAborts.find((a) => a.id === job.id);
		expect(aborted?.reason).toMatchObject({ code: 'stage_interrupted', status: 'cancelled' });
		expect(logger.about(job.id).map((l) => l.message)).toEqual([
			`[supabase-jobs] job ${job.id} was cancelled; the handler stopped`,
		]);
	});
});

describe('one tick is progress and the cancellation check, on the same interval', () => {
	it('a handler that never reports learns a cancel within one interval, without a write per interval', async () => {
		const counted = counting(postgresAdapter(db.sql));
		const { worker, outcomes } = makeWorker({
			store: new JobStore(counted.adapter),
			tickIntervalMs: 20,
			heartbeatMs: 5000,
		});
		const job = await store.enqueue('test.quiet');
		const run = worker.process({ jobId: job.id });
		// Five intervals of status reads, and no tick written in between.
		await counted.signal.until(() => counted.count('job_get_status') >= 5);
		expect(counted.count('job_tick')).toBe(0);
		const claimed = await store.get(job.id);
		expect(claimed.status).toBe('running');

		await store.cancel(job.id);
		const cancelledAt = performance.now();
		expect(await run).toMatchObject({ outcomes: { cancelled: 1 } });
		// Before, it waited for the 5 s heartbeat; one interval plus a round trip, with room for a busy machine.
		expect(performance.now() - cancelledAt).toBeLessThan(2000);
		expect(outcomes.get(job.id)).toEqual(['cancelled']);
		expect(counted.count('job_tick')).toBe(0);
		expect((await store.get(job.id)).heartbeatAt?.getTime()).toBe(claimed.heartbeatAt?.getTime());
	});
});

describe('a refused close never leaves the job running', () => {
	it('a JobUserError sentence over 2,000 characters is shortened and the job fails at once with its own code', async () => {
		const { worker } = makeWorker();
		const job = await store.enqueue('test.verbose', { params: { length: 10_000 }, maxAttempts: 3 });
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
		const row = await store.get(job.id);
		expect(row).toMatchObject({ status: 'failed', attempts: 1, errorCode: 'unreadable_file' });
		expect([...(row.error ?? '')]).toHaveLength(2000);
		expect(row.error).toMatch(/^I could not read the file: x+…$/);
	});

	it('a handler result that is not a UUID fails the job with invalid_result and a generic sentence, without redoing the work', async () => {
		const { worker, logger } = makeWorker();
		const job = await store.enqueue('test.bad-result', {
			params: { result: 'summary-of-42' },
			maxAttempts: 3,
			locale: 'pt-BR',
		});
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
		expect(await store.get(job.id)).toMatchObject({
			status: 'failed',
			attempts: 1,
			errorCode: 'invalid_result',
			error: INTERNAL_FAILURE['pt-BR'],
			resultId: null,
		});
		expect(badResultRuns.filter((id) => id === job.id)).toHaveLength(1);
		// The detail is for the log, never for the row.
		expect(logger.about(job.id).find((l) => l.level === 'error')?.message).toMatch(/"summary-of-42", not a row id/);
	});

	it('a close the database still refuses falls back to failed with close_refused, never left running', async () => {
		const refused = new InvalidJobInputError('timings is refused', { field: 'timings' });
		const refusing: JobStore = Object.assign(Object.create(store) as JobStore, {
			succeed: () => Promise.reject(refused),
		});
		const { worker, logger } = makeWorker({ store: refusing });
		const job = await store.enqueue('test.strict', { params: { pages: 1 }, payload: 'x', maxAttempts: 3 });
		expect(await worker.process({ jobId: job.id })).toMatchObject({ outcomes: { failed: 1 } });
		expect(await store.get(job.id)).toMatchObject({
			status: 'failed',
			attempts: 1,
			errorCode: 'close_refused',
			error: INTERNAL_FAILURE.en,
		});
		expect(logger.about(job.id).find((l) => l.level === 'error')?.details[0]).toBe(refused);
	});
});

describe('the worker', () => {
	it('gives running jobs back on shutdown: queued again, the attempt not spent', async () => {
		const { worker, outcomes } = makeWorker();
		const job = await store.enqueue('test.quiet');
		const row = follow(store, job.id, 10);
		const run = worker.process({ jobId: job.id });
		await row.until((j) => j.status === 'running');
		expect(worker.running).toBe(1);
		await worker.releaseAll('test shutdown');
		expect(await run).toMatchObject({ outcomes: { released: 1 } });
		expect(outcomes.get(job.id)).toEqual(['released']);
		expect(await store.get(job.id)).toMatchObject({ status: 'queued', attempts: 0 });
		expect((await post(worker, { job_id: job.id })).status).toBe(503);
		await store.cancel(job.id);
	});

	it('claims from the job table a wake-up names, and ignores one that does not exist', async () => {
		await createJobTable(db.sql, 'exports'); // users invent kinds in it
		const exports = new JobStore(postgresAdapter(db.sql), { table: 'exports' });
		const job = await exports.enqueue('test.sized', { params: { seconds: 0 } });
		const { worker, logger } = makeWorker();
		expect(await worker.process({ jobId: job.id, jobTable: 'exports' })).toMatchObject({ outcomes: { done: 1 } });
		expect(await exports.get(job.id)).toMatchObject({ status: 'done' });
		expect(await worker.process({ jobTable: 'nope' })).toMatchObject({ stoppedBy: 'unknown_table' });
		expect(logger.lines.at(-1)?.message).toMatch(/job table "nope", which does not exist/);
	});

	it('never claims a kind it has no handler for', async () => {
		const { worker } = makeWorker();
		const job = await store.enqueue('someone.elses');
		expect(await worker.process({ jobId: job.id })).toMatchObject({ claimed: [], stoppedBy: 'no_handler' });
		expect(await worker.process({ kind: 'someone.elses' })).toMatchObject({ claimed: [], stoppedBy: 'no_handler' });
		expect(await store.get(job.id)).toMatchObject({ status: 'queued', attempts: 0 });
		await store.cancel(job.id);
	});

	it('runs at most `concurrency` jobs at once across wake-ups', async () => {
		let now = 0;
		let peak = 0;
		const { worker } = makeWorker({
			concurrency: 2,
			handlers: [
				...allHandlers.filter((h) => h.kind.name !== 'test.planless'),
				{
					kind: allHandlers.find((h) => h.kind.name === 'test.planless')!.kind,
					async run() {
						peak = Math.max(peak, ++now);
						await sleep(30);
						now--;
					},
				},
			],
		});
		const jobs = await Promise.all([1, 2, 3, 4, 5].map(() => store.enqueue('test.planless')));
		const reports = await Promise.all([
			worker.process({ kind: 'test.planless' }),
			worker.process({ jobId: jobs[4]!.id }),
			worker.process({ kind: 'test.planless' }),
		]);
		expect(reports.flatMap((r) => r.claimed).sort()).toEqual(jobs.map((j) => j.id).sort());
		expect(peak).toBe(2);
		for (const j of jobs) expect(await store.get(j.id)).toMatchObject({ status: 'done' });
	});

	it('hands its background work to EdgeRuntime.waitUntil when the edge runtime provides it', async () => {
		const handed: Promise<unknown>[] = [];
		const scope = globalThis as { EdgeRuntime?: unknown };
		scope.EdgeRuntime = { waitUntil: (p: Promise<unknown>) => handed.push(p) };
		try {
			const { worker } = makeWorker();
			const job = await store.enqueue('test.sized', { params: { seconds: 0 } });
			const res = await post(worker, { job_id: job.id });
			expect(res.status).toBe(202);
			expect(handed).toHaveLength(1);
			await handed[0];
			expect(await store.get(job.id)).toMatchObject({ status: 'done' });
		} finally {
			delete scope.EdgeRuntime;
		}
	});

	it('refuses a secret shorter than 16 characters and two handlers for one kind', () => {
		expect(() => createWorker({ store, handlers: allHandlers, secret: 'short' })).toThrow(/at least 16 characters/);
		expect(() => createWorker({ store, handlers: [allHandlers[0]!, allHandlers[0]!], secret: SECRET })).toThrow(
			/two handlers for the kind "test.long"/,
		);
	});
});
