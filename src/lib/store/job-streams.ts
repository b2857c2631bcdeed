/**
 * A job's streamed output (supabase/schemas/15_streams.sql): the worker
 * appends chunks (`appendStream`), a screen follows them (`watchStreams`):
 * what was written so far in one read, then each new chunk as it is sent on
 * the job's Realtime topic, in order, with no gap or duplicate — chunks are
 * numbered (attempt, seq) and any gap (a message missed while the topic was
 * down) is filled by reading from the last number seen. Without Realtime it
 * polls the same read.
 */
import { z } from 'zod';
import { isJobCondition } from '../errors.ts';
import { STREAM_CHUNK_MAX_BYTES, STREAM_NAME_PATTERN } from '../internal/limits.ts';
import { checkTimerMs } from '../internal/timers.ts';
import { isTerminalStatus, JOB_STATUSES, type JobStatusValue } from '../state.ts';
import type { RawRow } from './adapter.ts';
import { jobTopic } from './follow-topic.ts';
import { Inbox } from './inbox.ts';
import { invalid, isJobId, notFound } from './input-checks.ts';
import { textProblem } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import { tableLabel } from './job-summary.ts';
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

/** Where a follower stands: the next chunk it expects. */
interface StreamPosition {
	attempt: number;
	seq: number;
}

const chunkSchema = z.object({
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

const messageSchema = chunkSchema.extend({ id: z.string(), job_table: z.string() });

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

async function readFrom<R extends Job>(
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

/** How a chunk stands against the position: the next one, one already had, or one past a gap. */
function place(chunk: StreamPosition, next: StreamPosition): 'next' | 'seen' | 'gap' {
	if (chunk.attempt < next.attempt || (chunk.attempt === next.attempt && chunk.seq < next.seq)) return 'seen';
	if (chunk.attempt === next.attempt ? chunk.seq === next.seq : chunk.seq === 0) return 'next';
	return 'gap';
}

type StreamEvent =
	| { kind: 'chunk'; chunk: JobStreamChunk }
	| { kind: 'ended' }
	| { kind: 'status'; status: 'live' | 'down' | 'refused' };

/**
 * Follows a job's streams: yields what they hold (one batch, possibly
 * empty), then each new chunk (or the chunks a gap held) as batches in
 * order, and ends once the job has ended and everything it wrote was yielded.
 *
 * @internal
 */
export async function* watchStreams<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	options: WatchStreamsOptions,
): AsyncGenerator<JobStreamChunk[], void, undefined> {
	if (!isJobId(id)) throw notFound(id);
	const intervalMs = options.intervalMs ?? 2000;
	checkTimerMs('intervalMs', intervalMs);
	const { signal } = options;
	if (signal?.aborted) return;
	const realtime = options.transport === 'poll' ? undefined : calls.adapter.realtime;
	const label = tableLabel(calls.table);
	let next: StreamPosition = { attempt: 0, seq: 0 };
	const inbox = new Inbox<StreamEvent>();
	const held: { subscription: { close(): void } | null } = { subscription: null };
	let topic: string | null = null;
	let live = false;

	/** The chunks of a read that are new, moving the position past them. */
	const take = (chunks: readonly JobStreamChunk[]): JobStreamChunk[] => {
		const fresh: JobStreamChunk[] = [];
		for (const chunk of chunks) {
			if (place(chunk, next) === 'seen') continue;
			fresh.push(chunk);
			next = { attempt: chunk.attempt, seq: chunk.seq + 1 };
		}
		return fresh;
	};
	const subscribe = (to: string) => {
		held.subscription?.close();
		topic = to;
		live = false;
		held.subscription = realtime!.subscribe(to, {
			message: (row: RawRow) => {
				if (row.id === id && typeof row.status === 'string' && isTerminalStatus(row.status as JobStatusValue))
					inbox.push({ kind: 'ended' });
			},
			stream: (row: RawRow) => {
				const m = messageSchema.safeParse(row);
				if (m.success && m.data.id === id && m.data.job_table === label) {
					const { stream, attempt, seq, text } = m.data;
					inbox.push({ kind: 'chunk', chunk: { stream, attempt, seq, text } });
				}
			},
			status: (status) => inbox.push({ kind: 'status', status }),
		});
	};

	try {
		// A signed-in user's jobs speak on their own topic: joined before the first read, nothing is missed.
		const uid = realtime ? await realtime.userId().catch(() => null) : null;
		if (realtime && uid !== null) subscribe(`jobs:${uid}`);
		let read = await readFrom(calls, id, next);
		if (signal?.aborted) return;
		if (realtime && read.topic !== topic && !isTerminalStatus(read.status)) {
			// Someone else's job (an admin watching) or an ownerless one: its own topic, then read again.
			subscribe(read.topic);
		}
		yield take(read.chunks);
		let ended = isTerminalStatus(read.status);
		while (!ended) {
			const event = await inbox.next(live ? Infinity : intervalMs, signal);
			if (event === 'aborted') return;
			let mustRead = event === 'elapsed';
			const batch: JobStreamChunk[] = [];
			if (event !== 'elapsed') {
				if (event.kind === 'status') {
					live = event.status === 'live';
					if (event.status === 'refused') {
						held.subscription?.close();
						held.subscription = null;
					}
					// Joined again (or lost): what was sent meanwhile is read, not awaited.
					mustRead = true;
				} else if (event.kind === 'ended') {
					mustRead = true;
				} else {
					const where = place(event.chunk, next);
					if (where === 'next') batch.push(...take([event.chunk]));
					else if (where === 'gap') mustRead = true;
				}
			}
			if (mustRead) {
				try {
					read = await readFrom(calls, id, next);
				} catch (e) {
					if (isJobCondition(e)) throw e;
					continue; // the network: the next interval tries again
				}
				batch.push(...take(read.chunks));
				ended = isTerminalStatus(read.status);
			}
			if (signal?.aborted) return;
			if (batch.length > 0) yield batch;
		}
	} finally {
		held.subscription?.close();
	}
}
