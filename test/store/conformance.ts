/**
 * The JobStore conformance suite: one test per promise of the store (and its
 * error table), each named after the behaviour it holds. It takes a
 * harness, so the same suite runs over postgres.js (test/store/postgres-adapter.test.ts)
 * and over supabase-js against the stand-in HTTP service, and must give
 * identical results over both.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
	InvalidJobInputError,
	QuotaExceededError,
	JobAlreadyFinishedError,
	JobCancelledError,
	JobNotFoundError,
	JobNotRunningError,
	PermissionDeniedError,
	StaleAfterRequiredError,
	TimeoutError,
	UnknownJobTableError,
	isJobError,
} from '../../src/lib/errors.ts';
import { isTerminalStatus, TERMINAL_JOB_STATUSES } from '../../src/lib/state.ts';
import type { JobAdapter } from '../../src/lib/store/adapter.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { runCancellable } from '../../src/lib/toolkit/run-cancellable.ts';
import { counting, Signal, type ConformanceHarness } from './harness.ts';
import { openSuite, rejection, SERVICE, signedIn, uniqueKind } from './conformance-setup.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/**
 * Registers the suite. `setup` runs once (beforeAll) and returns the harness.
 *
 * @example
 * describeJobStoreConformance('postgres.js', async () => harnessOver(db));
 */
export function describeJobStoreConformance(label: string, setup: () => Promise<ConformanceHarness>): void {
	let h: ConformanceHarness;
	let worker: JobStore;
	const asUser = () => signedIn(h);
	/** A queued job and a worker holding it (claimed). */
	const running = async (kind = uniqueKind('work'), payload?: string) => {
		const queued = await worker.enqueue(kind, { payload });
		const job = await worker.claim(queued.id);
		if (!job) throw new Error('claim of a fresh job returned null');
		return job;
	};

	beforeAll(async () => ({ h, worker } = await openSuite(setup)));

	describe(`JobStore over ${label}: 2. Enqueue`, () => {
		test('enqueue writes the row first: it is queued and claimable the moment enqueue returns', async () => {
			const kind = uniqueKind('extract');
			const job = await worker.enqueue(kind, { params: { filename: 'tender.pdf' }, payload: bytes('%PDF-1.7') });
			expect(job).toMatchObject({
				kind,
				status: 'queued',
				params: { filename: 'tender.pdf' },
				attempts: 0,
				maxAttempts: 3,
				progress: 0,
			});
			expect(job.createdAt).toBeInstanceOf(Date);
			expect(job.payload).toBeNull(); // enqueue does not echo megabytes back
			const claimed = await worker.claim(job.id);
			expect(claimed?.status).toBe('running');
			expect(claimed?.payload).toEqual(bytes('%PDF-1.7'));
		});

		test('every call opens and closes its own unit of work: a failed call leaves nothing behind for the next', async () => {
			const kind = uniqueKind('unit');
			await expect(worker.enqueue(kind, { locale: 'not a locale!' })).rejects.toBeInstanceOf(InvalidJobInputError);
			const job = await worker.enqueue(kind);
			expect((await worker.listRecent({ kind })).jobs.map((j) => j.id)).toEqual([job.id]);
		});

		test('a declared kind types params and refuses bad ones before any write, naming the field', async () => {
			const extract = defineJobKind({
				name: uniqueKind('extract'),
				params: z.object({ filename: z.string().min(1), pages: z.number().int().optional() }),
			});
			const job = await worker.enqueue(extract, { params: { filename: 'a.pdf', pages: 3 } });
			const filename: string = job.params.filename;
			expect(filename).toBe('a.pdf');
			const counted = counting(h.adapter(SERVICE));
			const store = new JobStore(counted.adapter);
			// @ts-expect-error: pages must be a number
			const e = await rejection(store.enqueue(extract, { params: { filename: 'b.pdf', pages: 'three' } }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('pages');
			expect(counted.calls).toEqual([]);
			expect((await worker.listRecent({ kind: extract.name })).jobs).toHaveLength(1);
		});

		test('bad input is refused with InvalidJobInputError naming the field the caller wrote, and nothing is written', async () => {
			const kind = uniqueKind('bad');
			const e = await rejection(worker.enqueue(kind, { maxAttempts: 0 }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('maxAttempts');
			expect((await worker.listRecent({ kind })).jobs).toEqual([]);
		});

		test('a user enqueues jobs of their own, and only sees their own', async () => {
			const alice = await asUser();
			const bob = await asUser();
			const kind = uniqueKind('mine');
			const job = await alice.store.enqueue(kind, { params: { n: 1 }, locale: 'pt-BR' });
			expect(job.ownerId).toBe(alice.sub);
			expect((await alice.store.get(job.id)).id).toBe(job.id);
			await expect(bob.store.get(job.id)).rejects.toBeInstanceOf(JobNotFoundError);
			expect((await bob.store.listRecent({ kind })).jobs).toEqual([]);
		});
	});

	describe(`JobStore over ${label}: batches`, () => {
		test('enqueueMany writes every job in one round trip and returns their ids in order, each job with its own params, payload and owner', async () => {
			const kind = uniqueKind('batch');
			const counted = counting(h.adapter(SERVICE));
			const store = new JobStore(counted.adapter);
			const owner = await h.createUser();
			const ids = await store.enqueueMany(kind, [
				{ params: { n: 1 }, payload: bytes('one') },
				{ params: { n: 2 }, maxAttempts: 5, locale: 'pt-BR', ownerId: owner },
				{},
			]);
			expect(counted.calls).toEqual(['job_enqueue_many']);
			expect(ids).toHaveLength(3);
			const jobs = await Promise.all(ids.map((id) => worker.get(id)));
			expect(jobs.map((j) => j.id)).toEqual(ids);
			expect(jobs.map((j) => [j.kind, j.status, j.params, j.maxAttempts, j.locale, j.ownerId, j.payload])).toEqual([
				[kind, 'queued', { n: 1 }, 3, null, null, null],
				[kind, 'queued', { n: 2 }, 5, 'pt-BR', owner, null],
				[kind, 'queued', {}, 3, null, null, null],
			]);
			const claimed = await worker.claimNext({ kinds: [kind], limit: 10 });
			// One statement, one created_at: the jobs of a batch are claimed in no particular order among themselves.
			expect(claimed.map((j) => new TextDecoder().decode(j.payload ?? new Uint8Array())).sort()).toEqual([
				'',
				'',
				'one',
			]);
		});

		test('enqueueMany is all or nothing: a bad item is named by its index and nothing is written', async () => {
			const kind = uniqueKind('batch-bad');
			const e = await rejection(worker.enqueueMany(kind, [{ params: { ok: true } }, { maxAttempts: 1000 }]));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('items[1].maxAttempts');
			const typed = defineJobKind({ name: kind, params: z.object({ n: z.number() }) });
			const e2 = await rejection(worker.enqueueMany(typed, [{ params: { n: 1 } }, { params: { n: 'x' as never } }]));
			expect((e2 as InvalidJobInputError).field).toBe('items[1].n');
			expect((await worker.listRecent({ kind })).jobs).toEqual([]);
		});

		test('a user enqueues many jobs of their own, never of someone else', async () => {
			const { sub, store } = await asUser();
			const other = await h.createUser();
			const kind = uniqueKind('mine');
			const ids = await store.enqueueMany(kind, [{}, {}]);
			expect((await Promise.all(ids.map((id) => store.get(id)))).map((j) => j.ownerId)).toEqual([sub, sub]);
			expect(await rejection(store.enqueueMany(kind, [{}, { ownerId: other }]))).toBeInstanceOf(PermissionDeniedError);
			expect((await store.listRecent({ kind })).jobs).toHaveLength(2);
		});

		test('succeedMany closes many jobs in one round trip, each with its own result; a job not closable is left out', async () => {
			const a = await running();
			const b = await running();
			const c = await running();
			await worker.cancel(c.id);
			const counted = counting(h.adapter(SERVICE));
			const store = new JobStore(counted.adapter);
			const resultId = randomUUID();
			const closed = await store.succeedMany([
				{ id: a.id, attempt: a.attempts, resultId, timings: { only: { seconds: 2, size: null } } },
				{ id: b.id, attempt: b.attempts + 1 },
				{ id: c.id, attempt: c.attempts },
			]);
			expect(counted.calls).toEqual(['job_succeed_many']);
			expect(closed.map((j) => [j.id, j.status, j.resultId, j.timings, j.payload])).toEqual([
				[a.id, 'done', resultId, { only: { seconds: 2, size: null } }, null],
			]);
			expect((await worker.get(b.id)).status).toBe('running');
			expect((await worker.get(c.id)).status).toBe('cancelled');
		});

		test('succeedManyIds closes as succeedMany does and answers only the ids that closed', async () => {
			const a = await running();
			const b = await running();
			const c = await running();
			await worker.cancel(c.id);
			const counted = counting(h.adapter(SERVICE));
			const store = new JobStore(counted.adapter);
			const resultId = randomUUID();
			const closed = await store.succeedManyIds([
				{ id: a.id, attempt: a.attempts, resultId },
				{ id: b.id, attempt: b.attempts + 1 },
				{ id: c.id, attempt: c.attempts },
				{ id: 'not-a-uuid' },
			]);
			expect(counted.calls).toEqual(['job_succeed_many']);
			expect([...closed]).toEqual([a.id]);
			expect(await worker.get(a.id)).toMatchObject({ status: 'done', resultId });
			expect((await worker.get(b.id)).status).toBe('running');
			expect((await worker.get(c.id)).status).toBe('cancelled');
			expect(await store.succeedManyIds([{ id: b.id, attempt: b.attempts + 1 }])).toEqual(new Set());
		});
	});

	describe(`JobStore over ${label}: 3. The worker`, () => {
		test('claim is what separates "queued" from "running"', async () => {
			const job = await worker.enqueue(uniqueKind('extract'));
			expect((await worker.get(job.id)).status).toBe('queued');
			const claimed = await worker.claim(job.id);
			expect(claimed).toMatchObject({ id: job.id, status: 'running', attempts: 1 });
			expect(claimed?.startedAt).toBeInstanceOf(Date);
			expect((await worker.get(job.id)).status).toBe('running');
		});

		test('claim returns null when the job is not yours (someone else claimed it, or the id does not exist)', async () => {
			const job = await running();
			expect(await worker.claim(job.id)).toBeNull();
			expect(await worker.claim(randomUUID())).toBeNull();
			expect(await worker.claim('not-a-uuid')).toBeNull();
		});

		test('two workers racing for one id cannot both win', async () => {
			const job = await worker.enqueue(uniqueKind('race'));
			const other = new JobStore(h.adapter(SERVICE));
			const results = await Promise.all([
				worker.claim(job.id),
				other.claim(job.id),
				worker.claim(job.id),
				other.claim(job.id),
			]);
			expect(results.filter((r) => r !== null)).toHaveLength(1);
			expect((await worker.get(job.id)).attempts).toBe(1);
		});

		test('claimNext hands each queued job to exactly one worker, oldest first, only of the kinds asked', async () => {
			const kind = uniqueKind('batch');
			const ids: string[] = [];
			for (let i = 0; i < 5; i++) ids.push((await worker.enqueue(kind, { params: { i } })).id);
			const ignored = await worker.enqueue(uniqueKind('other'));
			const other = new JobStore(h.adapter(SERVICE));
			const [a, b] = await Promise.all([
				worker.claimNext({ kinds: [kind], limit: 3 }),
				other.claimNext({ kinds: [kind], limit: 3 }),
			]);
			const claimed = [...a, ...b].map((j) => j.id);
			expect(new Set(claimed).size).toBe(claimed.length);
			expect(claimed.sort()).toEqual([...ids].sort());
			expect([...a, ...b].every((j) => j.status === 'running')).toBe(true);
			expect((await worker.get(ignored.id)).status).toBe('queued');
			expect(await worker.claimNext({ kinds: [kind] })).toEqual([]);
		});

		test('succeed / fail drop the payload', async () => {
			const a = await running(uniqueKind('extract'), '%PDF big document');
			const b = await running(uniqueKind('extract'), '%PDF unreadable');
			expect(a.payload).toEqual(bytes('%PDF big document'));
			const resultId = randomUUID();
			const done = await worker.succeed(a.id, { resultId, attempt: a.attempts });
			expect(done).toMatchObject({ status: 'done', resultId, payload: null, progress: 100, error: null });
			expect(done.finishedAt).toBeInstanceOf(Date);
			const failed = await worker.fail(b.id, 'I could not read the file: empty file', {
				errorCode: 'unsupported_format',
			});
			expect(failed).toMatchObject({
				status: 'failed',
				payload: null,
				error: 'I could not read the file: empty file',
				errorCode: 'unsupported_format',
			});
			// Nothing can bring the payload back: a fresh claim finds nothing to claim.
			expect(await worker.claim(a.id)).toBeNull();
		});

		test('retry requeues after an unexpected failure, and fails once the attempts are spent', async () => {
			const kind = uniqueKind('flaky');
			const queued = await worker.enqueue(kind, { maxAttempts: 2, payload: 'input' });
			const first = (await worker.claim(queued.id))!;
			const requeued = await worker.retry(first.id, 'The reading service did not answer.', { attempt: 1 });
			expect(requeued).toMatchObject({ status: 'queued', errorCode: 'retrying', attempts: 1 });
			const second = (await worker.claim(queued.id))!;
			expect(second.attempts).toBe(2);
			expect(second.payload).toEqual(bytes('input'));
			const spent = await worker.retry(second.id, 'The reading service did not answer.', {
				attempt: 2,
				delaySeconds: 5,
			});
			expect(spent).toMatchObject({
				status: 'failed',
				errorCode: 'attempts_exhausted',
				error: 'The reading service did not answer.',
			});
		});

		test('retry with a delay is not claimable before the delay', async () => {
			const job = await running(uniqueKind('later'));
			const requeued = await worker.retry(job.id, 'busy', { delaySeconds: 3600 });
			expect(requeued.availableAt.getTime()).toBeGreaterThan(Date.now() + 3500_000);
			expect(await worker.claim(job.id)).toBeNull();
		});

		test('release gives the job back without spending the attempt', async () => {
			const job = await running(uniqueKind('shutdown'), 'payload kept');
			const released = await worker.release(job.id, { attempt: job.attempts });
			expect(released).toMatchObject({ status: 'queued', attempts: 0, startedAt: null });
			const again = (await worker.claim(job.id))!;
			expect(again.attempts).toBe(1);
			expect(again.payload).toEqual(bytes('payload kept'));
		});

		test("the worker operations are the service role's: a user cannot claim", async () => {
			const alice = await asUser();
			const job = await alice.store.enqueue(uniqueKind('mine'));
			await expect(alice.store.claim(job.id)).rejects.toBeInstanceOf(PermissionDeniedError);
			await expect(alice.store.claimNext()).rejects.toBeInstanceOf(PermissionDeniedError);
			expect((await worker.get(job.id)).status).toBe('queued');
		});
	});

	describe(`JobStore over ${label}: 4. The screen asking "is it done yet?"`, () => {
		test("watch with emitOn ['status'] yields the job on every status change only, until a terminal state, and then ends", async () => {
			const counted = counting(h.adapter(SERVICE));
			const screen = new JobStore(counted.adapter);
			const job = await worker.enqueue(uniqueKind('watched'));
			const seen: string[] = [];
			const frames = new Signal();
			const watching = (async () => {
				for await (const j of screen.watch(job.id, { intervalMs: 5, emitOn: ['status'] })) {
					seen.push(j.status);
					frames.notify();
				}
			})();
			await frames.until(() => seen.length === 1);
			const claimed = (await worker.claim(job.id))!;
			await frames.until(() => seen.length === 2);
			await worker.tick(job.id, { progress: 50, stage: 'table' });
			// Two more polls see the progress change; with emitOn ['status'] neither yields.
			const gets = counted.count('job_get');
			await counted.signal.until(() => counted.count('job_get') >= gets + 2);
			await worker.succeed(job.id, { attempt: claimed.attempts });
			await watching;
			expect(seen).toEqual(['queued', 'running', 'done']);
		});

		test("a watcher learns within seconds that its job's worker went silent, and that it came back", async () => {
			const { sub, store: screen } = await asUser();
			const queued = await worker.enqueue(uniqueKind('silent'), { ownerId: sub });
			const job = (await worker.claim(queued.id, { heartbeatMs: 200 }))!;
			expect(job.heartbeatMs).toBe(200);
			const seen: Job[] = [];
			const frames = new Signal();
			const watching = (async () => {
				for await (const j of screen.watch(job.id, { intervalMs: 50, emitOn: ['status'] })) {
					seen.push(j);
					frames.notify();
				}
			})();
			// The worker promised a beat every 200 ms and sends none.
			await frames.until(() => seen.some((j) => j.workerSilent));
			const silentAt = seen.findIndex((j) => j.workerSilent);
			expect(seen[silentAt]).toMatchObject({ status: 'running', heartbeatMs: 200 });
			expect(seen.slice(0, silentAt).every((j) => !j.workerSilent)).toBe(true);
			// It comes back: one tick is a sign of life.
			await worker.tick(job.id, { progress: 5 });
			await frames.until(() => seen.length > silentAt + 1);
			expect(seen[silentAt + 1]).toMatchObject({ status: 'running', workerSilent: false });
			await worker.succeed(job.id);
			await watching;
			expect(seen.at(-1)).toMatchObject({ status: 'done', workerSilent: false });
		});

		test('a job claimed without a declared heartbeat is never called silent by a watcher', async () => {
			const job = await running(uniqueKind('bare'));
			expect(job.heartbeatMs).toBeNull();
			const counted = counting(h.adapter(SERVICE));
			const seen: Job[] = [];
			const ticks = (async () => {
				for (let i = 1; i <= 3; i++) await counted.signal.until(() => counted.count('job_get') >= i + 1);
				await worker.succeed(job.id);
			})();
			for await (const j of new JobStore(counted.adapter).watch(job.id, { intervalMs: 20 })) seen.push(j);
			await ticks;
			expect(seen.map((j) => [j.status, j.workerSilent])).toEqual([
				['running', false],
				['done', false],
			]);
		});

		test('watch yields the current status immediately, so a late subscriber gets exactly one value', async () => {
			const job = await running(uniqueKind('late'));
			await worker.succeed(job.id);
			const counted = counting(h.adapter(SERVICE));
			const seen: Job[] = [];
			for await (const j of new JobStore(counted.adapter).watch(job.id, { intervalMs: 5 })) seen.push(j);
			expect(seen.map((j) => j.status)).toEqual(['done']);
			expect(counted.calls).toEqual(['job_get']);
		});

		test('timeout gives up with TimeoutError instead of waiting forever', async () => {
			const job = await worker.enqueue(uniqueKind('stuck'));
			const seen: string[] = [];
			const e = await rejection(
				(async () => {
					// The first read counts toward the timeout too: leave it room on a busy machine.
					for await (const j of worker.watch(job.id, { intervalMs: 10, timeoutMs: 1000 })) seen.push(j.status);
				})(),
			);
			expect(e).toBeInstanceOf(TimeoutError);
			expect(seen).toEqual(['queued']);
		});

		test('timeout gives up with TimeoutError even while a read is in flight', async () => {
			const job = await worker.enqueue(uniqueKind('stuck-read'));
			const inner = h.adapter(SERVICE);
			let gets = 0;
			// The first read answers; every later one never does (a hung connection).
			const hung = Object.assign(Object.create(inner) as JobAdapter, {
				call: ((fn, args) =>
					fn === 'job_get' && ++gets > 1 ? new Promise(() => {}) : inner.call(fn, args)) as JobAdapter['call'],
			});
			const seen: string[] = [];
			const started = performance.now();
			const e = await rejection(
				(async () => {
					// The first read counts toward the timeout too: leave it room on a busy machine.
					for await (const j of new JobStore(hung).watch(job.id, { intervalMs: 10, timeoutMs: 1000 }))
						seen.push(j.status);
				})(),
			);
			expect(e).toBeInstanceOf(TimeoutError);
			expect(seen).toEqual(['queued']);
			expect(gets).toBeGreaterThan(1); // it was waiting on a read when the deadline came
			// Before, a hung read held the timeout back forever.
			expect(performance.now() - started).toBeLessThan(3000);
		});

		test('watch refuses NaN, Infinity and timings setTimeout cannot keep, naming the option', async () => {
			const job = await worker.enqueue(uniqueKind('bad-timings'));
			const counted = counting(h.adapter(SERVICE));
			const store = new JobStore(counted.adapter);
			const cases: [string, object][] = [
				['timeoutMs', { timeoutMs: Number.NaN }],
				['timeoutMs', { timeoutMs: Infinity }],
				['timeoutMs', { timeoutMs: 0 }],
				['intervalMs', { intervalMs: 3e9 }],
				['intervalMs', { intervalMs: Number.NaN }],
			];
			for (const [name, options] of cases) {
				const e = await rejection(store.watch(job.id, options).next());
				expect(e).toBeInstanceOf(RangeError);
				expect((e as Error).message).toMatch(new RegExp(`^${name} must be`));
			}
			expect(counted.count()).toBe(0);
		});

		test('an AbortSignal ends the watch quietly', async () => {
			const counted = counting(h.adapter(SERVICE));
			const job = await worker.enqueue(uniqueKind('abandoned'));
			const controller = new AbortController();
			const seen: string[] = [];
			const watching = (async () => {
				for await (const j of new JobStore(counted.adapter).watch(job.id, { intervalMs: 5, signal: controller.signal }))
					seen.push(j.status);
			})();
			await counted.signal.until(() => counted.count('job_get') >= 3);
			controller.abort();
			await watching; // resolves: abort is not an error
			const polls = counted.count('job_get');
			expect(seen).toEqual(['queued']);
			expect(polls).toBeLessThanOrEqual(4);
		});

		test('watch raises JobNotFoundError for an id that does not exist', async () => {
			const e = await rejection(
				(async () => {
					for await (const j of worker.watch(randomUUID(), { intervalMs: 5 })) void j;
				})(),
			);
			expect(e).toBeInstanceOf(JobNotFoundError);
		});

		test('no session is held between ticks: the worker writes while the screen watches', async () => {
			const job = await worker.enqueue(uniqueKind('busy'));
			const seen: string[] = [];
			const frames = new Signal();
			const watching = (async () => {
				for await (const j of worker.watch(job.id, { intervalMs: 5 })) {
					seen.push(j.status);
					frames.notify();
				}
			})();
			await frames.until(() => seen.length === 1);
			const claimed = (await worker.claim(job.id))!;
			for (let i = 1; i <= 5; i++)
				expect(await worker.tick(job.id, { progress: i * 10, stage: 'work' })).toBe('running');
			await worker.succeed(job.id, { attempt: claimed.attempts });
			await watching;
			expect(seen.at(-1)).toBe('done');
		});
	});

	describe(`JobStore over ${label}: 5. The worker that died holding the job`, () => {
		const table = `reclaim_${randomUUID().slice(0, 8)}`;
		let store: JobStore;
		beforeAll(async () => {
			await h.createJobTable(table);
			store = new JobStore(h.adapter(SERVICE), { table, staleAfterMs: 300_000 });
		});

		test('reclaim_stale readmits a running row nobody will ever close', async () => {
			const job = (await store.claim((await store.enqueue('extract', { payload: 'doc' })).id))!;
			const fresh = (await store.claim((await store.enqueue('extract')).id))!;
			await h.backdate(job.id, 301, table);
			const reclaimed = await store.reclaimStale();
			expect(reclaimed.map((j) => j.id)).toEqual([job.id]);
			expect(reclaimed[0]).toMatchObject({ status: 'queued', attempts: 1, startedAt: null });
			expect((await store.get(fresh.id)).status).toBe('running');
			const again = (await store.claim(job.id))!;
			expect(again).toMatchObject({ status: 'running', attempts: 2 });
			expect(again.payload).toEqual(bytes('doc'));
		});

		test('unless it already spent its max_attempts, in which case it is closed as failed', async () => {
			const en = (await store.claim((await store.enqueue('extract', { maxAttempts: 1 })).id))!;
			const pt = (await store.claim((await store.enqueue('extract', { maxAttempts: 1, locale: 'pt-BR' })).id))!;
			await h.backdate(en.id, 400, table);
			await h.backdate(pt.id, 400, table);
			const closed = await store.reclaimStale();
			expect(closed.map((j) => j.status)).toEqual(['failed', 'failed']);
			const byId = new Map(closed.map((j) => [j.id, j]));
			expect(byId.get(en.id)).toMatchObject({ errorCode: 'worker_lost', payload: null });
			expect(byId.get(en.id)?.error).toMatch(/stopped unexpectedly 1 time/);
			expect(byId.get(pt.id)?.error).toMatch(/parou inesperadamente 1 vez/);
		});

		test('a heartbeat within stale_after keeps a running job from being reclaimed', async () => {
			const job = (await store.claim((await store.enqueue('extract')).id))!;
			await h.backdate(job.id, 301, table);
			expect(await store.tick(job.id, { progress: 10, stage: 'table' })).toBe('running');
			expect(await store.reclaimStale()).toEqual([]);
			expect((await store.get(job.id)).status).toBe('running');
		});

		test('a late finish from a reclaimed attempt cannot land on the attempt that owns the job now', async () => {
			const first = (await store.claim((await store.enqueue('extract')).id))!;
			await h.backdate(first.id, 301, table);
			await store.reclaimStale();
			const second = (await store.claim(first.id))!;
			const e = await rejection(store.succeed(first.id, { attempt: first.attempts }));
			expect(e).toBeInstanceOf(JobAlreadyFinishedError);
			expect(isJobError(e, 'job_cancelled')).toBe(false);
			await expect(store.tick(first.id, { progress: 50, attempt: first.attempts })).rejects.toBeInstanceOf(
				JobAlreadyFinishedError,
			);
			expect((await store.succeed(second.id, { attempt: second.attempts })).status).toBe('done');
		});

		test('fencing is not opt-in: a worker that closes without naming its attempt cannot close the attempt that owns the job now', async () => {
			const late = new JobStore(h.adapter(SERVICE), { table });
			const first = (await late.claim((await store.enqueue('extract')).id))!;
			await h.backdate(first.id, 301, table);
			await store.reclaimStale();
			const second = (await store.claim(first.id))!;
			// The bare way: claim -> work -> succeed, no attempt given.
			expect(await rejection(late.tick(first.id, { progress: 50 }))).toBeInstanceOf(JobAlreadyFinishedError);
			expect(await rejection(late.succeed(first.id))).toBeInstanceOf(JobAlreadyFinishedError);
			expect((await store.get(first.id)).status).toBe('running');
			expect((await store.succeed(second.id)).status).toBe('done');
		});

		test('a worker declares its heartbeat at claim: reclaimSilent readmits it after three missed beats, and never a job claimed without one', async () => {
			const declared = (await store.claim((await store.enqueue('extract')).id, { heartbeatMs: 1000 }))!;
			await store.enqueue('extract');
			const [next] = await store.claimNext({ kinds: ['extract'], heartbeatMs: 1000 });
			const bare = (await store.claim((await store.enqueue('extract')).id))!;
			expect([declared.heartbeatMs, next!.heartbeatMs, bare.heartbeatMs]).toEqual([1000, 1000, null]);
			for (const j of [declared, next!, bare]) await h.backdate(j.id, 3600, table);
			const reclaimed = await new JobStore(h.adapter(SERVICE), { table }).reclaimSilent();
			expect(reclaimed.map((j) => j.id).sort()).toEqual([declared.id, next!.id].sort());
			expect((await store.get(bare.id)).status).toBe('running');
			await store.succeed(bare.id);
		});

		test('a heartbeat the database cannot hold is refused at claim, naming heartbeat_ms, and the job stays queued', async () => {
			const queued = await store.enqueue('extract');
			const e = await rejection(store.claim(queued.id, { heartbeatMs: 5 }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).details).toBe('field=heartbeat_ms');
			expect(await rejection(store.claim(queued.id, { heartbeatMs: 1.5 }))).toBeInstanceOf(InvalidJobInputError);
			expect((await store.get(queued.id)).status).toBe('queued');
			await store.cancel(queued.id);
		});

		test('reclaimSilent also closes queued jobs past their expireAfterMs as failed (expired), as the reclaim schedule does', async () => {
			const kind = uniqueKind('expiring');
			const late = await store.enqueue(kind, { runAt: new Date(Date.now() - 3_600_000), expireAfterMs: 60_000 });
			const fresh = await store.enqueue(kind, { expireAfterMs: 3_600_000 });
			const closed = await new JobStore(h.adapter(SERVICE), { table }).reclaimSilent();
			expect(closed.filter((j) => j.kind === kind).map((j) => [j.id, j.status, j.errorCode])).toEqual([
				[late.id, 'failed', 'expired'],
			]);
			expect((await store.get(late.id)).status).toBe('failed');
			expect((await store.get(fresh.id)).status).toBe('queued');
			await store.cancel(fresh.id);
		});

		test('reclaim_stale refuses without stale_after', async () => {
			const counted = counting(h.adapter(SERVICE));
			const store = new JobStore(counted.adapter, { table });
			const e = await rejection(store.reclaimStale());
			expect(e).toBeInstanceOf(StaleAfterRequiredError);
			expect((e as StaleAfterRequiredError).code).toBe('stale_after_required');
			expect(counted.calls).toEqual([]); // refused before any SQL
		});
	});

	describe(`JobStore over ${label}: recurring schedules`, () => {
		test('an expression out of range is refused naming the schedule, by the store before any call and by the database', async () => {
			const counted = counting(h.adapter(SERVICE));
			const bad = [{ name: 'nightly-report', kind: 'sweep', cron: '61 25 * * *', params: {} }];
			const e = await rejection(new JobStore(counted.adapter).syncSchedules(bad));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect(e).toMatchObject({ field: 'schedules["nightly-report"].cron', message: 'the minute is 0-59; got 61' });
			expect(counted.calls).toEqual([]);
			const inDatabase = await rejection(h.adapter(SERVICE).call('job_sync_schedules', { schedules: bad }));
			expect(inDatabase).toBeInstanceOf(InvalidJobInputError);
			expect(inDatabase).toMatchObject({
				field: 'schedules["nightly-report"].cron',
				message: 'the minute is 0-59; got 61',
			});
		});
	});

	describe(`JobStore over ${label}: what a user may queue`, () => {
		const table = `admit_${randomUUID().slice(0, 8)}`;
		beforeAll(async () => {
			await h.createJobTable(table, { kinds: ['export.csv'], maxActivePerOwner: 2 });
		});

		test('an unknown kind is refused at enqueue with InvalidJobInputError naming the kind, and nothing is written', async () => {
			const { store } = await asUser();
			const users = new JobStore(store.adapter, { table });
			const e = await rejection(users.enqueue('export.anything'));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('kind');
			expect((e as InvalidJobInputError).message).toMatch(/not registered/);
			expect(await rejection(users.enqueueMany('made.up', [{}, {}]))).toBeInstanceOf(InvalidJobInputError);
			expect((await users.listRecent()).jobs).toEqual([]);
			// A worker is trusted server code: it may queue any kind.
			expect((await new JobStore(h.adapter(SERVICE), { table }).enqueue('internal.reindex')).status).toBe('queued');
		});

		test('past the per-owner quota enqueue throws QuotaExceededError naming the limit, and writes nothing', async () => {
			const { store } = await asUser();
			const users = new JobStore(store.adapter, { table });
			const first = await users.enqueue('export.csv');
			await users.enqueue('export.csv');
			const e = await rejection(users.enqueue('export.csv'));
			expect(e).toBeInstanceOf(QuotaExceededError);
			expect((e as QuotaExceededError).quota).toBe('max_active_per_owner');
			expect((await users.listRecent()).jobs).toHaveLength(2);
			// Room comes back when a job ends.
			await users.cancel(first.id);
			expect((await users.enqueue('export.csv')).status).toBe('queued');
		});
	});

	describe(`JobStore over ${label}: scheduled runs, idempotency keys and tags`, () => {
		test('runAt / delayMs: a scheduled job is not claimable before its time, and the row says when it starts', async () => {
			const kind = uniqueKind('later');
			const job = await worker.enqueue(kind, { delayMs: 60_000 });
			expect(job.status).toBe('queued');
			expect(job.availableAt.getTime() - job.createdAt.getTime()).toBeGreaterThanOrEqual(59_000);
			expect(await worker.claimNext({ kinds: [kind] })).toEqual([]);
			const at = new Date(Date.now() + 3_600_000);
			const moved = await worker.reschedule(job.id, { runAt: at });
			expect(moved.availableAt.toISOString()).toBe(at.toISOString());
			await worker.reschedule(job.id, {}); // now
			expect((await worker.claimNext({ kinds: [kind] })).map((j) => j.id)).toEqual([job.id]);
			await worker.succeed(job.id);
		});

		test('a scheduled job can be cancelled before it starts; a started one cannot be rescheduled', async () => {
			const kind = uniqueKind('later');
			const scheduled = await worker.enqueue(kind, { runAt: new Date(Date.now() + 600_000) });
			expect((await worker.cancel(scheduled.id))?.status).toBe('cancelled');
			expect(await rejection(worker.reschedule(scheduled.id, { delayMs: 1000 }))).toBeInstanceOf(JobCancelledError);
			const started = await running(kind);
			const e = await rejection(worker.reschedule(started.id, { delayMs: 1000 }));
			expect(e).toBeInstanceOf(JobAlreadyFinishedError);
			expect(await rejection(worker.enqueue(kind, { runAt: new Date(), delayMs: 5 }))).toBeInstanceOf(
				InvalidJobInputError,
			);
			await worker.succeed(started.id);
		});

		test("a user reschedules their own queued job; another user's reschedule finds nothing", async () => {
			const a = await asUser();
			const b = await asUser();
			const job = await a.store.enqueue(uniqueKind('mine'), { delayMs: 600_000 });
			const moved = await a.store.reschedule(job.id, { delayMs: 1_200_000 });
			expect(moved.availableAt.getTime()).toBeGreaterThan(job.availableAt.getTime());
			expect(await rejection(b.store.reschedule(job.id, {}))).toBeInstanceOf(JobNotFoundError);
			await a.store.cancel(job.id);
		});

		test('idempotencyKey: enqueue twice with one key and the second returns the first job, flagged existing', async () => {
			const { store } = await asUser();
			const kind = uniqueKind('export');
			const key = `form-${randomUUID()}`;
			const first = await store.enqueue(kind, { idempotencyKey: key, params: { n: 1 } });
			const again = await store.enqueue(kind, { idempotencyKey: key, params: { n: 2 } });
			expect(first.existing).toBe(false);
			expect(again).toMatchObject({ id: first.id, existing: true, idempotencyKey: key, params: { n: 1 } });
			// Finished, the key still stands within its time to live...
			await store.cancel(first.id);
			expect((await store.enqueue(kind, { idempotencyKey: key })).id).toBe(first.id);
			// ...and not past it.
			const other = `form-${randomUUID()}`;
			const short = await store.enqueue(kind, { idempotencyKey: other, idempotencyTtlMs: 0 });
			expect((await store.enqueue(kind, { idempotencyKey: other })).id, 'live: the key holds').toBe(short.id);
			await store.cancel(short.id);
			expect((await store.enqueue(kind, { idempotencyKey: other })).existing, 'finished, TTL 0: a new job').toBe(false);
			// Another user's key is theirs alone.
			const b = await asUser();
			const theirs = await b.store.enqueue(kind, { idempotencyKey: key });
			expect(theirs.existing).toBe(false);
			expect(theirs.id).not.toBe(first.id);
		});

		test('tags: listRecent returns the jobs carrying every tag asked', async () => {
			const { store } = await asUser();
			const kind = uniqueKind('tagged');
			const a = await store.enqueue(kind, { tags: ['invoice', 'acme'] });
			const b = await store.enqueue(kind, { tags: ['invoice'] });
			await store.enqueue(kind);
			expect((await store.listRecent({ kind, tags: ['invoice'] })).jobs.map((j) => j.id)).toEqual([b.id, a.id]);
			expect((await store.listRecent({ kind, tags: ['invoice', 'acme'] })).jobs.map((j) => j.id)).toEqual([a.id]);
			expect(a.tags).toEqual(['invoice', 'acme']);
			expect(
				await rejection(store.enqueue(kind, { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) })),
			).toBeInstanceOf(InvalidJobInputError);
		});

		test('priority: claims take the highest priority first, then the oldest', async () => {
			const kind = uniqueKind('prio');
			const low = await worker.enqueue(kind, { priority: -1 });
			const normal = await worker.enqueue(kind);
			const urgent = await worker.enqueue(kind, { priority: 10 });
			const [second] = await worker.enqueueMany(kind, [{ priority: 10 }]);
			const order = [];
			for (let i = 0; i < 4; i++) order.push((await worker.claimNext({ kinds: [kind] }))[0]!.id);
			expect(order).toEqual([urgent.id, second, normal.id, low.id]);
			expect(urgent.priority).toBe(10);
			for (const id of order) await worker.succeed(id);
			expect(await rejection(worker.enqueue(kind, { priority: 1.5 }))).toBeInstanceOf(InvalidJobInputError);
		});

		test('setConcurrency: one job per concurrencyKey runs at a time; the others wait queued', async () => {
			const kind = uniqueKind('export');
			await worker.setConcurrency(kind, { maxRunningPerKey: 1 });
			const a1 = await worker.enqueue(kind, { concurrencyKey: 'alice' });
			await worker.enqueue(kind, { concurrencyKey: 'alice' });
			const b1 = await worker.enqueue(kind, { concurrencyKey: 'bob' });
			const claimed = await worker.claimNext({ kinds: [kind], limit: 10 });
			expect(claimed.map((j) => j.id).sort()).toEqual([a1.id, b1.id].sort());
			expect(claimed[0]!.concurrencyKey).not.toBeNull();
			await worker.succeed(a1.id);
			expect((await worker.claimNext({ kinds: [kind], limit: 10 })).map((j) => j.concurrencyKey)).toEqual(['alice']);
			await worker.setConcurrency(kind, {});
		});

		test('expireAfterMs: the row says when a job that nobody starts expires', async () => {
			const kind = uniqueKind('expiring');
			const job = await worker.enqueue(kind, { delayMs: 60_000, expireAfterMs: 3_600_000 });
			expect(job.expiresAt!.getTime() - job.availableAt.getTime()).toBe(3_600_000);
			expect(await rejection(worker.enqueue(kind, { expireAfterMs: 0 }))).toBeInstanceOf(InvalidJobInputError);
			await worker.cancel(job.id);
		});

		test('enqueueMany takes runAt, delayMs and tags per item', async () => {
			const kind = uniqueKind('many');
			const at = new Date(Date.now() + 3_600_000);
			const [x, y] = await worker.enqueueMany(kind, [
				{ runAt: at, tags: ['a'] },
				{ delayMs: 0, tags: ['b'] },
			]);
			const later = await worker.get(x!);
			expect(later.availableAt.toISOString()).toBe(at.toISOString());
			expect(later.tags).toEqual(['a']);
			expect((await worker.get(y!)).tags).toEqual(['b']);
			expect((await worker.claimNext({ kinds: [kind], limit: 2 })).map((j) => j.id)).toEqual([y]);
			await worker.succeed(y!);
			await worker.cancel(x!);
		});
	});

	describe(`JobStore over ${label}: 6. Listing`, () => {
		test('listRecent returns the newest first, filtered by kind and status', async () => {
			const kind = uniqueKind('extract');
			const a = await worker.enqueue(kind, { params: { n: 'a' } });
			const b = await worker.enqueue(kind, { params: { n: 'b' } });
			const c = await worker.enqueue(kind, { params: { n: 'c' } });
			await worker.enqueue(uniqueKind('other'));
			await worker.claim(b.id);
			const recent = await worker.listRecent({ kind, limit: 20 });
			expect(recent.jobs.map((j) => j.id)).toEqual([c.id, b.id, a.id]);
			expect(recent.nextCursor).toBeNull();
			expect(recent.jobs.every((j) => j.payload === null)).toBe(true);
			const runningNow = await worker.listRecent({ kind, status: 'running' });
			expect(runningNow.jobs.map((j) => j.id)).toEqual([b.id]);
		});

		test('listing returns [] when nothing matches', async () => {
			expect(await worker.listRecent({ kind: uniqueKind('nothing') })).toEqual({ jobs: [], nextCursor: null });
			expect(await worker.listRecent({ kind: uniqueKind('nothing'), status: 'failed' })).toEqual({
				jobs: [],
				nextCursor: null,
			});
		});

		test('pages follow each other through nextCursor without skipping or repeating a job', async () => {
			const kind = uniqueKind('paged');
			const ids: string[] = [];
			for (let i = 0; i < 7; i++) ids.push((await worker.enqueue(kind, { params: { i } })).id);
			const seen: string[] = [];
			let cursor: string | null = null;
			let pages = 0;
			do {
				const page: Awaited<ReturnType<JobStore['listRecent']>> = await worker.listRecent({ kind, limit: 3, cursor });
				seen.push(...page.jobs.map((j) => j.id));
				cursor = page.nextCursor;
				pages++;
			} while (cursor);
			expect(seen).toEqual([...ids].reverse());
			expect(pages).toBe(3);
		});

		test('a cursor that listRecent did not return is refused, naming the field', async () => {
			const e = await rejection(worker.listRecent({ cursor: 'page-2' }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('cursor');
		});
	});

	describe(`JobStore over ${label}: 7. Cancelling`, () => {
		test('cancel writes cancelled and answers immediately', async () => {
			const alice = await asUser();
			const job = await alice.store.enqueue(uniqueKind('extract'), { payload: 'doc' });
			const cancelled = await alice.store.cancel(job.id, { reason: 'cancelled by the user' });
			expect(cancelled).toMatchObject({
				id: job.id,
				status: 'cancelled',
				error: 'cancelled by the user',
				errorCode: 'cancelled',
				payload: null,
			});
			expect(cancelled?.finishedAt).toBeInstanceOf(Date);
		});

		test('cancel is idempotent on purpose: null for an unknown id, a job already done, already failed, or already cancelled', async () => {
			const done = await running();
			await worker.succeed(done.id);
			const failed = await running();
			await worker.fail(failed.id, 'no');
			const cancelled = await worker.enqueue(uniqueKind('twice'));
			expect(await worker.cancel(cancelled.id)).not.toBeNull();
			expect(await worker.cancel(cancelled.id)).toBeNull();
			expect(await worker.cancel(done.id)).toBeNull();
			expect(await worker.cancel(failed.id)).toBeNull();
			expect(await worker.cancel(randomUUID())).toBeNull();
			expect(await worker.cancel('not-a-uuid')).toBeNull();
			expect((await worker.get(done.id)).status).toBe('done');
		});

		test("a user cancels their own job; another user's cancel finds nothing to stop", async () => {
			const alice = await asUser();
			const bob = await asUser();
			const job = await alice.store.enqueue(uniqueKind('mine'));
			expect(await bob.store.cancel(job.id)).toBeNull();
			expect((await worker.get(job.id)).status).toBe('queued');
			expect((await alice.store.cancel(job.id))?.status).toBe('cancelled');
		});

		test('the worker gives up: run_cancellable aborts the work in flight once the job is cancelled', async () => {
			const job = await running(uniqueKind('summarize'));
			const polls = counting(h.adapter(SERVICE));
			const watcher = new JobStore(polls.adapter);
			let aborted = false;
			const started = new Signal();
			let inFlight = false;
			const work = runCancellable(
				(signal) =>
					new Promise<string>((_, reject) => {
						inFlight = true;
						started.notify();
						signal.addEventListener('abort', () => {
							aborted = true;
							reject(signal.reason);
						});
					}),
				{ interrupted: watcher.cancellationWatch(job.id), intervalMs: 5 },
			);
			await started.until(() => inFlight);
			await polls.signal.until(() => polls.count('job_get_status') >= 1);
			await worker.cancel(job.id, { reason: 'cancelled by the user' });
			const e = await rejection(work);
			expect(isJobError(e, 'stage_interrupted')).toBe(true);
			expect(aborted).toBe(true);
		});

		test('cancellationWatch says stop once the job is no longer running: cancelled, or gone', async () => {
			const job = await running();
			const stop = worker.cancellationWatch(job.id);
			expect(await stop()).toBe(false);
			await worker.cancel(job.id);
			expect(await stop()).toBe(true);
			expect(await worker.cancellationWatch(randomUUID())()).toBe(true);
		});

		test('succeed refuses to land on top of a cancellation', async () => {
			const a = await running();
			const b = await running();
			await worker.cancel(a.id);
			await worker.cancel(b.id);
			const e = await rejection(worker.succeed(a.id, { resultId: randomUUID(), attempt: a.attempts }));
			expect(e).toBeInstanceOf(JobCancelledError);
			expect(e).toBeInstanceOf(JobAlreadyFinishedError);
			expect(isJobError(e, 'job_already_finished')).toBe(true);
			expect((e as JobCancelledError).code).toBe('job_cancelled');
			await expect(worker.fail(b.id, 'too late')).rejects.toBeInstanceOf(JobCancelledError);
			expect(await worker.get(a.id)).toMatchObject({ status: 'cancelled', resultId: null });
		});

		test('a plain JobAlreadyFinishedError says two workers believe the job is theirs', async () => {
			const job = await running();
			await worker.succeed(job.id);
			const e = await rejection(worker.succeed(job.id));
			expect(e).toBeInstanceOf(JobAlreadyFinishedError);
			expect(e).not.toBeInstanceOf(JobCancelledError);
			expect((e as JobAlreadyFinishedError).code).toBe('job_already_finished');
			await expect(worker.fail(job.id, 'late')).rejects.toBeInstanceOf(JobAlreadyFinishedError);
		});

		test('cancelled is terminal, but it is not a failure', async () => {
			const job = await running(uniqueKind('stop'), 'doc');
			const cancelled = (await worker.cancel(job.id))!;
			expect(TERMINAL_JOB_STATUSES).toContain(cancelled.status);
			expect(isTerminalStatus(cancelled.status)).toBe(true);
			expect(cancelled.status).not.toBe('failed');
			expect(cancelled).toMatchObject({ errorCode: 'cancelled', payload: null });
			// the poll stops: a watcher gets this one value and ends
			const seen: string[] = [];
			for await (const j of worker.watch(job.id, { intervalMs: 5 })) seen.push(j.status);
			expect(seen).toEqual(['cancelled']);
			expect((await worker.listRecent({ kind: job.kind, status: 'failed' })).jobs).toEqual([]);
		});
	});

	describe(`JobStore over ${label}: 8. Progress`, () => {
		test('every tick writes progress and stage on the row', async () => {
			const job = await running();
			expect(await worker.tick(job.id, { progress: 12.5, stage: 'table', attempt: job.attempts })).toBe('running');
			const after = await worker.get(job.id);
			expect(after).toMatchObject({ progress: 12.5, stage: 'table' });
			expect(after.heartbeatAt!.getTime()).toBeGreaterThanOrEqual(job.heartbeatAt!.getTime());
		});

		test('the tick that writes progress is the one that asks whether the user cancelled', async () => {
			const job = await running();
			await worker.cancel(job.id);
			const counted = counting(h.adapter(SERVICE));
			expect(await new JobStore(counted.adapter).tick(job.id, { progress: 40, stage: 'reading' })).toBe('cancelled');
			expect(counted.calls).toEqual(['job_tick']);
			expect((await worker.get(job.id)).progress).not.toBe(40);
		});

		test('progress never moves backwards within an attempt', async () => {
			const job = await running();
			await worker.tick(job.id, { progress: 60, stage: 'reading' });
			await worker.tick(job.id, { progress: 30, stage: 'reading' });
			expect((await worker.get(job.id)).progress).toBe(60);
			await expect(worker.tick(job.id, { progress: 101 })).rejects.toBeInstanceOf(InvalidJobInputError);
			await expect(worker.tick(job.id, { progress: Number.NaN })).rejects.toBeInstanceOf(InvalidJobInputError);
		});

		test('ask watch to emit on progress changes too, or the bar will not move: a worker ticking through phases gives exactly these frames', async () => {
			const job = await worker.enqueue(uniqueKind('extract'));
			const frames: [string, number, string | null][] = [];
			const seen = new Signal();
			const watching = (async () => {
				for await (const j of worker.watch(job.id, { intervalMs: 5, emitOn: ['status', 'progress', 'stage'] })) {
					frames.push([j.status, j.progress, j.stage]);
					seen.notify();
				}
			})();
			const step = async (n: number, write: () => Promise<unknown>) => {
				await seen.until(() => frames.length === n);
				await write();
			};
			let attempt = 0;
			await step(1, async () => (attempt = (await worker.claim(job.id))!.attempts));
			await step(2, () => worker.tick(job.id, { progress: 2, stage: 'pdf', attempt }));
			await step(3, () => worker.tick(job.id, { progress: 40, stage: 'table', attempt }));
			await step(4, () => worker.tick(job.id, { progress: 80, stage: 'reading', attempt }));
			await step(5, () => worker.succeed(job.id, { attempt }));
			await watching;
			expect(frames).toEqual([
				['queued', 0, null],
				['running', 0, null],
				['running', 2, 'pdf'],
				['running', 40, 'table'],
				['running', 80, 'reading'],
				['done', 100, 'reading'],
			]);
		});

		test('plural statuses is one question: "queued or running"', async () => {
			const kind = uniqueKind('strip');
			const queued = await worker.enqueue(kind);
			const runningJob = (await worker.claim((await worker.enqueue(kind)).id))!;
			const finished = (await worker.claim((await worker.enqueue(kind)).id))!;
			await worker.succeed(finished.id);
			const counted = counting(h.adapter(SERVICE));
			const inFlight = await new JobStore(counted.adapter).listRecent({ kind, statuses: ['queued', 'running'] });
			expect(inFlight.jobs.map((j) => j.id)).toEqual([runningJob.id, queued.id]);
			expect(counted.calls).toEqual(['job_list_recent']);
			await expect(worker.listRecent({ kind, status: 'queued', statuses: ['running'] })).rejects.toBeInstanceOf(
				InvalidJobInputError,
			);
		});

		test('phase timings recorded on succeed come back from phaseHistory, newest first; failed and cancelled runs are left out', async () => {
			const kind = uniqueKind('measured');
			for (const seconds of [30, 32, 28]) {
				const job = await running(kind);
				await worker.succeed(job.id, {
					timings: { table: { seconds, size: 4000 }, reading: { seconds: seconds / 2, size: null } },
				});
			}
			const failed = await running(kind);
			await worker.fail(failed.id, 'no', { timings: { table: { seconds: 1, size: 10 } } });
			const cancelled = await running(kind);
			await worker.cancel(cancelled.id);
			await worker.succeed((await running(kind)).id); // no timings: not history
			const history = await worker.phaseHistory(kind);
			expect(history).toEqual([
				{ table: { seconds: 28, size: 4000 }, reading: { seconds: 14, size: null } },
				{ table: { seconds: 32, size: 4000 }, reading: { seconds: 16, size: null } },
				{ table: { seconds: 30, size: 4000 }, reading: { seconds: 15, size: null } },
			]);
			expect(await worker.phaseHistory(kind, 1)).toHaveLength(1);
			expect(await worker.phaseHistory(uniqueKind('never'))).toEqual([]);
		});
	});

	describe(`JobStore over ${label}: how much longer, and where in the queue`, () => {
		test("a tick carries the worker's estimate: expected_end_at is the tick's time plus eta_seconds, in the same write, and negative means the phase overran", async () => {
			const job = await running();
			await worker.tick(job.id, { progress: 10, stage: 'read', attempt: job.attempts, etaSeconds: 120 });
			const ticked = await worker.get(job.id);
			expect(ticked.expectedEndAt).toBeInstanceOf(Date);
			expect((ticked.expectedEndAt!.getTime() - ticked.updatedAt.getTime()) / 1000).toBeCloseTo(120, 0);
			// A tick without an estimate (a heartbeat, an older worker) keeps the last one.
			await worker.tick(job.id, { progress: 11, attempt: job.attempts });
			expect((await worker.get(job.id)).expectedEndAt).toEqual(ticked.expectedEndAt);
			await worker.tick(job.id, { progress: 12, attempt: job.attempts, etaSeconds: -4 });
			const overran = await worker.get(job.id);
			expect(overran.expectedEndAt!.getTime()).toBeLessThan(overran.updatedAt.getTime());
		});

		test('the estimate belongs to its attempt: a retry, a reclaim or an end clears it', async () => {
			const job = await running();
			await worker.tick(job.id, { progress: 10, stage: 'read', attempt: job.attempts, etaSeconds: 60 });
			const retried = await worker.retry(job.id, 'try again', { attempt: job.attempts });
			expect(retried.status).toBe('queued');
			expect(retried.expectedEndAt).toBeNull();
			const again = (await worker.claim(job.id))!;
			expect(again.expectedEndAt).toBeNull();
			await worker.tick(job.id, { progress: 50, attempt: again.attempts, etaSeconds: 30 });
			const done = await worker.succeed(job.id, { attempt: again.attempts });
			expect(done.expectedEndAt).toBeNull();
		});

		test('an estimate that is not a number of seconds within a year is refused, naming eta_seconds, and nothing is written', async () => {
			const job = await running();
			const e = await rejection(worker.tick(job.id, { progress: 40, attempt: job.attempts, etaSeconds: 1e9 }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('etaSeconds');
			expect((await worker.get(job.id)).progress).toBe(0);
		});

		test("a queued job's position counts only its owner's own queued jobs ahead of it (claim order), never another user's", async () => {
			const kind = uniqueKind('queue');
			const alice = await asUser();
			const bob = await asUser();
			// Bob's jobs are queued first: Alice must not learn of them.
			await bob.store.enqueue(kind);
			await bob.store.enqueue(kind);
			const a1 = await alice.store.enqueue(kind);
			const a2 = await alice.store.enqueue(kind);
			const a3 = await alice.store.enqueue(kind);
			const urgent = await alice.store.enqueue(kind, { priority: 5 });
			expect(await alice.store.queuePosition(a1.id)).toBe(1); // behind her urgent one
			expect(await alice.store.queuePosition(a3.id)).toBe(3);
			expect(await alice.store.queuePosition(urgent.id)).toBe(0);
			// Another user's job is not there at all for her.
			const bobs = await bob.store.enqueue(kind);
			expect(await rejection(alice.store.queuePosition(bobs.id))).toBeInstanceOf(JobNotFoundError);
			expect(await bob.store.queuePosition(bobs.id)).toBe(2);
			// Running: no position.
			await worker.claim(a1.id);
			expect(await alice.store.queuePosition(a1.id)).toBeNull();
			expect(await alice.store.queuePosition(a2.id)).toBe(1);
		});
	});

	describe(`JobStore over ${label}: phase history is read through RLS`, () => {
		test("a user's phase history holds their own jobs only", async () => {
			const alice = await asUser();
			const bob = await asUser();
			const kind = uniqueKind('measured');
			for (const who of [alice, bob]) {
				const job = (await worker.claim((await who.store.enqueue(kind)).id))!;
				await worker.succeed(job.id, { timings: { table: { seconds: who === alice ? 1 : 2, size: null } } });
			}
			expect(await alice.store.phaseHistory(kind)).toEqual([{ table: { seconds: 1, size: null } }]);
			expect(await worker.phaseHistory(kind)).toHaveLength(2);
			await expect(worker.phaseHistory(kind, 0)).rejects.toBeInstanceOf(InvalidJobInputError);
		});
	});

	describe(`JobStore over ${label}: Errors`, () => {
		test('JobNotFoundError: the id does not exist (get, succeed, fail, tick)', async () => {
			for (const id of [randomUUID(), 'not-a-uuid']) {
				await expect(worker.get(id)).rejects.toBeInstanceOf(JobNotFoundError);
				await expect(worker.succeed(id)).rejects.toBeInstanceOf(JobNotFoundError);
				await expect(worker.fail(id, 'why')).rejects.toBeInstanceOf(JobNotFoundError);
				await expect(worker.tick(id, { progress: 1 })).rejects.toBeInstanceOf(JobNotFoundError);
			}
			const e = (await rejection(worker.get(randomUUID()))) as JobNotFoundError;
			expect(e.code).toBe('job_not_found');
		});

		test('JobNotRunningError: closing a job nobody claimed', async () => {
			const job = await worker.enqueue(uniqueKind('unclaimed'));
			await expect(worker.succeed(job.id)).rejects.toBeInstanceOf(JobNotRunningError);
			await expect(worker.fail(job.id, 'no')).rejects.toBeInstanceOf(JobNotRunningError);
		});

		test('UnknownJobTableError: a table that is not a job table', async () => {
			const store = new JobStore(h.adapter(SERVICE), { table: 'no_such_jobs' });
			await expect(store.listRecent()).rejects.toBeInstanceOf(UnknownJobTableError);
			await expect(store.enqueue('x')).rejects.toBeInstanceOf(UnknownJobTableError);
		});

		test('each job table is its own: a job in one is unknown in another', async () => {
			const table = `other_${randomUUID().slice(0, 8)}`;
			await h.createJobTable(table);
			const other = new JobStore(h.adapter(SERVICE), { table });
			const job = await other.enqueue('extract');
			expect((await other.get(job.id)).id).toBe(job.id);
			await expect(worker.get(job.id)).rejects.toBeInstanceOf(JobNotFoundError);
		});
	});
	describe(`JobStore over ${label}: hardening`, () => {
		const long = (n: number) => 'x'.repeat(n - 1) + '!';

		test('a close can never be refused for the length of a sentence: fail and retry shorten an error over 2,000 characters', async () => {
			const failed = await running();
			const row = await worker.fail(failed.id, `I could not read the file: ${long(5000)}`, {
				attempt: failed.attempts,
			});
			expect(row.status).toBe('failed');
			expect([...(row.error ?? '')]).toHaveLength(2000);
			expect(row.error).toMatch(/^I could not read the file: x+…$/);

			const retried = await running();
			const again = await worker.retry(retried.id, long(2500), { attempt: retried.attempts });
			expect(again.status).toBe('queued');
			expect([...(again.error ?? '')]).toHaveLength(2000);
			// Exactly at the limit nothing is cut.
			const exact = await running();
			expect((await worker.fail(exact.id, long(2000))).error).toBe(long(2000));
		});

		test('succeed refuses a resultId that is not a UUID before any round trip, naming the field', async () => {
			const job = await running();
			const counted = counting(h.adapter(SERVICE));
			const store = new JobStore(counted.adapter);
			const e = await rejection(store.succeed(job.id, { resultId: 'draft-42', attempt: job.attempts }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('resultId');
			expect(counted.count()).toBe(0);
			expect(await worker.get(job.id)).toMatchObject({ status: 'running', resultId: null });
		});

		test('cancel is idempotent even with a long reason: null when there is nothing to stop, shortened when there is', async () => {
			const done = await running();
			await worker.succeed(done.id);
			expect(await worker.cancel(done.id, { reason: long(3000) })).toBeNull();
			const queued = await worker.enqueue(uniqueKind('cancel-long'));
			const cancelled = await worker.cancel(queued.id, { reason: long(3000) });
			expect(cancelled?.status).toBe('cancelled');
			expect([...(cancelled?.error ?? '')]).toHaveLength(2000);
		});

		test('listRecent: no extra empty page when the count is a multiple of limit', async () => {
			const kind = uniqueKind('exact-pages');
			for (let i = 0; i < 6; i++) await worker.enqueue(kind, { params: { i } });
			const first = await worker.listRecent({ kind, limit: 3 });
			expect(first.jobs).toHaveLength(3);
			expect(first.nextCursor).not.toBeNull();
			const second = await worker.listRecent({ kind, limit: 3, cursor: first.nextCursor });
			expect(second.jobs).toHaveLength(3);
			expect(second.nextCursor).toBeNull();
			// The same at the SQL ceiling, where no extra row can be asked for.
			const all = await worker.listRecent({ kind, limit: 1000 });
			expect(all).toMatchObject({ jobs: expect.any(Array), nextCursor: null });
			expect(all.jobs).toHaveLength(6);
		});

		test('raw PostgreSQL input errors (22P02) come back as InvalidJobInputError from every adapter', async () => {
			const e = await rejection(h.adapter(SERVICE).call('job_get', { id: 'not-a-uuid', job_table: 'jobs' }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).code).toBe('invalid_input');
		});

		test('staleAfterMs is milliseconds, like the watch options', async () => {
			expect(new JobStore(h.adapter(SERVICE), { staleAfterMs: 300_000 }).staleAfterMs).toBe(300_000);
			expect(() => new JobStore(h.adapter(SERVICE), { staleAfterMs: Number.NaN })).toThrow(/staleAfterMs/);
			const job = await running();
			await h.backdate(job.id, 10);
			const reclaimer = new JobStore(h.adapter(SERVICE), { staleAfterMs: 5_000 });
			expect((await reclaimer.reclaimStale()).map((j) => j.id)).toContain(job.id);
		});
	});
}
