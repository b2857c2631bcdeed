/**
 * Follows a job's streamed output (`store.watchStreams`): what was written so
 * far in one read, then each new chunk as it is sent on the job's Realtime
 * topic, in order, with no gap or duplicate — chunks are numbered (attempt,
 * seq) and any gap (a message missed while the topic was down) is filled by
 * reading from the last number seen. Without Realtime it polls the same read.
 */
import { z } from 'zod';
import { isJobCondition } from '../../errors.ts';
import { checkTimerMs } from '../../internal/timers.ts';
import { isTerminalStatus, type JobStatusValue } from '../../state.ts';
import type { RawRow } from '../adapter.ts';
import { isJobId, notFound } from '../input-checks.ts';
import type { JobCalls } from '../job-calls.ts';
import {
	chunkSchema,
	readFrom,
	type JobStreamChunk,
	type StreamPosition,
	type WatchStreamsOptions,
} from '../job-streams.ts';
import { tableLabel } from '../job-summary.ts';
import type { Job } from '../job.ts';
import { Inbox } from './inbox.ts';

const messageSchema = chunkSchema.extend({ id: z.string(), job_table: z.string() });

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
