/**
 * A job's streamed output (supabase/schemas/15_streams.sql): the worker
 * appends chunks (`appendStream`), a screen reads them (`readStreams`) or
 * follows them (`watchStreams`, in live/watch-streams.ts). Chunks are
 * numbered (attempt, seq), so a follower can tell the next one from a gap.
 */
import { z } from 'zod';
import { STREAM_CHUNK_MAX_BYTES, STREAM_NAME_PATTERN } from '../internal/limits.ts';
import { JOB_STATUSES, type JobStatusValue } from '../state.ts';
import { jobTopic } from './live/follow-topic.ts';
import { invalid, isJobId, notFound } from './input-checks.ts';
import { textProblem } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import { UnexpectedRowError, type Job } from './job.ts';

/**
 * One piece of a job's streamed output, as written by one append.
 */
export interface JobStreamChunk {
	/** The stream's name, e.g. `summary`. */
	stream: string;
	/** The attempt that wrote it: a later attempt's chunks replace an earlier one's output. */
	attempt: number;
	/** Its place in the attempt's output (every stream of the job), from 0. */
	seq: number;
	text: string;
}

/**
 * What {@link JobStore.readStreams} returns: the chunks from a point on, in
 * order, and where the job stands.
 */
export interface JobStreamRead {
	status: JobStatusValue;
	/** The job's current attempt. */
	attempts: number;
	chunks: JobStreamChunk[];
}

/**
 * Options of {@link JobStore.watchStreams}.
 */
export interface WatchStreamsOptions {
	/** Milliseconds between reads when there is no Realtime, or while it is down. @default 2000 */
	intervalMs?: number;
	/** Ends the watch quietly. */
	signal?: AbortSignal;
	/** `'auto'` listens on the job's Realtime topic where the adapter has it; `'poll'` always polls. @default 'auto' */
	transport?: 'auto' | 'poll';
}

/** @internal Where a follower stands: the next chunk it expects. */
export interface StreamPosition {
	attempt: number;
	seq: number;
}

/** @internal One chunk as job_stream_read and the topic's stream messages carry it. */
export const chunkSchema = z.object({
	stream: z.string(),
	attempt: z.number().int(),
	seq: z.number().int(),
	text: z.string(),
});

const readSchema = z.object({
	status: z.enum(JOB_STATUSES),
	attempts: z.number().int(),
	owner_id: z.string().nullable().default(null),
	parent_id: z.string().nullable().default(null),
	chunks: z.array(chunkSchema),
});

/** Checks one append before its round trip, naming the field as job_stream_append would. */
function checkAppend(stream: string, text: string): void {
	if (typeof stream !== 'string' || !STREAM_NAME_PATTERN.test(stream))
		throw invalid(
			'stream',
			`a stream name is a letter then up to 63 letters, digits, _ or -; got ${JSON.stringify(stream)}`,
		);
	if (typeof text !== 'string' || text === '') throw invalid('body', 'a chunk of a stream is non-empty text');
	// PostgreSQL text holds neither a NUL nor a lone surrogate (postgres.js would store U+FFFD for it).
	const problem = textProblem(text);
	if (problem) throw invalid('body', `a chunk of a stream is text PostgreSQL can store; this one ${problem}`);
	const bytes = new TextEncoder().encode(text).byteLength;
	if (bytes > STREAM_CHUNK_MAX_BYTES)
		throw invalid('body', `a chunk of a stream is at most ${STREAM_CHUNK_MAX_BYTES} bytes; got ${bytes}`);
}

/** Appends one chunk to a running job's stream (workers); the job's status comes back. */
export async function appendStream<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	stream: string,
	text: string,
	attempt: number | undefined,
): Promise<JobStatusValue> {
	if (!isJobId(id)) throw notFound(id);
	checkAppend(stream, text);
	const status = await calls.call('job_stream_append', { id, stream, body: text, attempt });
	if (typeof status !== 'string' || !(JOB_STATUSES as readonly string[]).includes(status))
		throw new UnexpectedRowError(`job_stream_append returned ${JSON.stringify(status)}, not a job status`);
	return status as JobStatusValue;
}

/** @internal The chunks from a position on, the job's status and the topic it speaks on. */
export async function readFrom<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	from: StreamPosition,
): Promise<JobStreamRead & { topic: string }> {
	// Attempts count from 1: position 0 means "from the start" (no attempt given).
	const start = from.attempt === 0;
	const raw = await calls.call('job_stream_read', {
		id,
		attempt: start ? undefined : from.attempt,
		from_seq: start ? undefined : from.seq,
	});
	const parsed = readSchema.safeParse(raw);
	if (!parsed.success)
		throw new UnexpectedRowError(`job_stream_read returned what this package cannot read: ${parsed.error.message}`);
	const r = parsed.data;
	return {
		status: r.status,
		attempts: r.attempts,
		chunks: r.chunks,
		topic: jobTopic({ id, ownerId: r.owner_id, parentId: r.parent_id }),
	};
}

/** What a job's streams hold from the start (every stream, in order), and its status. */
export async function readStreams<R extends Job>(calls: JobCalls<R>, id: string): Promise<JobStreamRead> {
	if (!isJobId(id)) throw notFound(id);
	const { status, attempts, chunks } = await readFrom(calls, id, { attempt: 0, seq: 0 });
	return { status, attempts, chunks };
}
