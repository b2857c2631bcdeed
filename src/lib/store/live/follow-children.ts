/**
 * Follows the children of a job (parent and child jobs): the list as it is,
 * then again each time one of them changes. Over Realtime the children's
 * changes arrive on their one topic (children share the parent's owner:
 * `jobs:<owner>`, or the parent's `job:<parent>` when ownerless), each with
 * its parent_id; the list is read again on each (re)join and when a child it
 * does not know appears. Without Realtime, or while it is down, it polls.
 */
import { isJobCondition } from '../../errors.ts';
import { isOlderState } from '../../internal/older-state.ts';
import { MAX_TIMER_MS } from '../../internal/timers.ts';
import type { JobRealtimeCapability, JobTopicStatus, RawRow } from '../adapter.ts';
import { Inbox } from './inbox.ts';
import type { Job } from '../job.ts';
import { parseJobBroadcast, withSummary } from '../job-summary.ts';

type ChildEvent = { kind: 'message'; row: RawRow; topic: string } | { kind: 'status'; status: JobTopicStatus };

/** @internal */
export interface FollowChildrenInput<R extends Job> {
	parentId: string;
	read(): Promise<R[]>;
	realtime: JobRealtimeCapability | undefined;
	/** The topic the children's changes go to, from the first list read (empty: the parent is read). */
	topic(children: R[]): Promise<string>;
	intervalMs: number;
	signal?: AbortSignal;
}

const SEEN = ['status', 'progress', 'stage', 'error', 'resultId'] as const;

function differs<R extends Job>(a: readonly R[], b: readonly R[]): boolean {
	return a.length !== b.length || a.some((x, i) => x.id !== b[i]!.id || SEEN.some((f) => x[f] !== b[i]![f]));
}

/**
 * Yields the children, oldest first, at once and after every change.
 *
 * @internal
 * @example
 * ```ts
 * for await (const children of followChildren({ parentId, read: () => store.children(parentId), realtime, intervalMs: 2000, signal })) render(children);
 * ```
 */
export async function* followChildren<R extends Job>(
	input: FollowChildrenInput<R>,
): AsyncGenerator<R[], void, undefined> {
	const { parentId, read, realtime, intervalMs, signal } = input;
	const inbox = new Inbox<ChildEvent>();
	let live = false;
	let subscription: { close(): void } | undefined;
	let refused = false;
	const tryRead = async (): Promise<R[] | null> => {
		try {
			return await read();
		} catch (e) {
			if (isJobCondition(e)) throw e;
			return null; // the network: the next interval tries again
		}
	};
	/** Joins the children's topic once it is known; the join's 'live' reads the list again. */
	const follow = async (children: R[]): Promise<void> => {
		if (!realtime || subscription || refused || signal?.aborted) return;
		let topic: string;
		try {
			topic = await input.topic(children);
		} catch (e) {
			if (isJobCondition(e)) throw e;
			return; // the network: tried again after the next read
		}
		subscription = realtime.subscribe(topic, {
			// Other jobs' changes go by on this topic too: only this parent's children are kept.
			message: (row) => {
				if (row.parent_id === parentId) inbox.push({ kind: 'message', row, topic });
			},
			status: (status) => inbox.push({ kind: 'status', status }),
		});
	};
	try {
		if (signal?.aborted) return;
		const first = await tryRead();
		let current = first ?? [];
		if (first) await follow(first);
		yield current;
		for (;;) {
			const event = await inbox.next(live ? MAX_TIMER_MS : intervalMs, signal);
			if (event === 'aborted') return;
			let next: R[] | null = null;
			if (event === 'elapsed' || event.kind === 'status') {
				if (event !== 'elapsed') {
					live = event.status === 'live';
					if (event.status === 'refused') {
						refused = true;
						subscription?.close();
					}
				}
				next = await tryRead();
				if (next) await follow(next);
			} else {
				const message = parseJobBroadcast(event.row, event.topic);
				const at = message ? current.findIndex((c) => c.id === message.job.id) : -1;
				if (!message) continue;
				if (at < 0) {
					next = await tryRead(); // a new child: read it in full
				} else if (!isOlderState(message.job, current[at]!)) {
					next = current.map((c, i) => (i === at ? withSummary(c, message.job) : c));
				}
			}
			if (next && differs(current, next)) {
				current = next;
				yield current;
			}
		}
	} finally {
		subscription?.close();
	}
}
