/**
 * Properties of stream chunks over both adapters (appendStream, readStreams)
 * and of public.job_stream_append / job_stream_read called directly: a chunk
 * is refused with a typed error naming the field and the job's streams are
 * unchanged, or it reads back as written, after the chunks before it.
 */
import { describe, expect, it } from 'vitest';
import { isJobError } from '../../src/lib/errors.ts';
import type { JobStore } from '../../src/lib/store/job-store.ts';
import { checkProperty, fc } from '../helpers/property.ts';
import {
	as,
	expectSqlRefusal,
	expectTypedRefusal,
	hostileNumber,
	hostileString,
	openSurfaces,
	refusedOrStored,
	serviceRole,
	wrongType,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();
const KIND = 'property.streams';

/** A running job of this file's kind, claimed by `store`. */
async function runningJob(store: JobStore): Promise<{ id: string; attempt: number }> {
	const job = await store.enqueue(KIND);
	const claimed = await store.claim(job.id);
	return { id: job.id, attempt: claimed!.attempts };
}

const chunks = async (id: string) =>
	(
		await f.db
			.sql`select attempt, seq, stream, body from supabase_jobs.job_stream where job_id = ${id} order by attempt, seq`
	).map((r) => ({ ...r }));

const streamName = fc.oneof(
	{ weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,8}$/) },
	fc.constantFrom('summary', 'a'.repeat(64), 'a'.repeat(65), '1st', 'with space', 'x\n', 'ok-name_2'),
	hostileString,
	wrongType,
);
const text = fc.oneof(
	{ weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }) },
	fc.constantFrom('é'.repeat(32_768), 'a'.repeat(65_536), 'a'.repeat(65_537)),
	hostileString,
	wrongType,
);
/** The attempt a worker passes: the right one (usually), none, a wrong integer, or no integer at all. */
const attempt = fc.oneof(
	{ weight: 4, arbitrary: fc.constant('RIGHT' as const) },
	fc.constant(undefined),
	fc.constantFrom(0, 2, -1),
	hostileNumber,
	wrongType,
);
const appends = fc.array(fc.record({ stream: streamName, text, attempt }), { minLength: 1, maxLength: 3 });

describe.each(stores)('stream chunks over $name', ({ store }) => {
	it('appendStream refuses a chunk naming the field, or readStreams returns it after the ones before', async () => {
		const seen = new Set<string>();
		await checkProperty(appends, async (list) => {
			const job = await runningJob(store);
			const written: { stream: string; text: string }[] = [];
			for (const a of list) {
				const given = a.attempt === 'RIGHT' ? job.attempt : a.attempt;
				seen.add(
					await refusedOrStored({
						call: () => store.appendStream(job.id, a.stream as string, a.text as string, { attempt: given as number }),
						snapshot: () => chunks(job.id),
						refusal: (e) => {
							// Another attempt's number is no bad input: the job is not that attempt's (PT409).
							if (Number.isInteger(given) && given !== job.attempt && isJobError(e, 'job_already_finished')) return;
							expectTypedRefusal(e, ['stream', 'text', 'body', 'attempt']);
						},
						stored: async (status) => {
							expect(status).toBe('running');
							written.push({ stream: a.stream as string, text: a.text as string });
							const read = await store.readStreams(job.id);
							expect(read.chunks.map((c) => ({ stream: c.stream, text: c.text }))).toEqual(written);
							expect(read.chunks.map((c) => c.seq)).toEqual(written.map((_, i) => i));
						},
					}),
				);
			}
		});
		expectBothOutcomes(seen);
	});
});

const sqlText = fc.oneof(
	{ weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes('\u0000')) },
	fc.constantFrom('', 'é'.repeat(32_768), 'a'.repeat(65_537), 'summary', 'a'.repeat(65), 'with space', 'x\n', '😀'),
	fc.constant(null),
);

describe('public.job_stream_append called directly', () => {
	it('refuses a chunk with 22023 naming the argument, or job_stream_read returns it after the ones before', async () => {
		const seen = new Set<string>();
		const sqlAppends = fc.array(
			fc.record({ stream: fc.oneof({ weight: 3, arbitrary: fc.constant('summary') }, sqlText), body: sqlText }),
			{ minLength: 1, maxLength: 3 },
		);
		const worker = stores[0]!.store;
		await checkProperty(sqlAppends, async (list) => {
			const job = await runningJob(worker);
			const written: { stream: string; text: string }[] = [];
			for (const a of list) {
				seen.add(
					await refusedOrStored({
						call: () =>
							as(
								f.db.sql,
								serviceRole,
								async (tx) =>
									(
										await tx`select public.job_stream_append(${job.id}::uuid, ${a.stream}::text, ${a.body}::text, ${job.attempt}::integer) as s`
									)[0]!.s,
							),
						snapshot: () => chunks(job.id),
						refusal: (e) => expectSqlRefusal(e, ['stream', 'body']),
						stored: async (status) => {
							expect(status).toBe('running');
							written.push({ stream: a.stream!, text: a.body! });
							const read = await as(
								f.db.sql,
								serviceRole,
								async (tx) =>
									(await tx`select public.job_stream_read(${job.id}::uuid) as r`)[0]!.r as {
										chunks: { stream: string; text: string }[];
									},
							);
							expect(read.chunks.map((c) => ({ stream: c.stream, text: c.text }))).toEqual(written);
						},
					}),
				);
			}
		});
		expectBothOutcomes(seen);
	});
});
