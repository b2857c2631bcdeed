/**
 * Parent and child jobs and the reason a queued job is held
 * (its hold reasons), through JobStore: one suite run over postgres.js
 * (test/store/postgres-adapter.test.ts) and over supabase-js with Realtime
 * (test/realtime/conformance.test.ts), with the same results.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import {
	InvalidJobInputError,
	JobAlreadyFinishedError,
	JobNotFoundError,
	PermissionDeniedError,
} from '../../src/lib/errors.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import type { ConformanceHarness } from './harness.ts';
import { openSuite, rejection, uniqueKind } from './conformance-setup.ts';

/** Reads the generator until `done` holds for a value; returns that value. Ends the watch. */
async function until<T>(watch: AsyncGenerator<T>, done: (value: T) => boolean): Promise<T> {
	try {
		for await (const value of watch) if (done(value)) return value;
	} finally {
		await watch.return(undefined);
	}
	throw new Error('the watch ended before the condition held');
}

/**
 * Registers the suite.
 *
 * @example
 * describeParentChildConformance('postgres.js', async () => harness);
 */
export function describeParentChildConformance(label: string, setup: () => Promise<ConformanceHarness>): void {
	let h: ConformanceHarness;
	let worker: JobStore;

	beforeAll(async () => ({ h, worker } = await openSuite(setup)));

	/** A user's job, claimed by the worker: a running parent. */
	const runningParent = async () => {
		const owner = await h.createUser();
		const user = new JobStore(h.adapter({ role: 'authenticated', sub: owner }));
		const queued = await user.enqueue(uniqueKind('parent'), { locale: 'pt-BR' });
		const parent = (await worker.claim(queued.id))!;
		return { owner, user, parent };
	};

	describe(`Parent and child jobs over ${label}`, () => {
		test('a running job enqueues children of its owner, table and language; children() lists them oldest first', async () => {
			const { owner, user, parent } = await runningParent();
			const kind = uniqueKind('part');
			const a = await worker.enqueueChild(parent.id, kind, { params: { page: 1 }, expectedSeconds: 30 });
			const b = await worker.enqueueChild(parent.id, kind, { params: { page: 2 } });
			expect(a).toMatchObject({
				parentId: parent.id,
				ownerId: owner,
				locale: 'pt-BR',
				status: 'queued',
				expectedSeconds: 30,
			});
			expect(b.expectedSeconds).toBeNull();
			expect((await worker.children(parent.id)).map((c) => c.id)).toEqual([a.id, b.id]);
			// The owner reads them too (RLS: they are theirs).
			expect((await user.children(parent.id)).map((c) => c.params)).toEqual([{ page: 1 }, { page: 2 }]);
			expect(await worker.children(randomUUID())).toEqual([]);
		});

		test('waitForChildren parks the parent (waiting, no worker slot) while a child is live; running when none is', async () => {
			const { parent } = await runningParent();
			expect(await worker.waitForChildren(parent.id, { attempt: parent.attempts })).toBe('running');
			const child = await worker.enqueueChild(parent.id, uniqueKind('part'));
			expect(await worker.waitForChildren(parent.id, { attempt: parent.attempts })).toBe('waiting');
			const parked = await worker.get(parent.id);
			expect(parked.status).toBe('waiting');
			// Nothing claims or reclaims a waiting job.
			expect(await worker.claim(parent.id)).toBeNull();
			expect((await worker.reclaimSilent()).map((j) => j.id)).not.toContain(parent.id);
			// Its worker's next tick learns it is no longer running, and writes nothing.
			expect(await worker.tick(parent.id, { progress: 50, attempt: parent.attempts })).toBe('waiting');
			expect((await worker.get(parent.id)).progress).toBe(parked.progress);
			await worker.cancel(child.id);
		});

		test('the last child to end queues the parent again, its attempt given back; claimed again it reads the outcomes', async () => {
			const { parent } = await runningParent();
			const kind = uniqueKind('part');
			const ok = await worker.enqueueChild(parent.id, kind);
			const bad = await worker.enqueueChild(parent.id, kind);
			await worker.waitForChildren(parent.id, { attempt: parent.attempts });
			const resultId = randomUUID();
			await worker.claim(ok.id);
			await worker.succeed(ok.id, { resultId });
			expect((await worker.get(parent.id)).status).toBe('waiting');
			await worker.claim(bad.id);
			await worker.fail(bad.id, 'A página 2 está ilegível.');
			const resumed = await worker.get(parent.id);
			expect(resumed).toMatchObject({ status: 'queued', attempts: parent.attempts - 1 });
			expect(resumed.resumedAt).toBeInstanceOf(Date);
			const again = (await worker.claim(parent.id))!;
			expect(again.attempts).toBe(parent.attempts);
			expect(await worker.waitForChildren(parent.id, { attempt: again.attempts })).toBe('running');
			const outcomes = (await worker.children(parent.id)).map((c) => [c.status, c.resultId, c.error]);
			expect(outcomes).toEqual([
				['done', resultId, null],
				['failed', null, 'A página 2 está ilegível.'],
			]);
			expect((await worker.succeed(parent.id)).status).toBe('done');
		});

		test('cancelling the parent cancels its children that have not ended, and theirs, whoever cancels', async () => {
			const { user, parent } = await runningParent();
			const kind = uniqueKind('part');
			const finished = await worker.enqueueChild(parent.id, kind);
			await worker.claim(finished.id);
			await worker.succeed(finished.id);
			const queued = await worker.enqueueChild(parent.id, kind);
			const middle = await worker.enqueueChild(parent.id, kind);
			await worker.claim(middle.id);
			const grandchild = await worker.enqueueChild(middle.id, kind);
			await worker.waitForChildren(middle.id);
			await worker.waitForChildren(parent.id);
			// The owner cancels the parent (as a user, within RLS).
			expect((await user.cancel(parent.id, { reason: 'Não preciso mais.' }))?.status).toBe('cancelled');
			const statuses = await Promise.all(
				[finished, queued, middle, grandchild].map(async (j) => (await worker.get(j.id)).status),
			);
			expect(statuses).toEqual(['done', 'cancelled', 'cancelled', 'cancelled']);
			expect((await worker.get(queued.id)).error).toBe('Não preciso mais.');
			expect((await worker.get(parent.id)).status).toBe('cancelled');
		});

		test("the parent's progress is its children's mean weighted by expected seconds: never backwards, under 100 until done", async () => {
			const { parent } = await runningParent();
			const kind = uniqueKind('part');
			const long = await worker.enqueueChild(parent.id, kind, { expectedSeconds: 30 });
			const short = await worker.enqueueChild(parent.id, kind, { expectedSeconds: 10 });
			await worker.waitForChildren(parent.id);
			await worker.claim(long.id);
			await worker.tick(long.id, { progress: 50 });
			expect((await worker.get(parent.id)).progress).toBeCloseTo(37.5, 3); // (30 * 50 + 10 * 0) / 40
			await worker.claim(short.id);
			await worker.tick(short.id, { progress: 100 });
			expect((await worker.get(parent.id)).progress).toBeCloseTo(62.5, 3);
			// A retried child starts again at 0: the parent does not go back.
			await worker.retry(long.id, 'again', { delaySeconds: 0 });
			expect((await worker.get(parent.id)).progress).toBeCloseTo(62.5, 3);
			await worker.claim(long.id);
			await worker.succeed(long.id);
			await worker.succeed(short.id);
			const resumed = await worker.get(parent.id);
			expect(resumed.status).toBe('queued');
			expect(resumed.progress).toBe(99);
			const again = (await worker.claim(parent.id))!;
			expect(again.progress).toBe(99);
			expect((await worker.succeed(parent.id)).progress).toBe(100);
		});

		test("a child cannot be attached to someone else's job: users cannot enqueue children, a worker cannot give another owner", async () => {
			const { parent } = await runningParent();
			const mallory = await h.createUser();
			const theirs = new JobStore(h.adapter({ role: 'authenticated', sub: mallory }));
			expect(await rejection(theirs.enqueueChild(parent.id, 'part'))).toBeInstanceOf(PermissionDeniedError);
			const e = await rejection(worker.enqueueChild(parent.id, 'part', { ownerId: mallory }));
			expect(e).toBeInstanceOf(InvalidJobInputError);
			expect((e as InvalidJobInputError).field).toBe('ownerId');
			expect(await rejection(worker.enqueueChild(randomUUID(), 'part'))).toBeInstanceOf(JobNotFoundError);
			expect(await worker.children(parent.id)).toEqual([]);
			// Another user sees none of them, even asking by the parent's id.
			await worker.enqueueChild(parent.id, 'part');
			expect(await theirs.children(parent.id)).toEqual([]);
		});

		test('only a running job enqueues children; bad input names the field and writes nothing', async () => {
			const { parent } = await runningParent();
			await worker.succeed(parent.id);
			expect(await rejection(worker.enqueueChild(parent.id, 'part'))).toBeInstanceOf(JobAlreadyFinishedError);
			const { parent: other } = await runningParent();
			const e = await rejection(worker.enqueueChild(other.id, 'part', { expectedSeconds: -1 }));
			expect((e as InvalidJobInputError).field).toBe('expectedSeconds');
			const bad = await rejection(worker.enqueueChild(other.id, 'not a kind!'));
			expect((bad as InvalidJobInputError).field).toBe('kind');
			expect(await worker.children(other.id)).toEqual([]);
		});

		test('watchChildren shows the tree: each child with its status and progress as they change', async () => {
			const { user, parent } = await runningParent();
			const kind = uniqueKind('part');
			const a = await worker.enqueueChild(parent.id, kind);
			const b = await worker.enqueueChild(parent.id, kind);
			const controller = new AbortController();
			// The owner watches (over Realtime where the adapter has it).
			const watch = user.watchChildren(parent.id, { intervalMs: 100, signal: controller.signal });
			const first = await watch.next();
			expect((first.value as Job[]).map((c) => c.status)).toEqual(['queued', 'queued']);
			const seen = until(watch, (children) => children[0]?.status === 'done' && children[1]?.progress === 40);
			await worker.claim(a.id);
			await worker.tick(a.id, { progress: 70 });
			await worker.succeed(a.id);
			await worker.claim(b.id);
			await worker.tick(b.id, { progress: 40 });
			const tree = await seen;
			expect(tree.map((c) => [c.id, c.status])).toEqual([
				[a.id, 'done'],
				[b.id, 'running'],
			]);
			controller.abort();
		});
	});

	describe(`Held by a concurrency limit over ${label}`, () => {
		test('holdReasons: a queued job held by its key or kind says how many of them run', async () => {
			const kind = uniqueKind('export');
			await worker.setConcurrency(kind, { maxRunning: 2, maxRunningPerKey: 1 });
			const first = await worker.enqueue(kind, { concurrencyKey: 'alice' });
			const second = await worker.enqueue(kind, { concurrencyKey: 'alice' });
			const bob = await worker.enqueue(kind, { concurrencyKey: 'bob' });
			expect((await worker.holdReasons([first.id, second.id])).size).toBe(0);
			await worker.claim(first.id);
			const held = await worker.holdReasons([second.id, bob.id]);
			expect(held.get(second.id)).toEqual({ kind, heldBy: 'key', running: 1, maxRunning: 1 });
			expect(held.has(bob.id)).toBe(false);
			await worker.claim(bob.id);
			const carol = await worker.enqueue(kind, { concurrencyKey: 'carol' });
			expect((await worker.holdReasons([carol.id])).get(carol.id)).toEqual({
				kind,
				heldBy: 'kind',
				running: 2,
				maxRunning: 2,
			});
			await worker.succeed(first.id);
			expect((await worker.holdReasons([second.id, carol.id])).size).toBe(0);
			await worker.setConcurrency(kind, {});
		});
	});
}
