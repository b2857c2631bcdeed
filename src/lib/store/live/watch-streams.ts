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
import type { JobRealtimeCapability, RawRow } from '../adapter.ts';
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
 * One stream watch's state: the position reached, the inbox its topic's
 * messages arrive in, and the topic it listens on (if any).
 */
class StreamFollow {
	next: StreamPosition = { attempt: 0, seq: 0 };
	readonly inbox = new Inbox<StreamEvent>();
	topic: string | null = null;
	live = false;
	#subscription: { close(): void } | null = null;

	constructor(
		private readonly realtime: JobRealtimeCapability | undefined,
		private readonly id: string,
		private readonly label: string,
	) {}

	/** The chunks of a read that are new, moving the position past them. */
	take(chunks: readonly JobStreamChunk[]): JobStreamChunk[] {
		const fresh: JobStreamChunk[] = [];
		for (const chunk of chunks) {
			if (place(chunk, this.next) === 'seen') continue;
			fresh.push(chunk);
			this.next = { attempt: chunk.attempt, seq: chunk.seq + 1 };
		}
		return fresh;
	}

	/** Listens on `to` (leaving the topic listened on before): the job's end and its chunks go to the inbox. */
	subscribe(to: string): void {
		this.close();
		this.topic = to;
		this.live = false;
		const { id, label, inbox } = this;
		this.#subscription = this.realtime!.subscribe(to, {
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
	}

	/**
	 * Takes in one event: the next chunk goes to `batch`; a status change, the
	 * job's end or a gap answers true (a read is due).
	 */
	mustRead(event: StreamEvent, batch: JobStreamChunk[]): boolean {
		if (event.kind === 'status') {
			this.live = event.status === 'live';
			if (event.status === 'refused') this.close();
			// Joined again (or lost): what was sent meanwhile is read, not awaited.
			return true;
		}
		if (event.kind === 'ended') return true;
		const where = place(event.chunk, this.next);
		if (where === 'next') batch.push(...this.take([event.chunk]));
		return where === 'gap';
	}

	close(): void {
		this.#subscription?.close();
		this.#subscription = null;
	}
}

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
	const follow = new StreamFollow(realtime, id, tableLabel(calls.table));
	try {
		// A signed-in user's jobs speak on their own topic: joined before the first read, nothing is missed.
		const uid = realtime ? await realtime.userId().catch(() => null) : null;
		if (realtime && uid !== null) follow.subscribe(`jobs:${uid}`);
		let read = await readFrom(calls, id, follow.next);
		if (signal?.aborted) return;
		if (realtime && read.topic !== follow.topic && !isTerminalStatus(read.status)) {
			// Someone else's job (an admin watching) or an ownerless one: its own topic, then read again.
			follow.subscribe(read.topic);
		}
		yield follow.take(read.chunks);
		let ended = isTerminalStatus(read.status);
		while (!ended) {
			const event = await follow.inbox.next(follow.live ? Infinity : intervalMs, signal);
			if (event === 'aborted') return;
			const batch: JobStreamChunk[] = [];
			if (event === 'elapsed' || follow.mustRead(event, batch)) {
				try {
					read = await readFrom(calls, id, follow.next);
				} catch (e) {
					if (isJobCondition(e)) throw e;
					continue; // the network: the next interval tries again
				}
				batch.push(...follow.take(read.chunks));
				ended = isTerminalStatus(read.status);
			}
			if (signal?.aborted) return;
			if (batch.length > 0) yield batch;
		}
	} finally {
		follow.close();
	}
}
