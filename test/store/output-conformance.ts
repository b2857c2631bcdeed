/**
 * A job's streamed output and typed metadata through JobStore: one suite run
 * over postgres.js (test/store/postgres-adapter.test.ts, polling) and over
 * supabase-js with Realtime (test/realtime/conformance.test.ts), with the
 * same results.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
	InvalidJobInputError,
	JobAlreadyFinishedError,
	JobCancelledError,
	JobNotFoundError,
	PermissionDeniedError,
} from '../../src/lib/errors.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore, type JobStreamChunk } from '../../src/lib/store/job-store.ts';
import type { ConformanceHarness } from './harness.ts';
import { openSuite, rejection, uniqueKind } from './conformance-setup.ts';

const textOf = (chunks: readonly JobStreamChunk[], stream: string) =>
	chunks
		.filter((c) => c.stream === stream)
		.map((c) => c.text)
		.join('');

/**
 * Registers the suite. `setup` runs once (beforeAll) and returns the harness.
 *
 * @example
 * describeJobOutputConformance('postgres.js', async () => harness);
 */
export function describeJobOutputConformance(label: string, setup: () => Promise<ConformanceHarness>): void {
	let h: ConformanceHarness;
	let worker: JobStore;
	/** A user, their store, and a job of theirs a worker holds. */
	const ownedRunning = async () => {
		const sub = await h.createUser();
		const store = new JobStore(h.adapter({ role: 'authenticated', sub }), { staleAfterMs: 300_000 });
		const queued = await store.enqueue(uniqueKind('summary'));
		const job = await worker.claim(queued.id);
		if (!job) throw new Error('claim of a fresh job returned null');
		return { sub, store, job };
	};

	beforeAll(async () => ({ h, worker } = await openSuite(setup)));

	describe(`JobStore over ${label}: streamed output`, () => {
		test('the chunks a worker appends are read back by the job owner in order, numbered from 0 in the attempt', async () => {
			const { store, job } = await ownedRunning();
			for (const text of ['The tender ', 'asks for ', 'três lotes 🚚.'])
				expect(await worker.appendStream(job.id, 'summary', text, { attempt: job.attempts })).toBe('running');
			await worker.appendStream(job.id, 'notes', 'page 1', { attempt: job.attempts });
			const read = await store.readStreams(job.id);
			expect(read).toMatchObject({ status: 'running', attempts: 1 });
			expect(read.chunks.map((c) => [c.stream, c.attempt, c.seq])).toEqual([
				['summary', 1, 0],
				['summary', 1, 1],
				['summary', 1, 2],
				['notes', 1, 3],
			]);
			expect(textOf(read.chunks, 'summary')).toBe('The tender asks for três lotes 🚚.');
		});

		test('a watcher that joins late gets what was written so far, then the rest as it is written, with no gap or duplicate, and ends with the job', async () => {
			const { store, job } = await ownedRunning();
			await worker.appendStream(job.id, 'summary', 'one ', { attempt: job.attempts });
			await worker.appendStream(job.id, 'summary', 'two ', { attempt: job.attempts });
			const controller = new AbortController();
			const seen: JobStreamChunk[] = [];
			let batches = 0;
			let notify = () => {};
			const watch = (async () => {
				for await (const batch of store.watchStreams(job.id, { intervalMs: 50, signal: controller.signal })) {
					seen.push(...batch);
					batches++;
					notify();
				}
			})();
			await new Promise<void>((resolve) => {
				notify = () => batches >= 1 && resolve();
				notify();
			});
			expect(textOf(seen, 'summary')).toBe('one two ');
			for (const word of ['three ', 'four ', 'five'])
				await worker.appendStream(job.id, 'summary', word, { attempt: job.attempts });
			await worker.succeed(job.id, { attempt: job.attempts });
			await watch; // ends by itself once the job ended and its output was yielded
			expect(textOf(seen, 'summary')).toBe('one two three four five');
			expect(seen.map((c) => c.seq)).toEqual([0, 1, 2, 3, 4]);
		});

		test('the output stays readable once the job is done: it is what the job produced', async () => {
			const { store, job } = await ownedRunning();
			await worker.appendStream(job.id, 'summary', 'kept', { attempt: job.attempts });
			await worker.succeed(job.id, { attempt: job.attempts });
			const read = await store.readStreams(job.id);
			expect(read.status).toBe('done');
			expect(textOf(read.chunks, 'summary')).toBe('kept');
			const after: JobStreamChunk[] = [];
			for await (const batch of store.watchStreams(job.id)) after.push(...batch);
			expect(textOf(after, 'summary')).toBe('kept');
		});

		test('an append after the user cancelled is refused (JobCancelledError) and stores nothing', async () => {
			const { store, job } = await ownedRunning();
			await worker.appendStream(job.id, 'summary', 'before', { attempt: job.attempts });
			await store.cancel(job.id);
			expect(
				await rejection(worker.appendStream(job.id, 'summary', 'after', { attempt: job.attempts })),
			).toBeInstanceOf(JobCancelledError);
			expect(textOf((await store.readStreams(job.id)).chunks, 'summary')).toBe('before');
		});

		test('an attempt that lost the job cannot write its stream, and the next attempt starts the output over', async () => {
			const { store, job } = await ownedRunning();
			await worker.appendStream(job.id, 'summary', 'first try', { attempt: 1 });
			await h.backdate(job.id, 400);
			await worker.reclaimStale();
			const again = await worker.claim(job.id);
			expect(again?.attempts).toBe(2);
			expect(await rejection(worker.appendStream(job.id, 'summary', 'late', { attempt: 1 }))).toBeInstanceOf(
				JobAlreadyFinishedError,
			);
			expect(textOf((await store.readStreams(job.id)).chunks, 'summary')).toBe('first try');
			await worker.appendStream(job.id, 'summary', 'second try', { attempt: 2 });
			const read = await store.readStreams(job.id);
			expect(read.chunks).toEqual([{ stream: 'summary', attempt: 2, seq: 0, text: 'second try' }]);
		});

		test("a job's streams are bounded: the append past 4 MiB is refused with InvalidJobInputError naming streams.<name>", async () => {
			const { job } = await ownedRunning();
			const block = 'x'.repeat(65536);
			for (let i = 0; i < 64; i++) await worker.appendStream(job.id, 'log', block, { attempt: job.attempts });
			const error = await rejection(worker.appendStream(job.id, 'log', 'y', { attempt: job.attempts }));
			expect(error).toBeInstanceOf(InvalidJobInputError);
			expect((error as InvalidJobInputError).field).toBe('streams.log');
		});

		test('a bad stream name, an empty chunk or one over 64 KiB is refused naming the field, before any round trip', async () => {
			const { job } = await ownedRunning();
			const cases: [string, string, string][] = [
				['9lives', 'text', 'stream'],
				['has space', 'text', 'stream'],
				['summary', '', 'body'],
				['summary', 'é'.repeat(40000), 'body'],
			];
			for (const [stream, text, field] of cases) {
				const error = await rejection(worker.appendStream(job.id, stream, text, { attempt: job.attempts }));
				expect(error, `${stream}/${text.length}`).toBeInstanceOf(InvalidJobInputError);
				expect((error as InvalidJobInputError).field).toBe(field);
			}
		});

		test('another user can read neither the stream nor whether it exists: JobNotFoundError; and no user can append to one', async () => {
			const { store, job } = await ownedRunning();
			await worker.appendStream(job.id, 'summary', 'private', { attempt: job.attempts });
			const stranger = new JobStore(h.adapter({ role: 'authenticated', sub: await h.createUser() }));
			expect(await rejection(stranger.readStreams(job.id))).toBeInstanceOf(JobNotFoundError);
			expect(await rejection(stranger.watchStreams(job.id).next())).toBeInstanceOf(JobNotFoundError);
			expect(await rejection(store.appendStream(job.id, 'summary', 'forged'))).toBeInstanceOf(PermissionDeniedError);
			expect(textOf((await store.readStreams(job.id)).chunks, 'summary')).toBe('private');
		});
	});

	describe(`JobStore over ${label}: typed metadata`, () => {
		test('a tick merges metadata key by key into the row, and the watch yields it with that tick', async () => {
			const { store, job } = await ownedRunning();
			expect((await store.get(job.id)).metadata).toBeNull();
			const controller = new AbortController();
			const values: unknown[] = [];
			const watch = store.watch(job.id, { intervalMs: 50, signal: controller.signal });
			const first = await watch.next();
			values.push(first.value?.metadata);
			await worker.tick(job.id, { attempt: job.attempts, metadata: { pages: 3, language: 'pt' } });
			for (;;) {
				const next = await watch.next();
				if (next.done) break;
				values.push(next.value.metadata);
				if ((next.value.metadata as { pages?: number } | null)?.pages === 3) break;
			}
			await worker.tick(job.id, { attempt: job.attempts, progress: 10, metadata: { pages: 4 } });
			for (;;) {
				const next = await watch.next();
				if (next.done) break;
				if (next.value.progress === 10) {
					// The progress and the metadata of one tick arrive together.
					expect(next.value.metadata).toEqual({ pages: 4, language: 'pt' });
					break;
				}
			}
			controller.abort();
			await watch.return(undefined);
			expect(values[0]).toBeNull();
			expect(values.at(-1)).toEqual({ pages: 3, language: 'pt' });
			expect((await store.get(job.id)).metadata).toEqual({ pages: 4, language: 'pt' });
		});

		test('metadata that is not an object, or past 16 KiB, is refused naming metadata, and nothing is written', async () => {
			const { store, job } = await ownedRunning();
			for (const metadata of [[1, 2], 'text', { big: 'x'.repeat(17000) }]) {
				const error = await rejection(
					worker.tick(job.id, { attempt: job.attempts, metadata: metadata as Record<string, unknown> }),
				);
				expect(error, JSON.stringify(metadata).slice(0, 20)).toBeInstanceOf(InvalidJobInputError);
				expect((error as InvalidJobInputError).field).toBe('metadata');
			}
			// Growing past the bound by merging is refused by the database, with the same field.
			for (let i = 0; i < 2; i++)
				await worker.tick(job.id, { attempt: job.attempts, metadata: { [`k${i}`]: 'x'.repeat(7000) } });
			const grown = await rejection(worker.tick(job.id, { attempt: job.attempts, metadata: { k2: 'x'.repeat(7000) } }));
			expect((grown as InvalidJobInputError).field).toBe('metadata');
			expect(Object.keys((await store.get(job.id)).metadata ?? {})).toEqual(['k0', 'k1']);
		});

		test("watch with the kind gives metadata as the kind's schema reads it: typed, and null when the row's does not fit", async () => {
			const kind = defineJobKind({
				name: uniqueKind('typed'),
				params: z.object({}),
				metadata: z.object({ pages: z.number().int() }),
			});
			const { store, job } = await ownedRunning();
			await worker.tick(job.id, { attempt: job.attempts, metadata: { pages: 2 } });
			const watch = store.watch(job.id, { kind, intervalMs: 50 });
			const first = await watch.next();
			await watch.return(undefined);
			const pages: number | undefined = first.value?.metadata?.pages;
			expect(pages).toBe(2);
			await worker.tick(job.id, { attempt: job.attempts, metadata: { pages: 'two' } });
			const again = store.watch(job.id, { kind, intervalMs: 50 });
			const second = await again.next();
			await again.return(undefined);
			expect(second.value?.metadata).toBeNull();
			expect((await store.get(job.id)).metadata).toEqual({ pages: 'two' });
		});

		test("a kind's metadata schema checks each update with every key optional, naming the field at fault", () => {
			const kind = defineJobKind({
				name: uniqueKind('typed'),
				params: z.object({}),
				metadata: z.object({ pages: z.number().int(), language: z.enum(['en', 'pt']) }),
			});
			expect(kind.parseMetadata({ pages: 2 })).toEqual({ pages: 2 });
			const error = (() => {
				try {
					kind.parseMetadata({ pages: 'two' });
				} catch (e) {
					return e;
				}
			})();
			expect(error).toBeInstanceOf(InvalidJobInputError);
			expect((error as InvalidJobInputError).field).toBe('metadata.pages');
		});
	});
}
