/**
 * The screen's live views: one job followed to its end (`watch`), a job's
 * children, and the caller's list of jobs. Over Realtime they listen on
 * private topics; without it, or while it is down, they poll.
 */
import { isJobError, TimeoutError } from '../errors.ts';
import { Liveness } from '../internal/liveness.ts';
import { beforeDeadline, checkTimerMs } from '../internal/timers.ts';
import { isTerminalStatus } from '../state.ts';
import { followChildren } from './follow-children.ts';
import { followTopic, jobTopic } from './follow-topic.ts';
import { checkTags, isJobId, notFound } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import type { JobKind } from './job-kind.ts';
import { parseJobBroadcast, tableLabel, type JobSummary } from './job-summary.ts';
import type { Job } from './job.ts';
import { children } from './screen-reads.ts';
import {
	WATCH_EMIT_ON,
	type SubscribeListOptions,
	type WatchChildrenOptions,
	type WatchOptions,
} from './store-options.ts';

const hasTags = (tags: readonly string[], wanted: readonly string[]) => wanted.every((t) => tags.includes(t));

function sameValue(a: unknown, b: unknown): boolean {
	if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
	if (
		a instanceof Uint8Array ||
		b instanceof Uint8Array ||
		(typeof a === 'object' && a !== null) ||
		(typeof b === 'object' && b !== null)
	) {
		return JSON.stringify(a) === JSON.stringify(b);
	}
	return Object.is(a, b);
}

/** Waits `ms`, or until `signal` aborts. Holds nothing but a timer. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<'elapsed' | 'aborted'> {
	if (signal?.aborted) return Promise.resolve('aborted');
	return new Promise((resolve) => {
		const onAbort = () => {
			clearTimeout(timer);
			resolve('aborted');
		};
		const timer = setTimeout(
			() => {
				signal?.removeEventListener('abort', onAbort);
				resolve('elapsed');
			},
			Math.max(0, ms),
		);
		signal?.addEventListener('abort', onAbort, { once: true });
	});
}

export async function* watchJob<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	options: WatchOptions,
): AsyncGenerator<R, void, undefined> {
	const intervalMs = options.intervalMs ?? 2000;
	checkTimerMs('intervalMs', intervalMs);
	checkTimerMs('timeoutMs', options.timeoutMs);
	const emitOn = options.emitOn ?? WATCH_EMIT_ON;
	const { signal, timeoutMs } = options;
	const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
	const timeout = (last: R) =>
		new TimeoutError(`job ${id} was still ${last.status} after ${timeoutMs} ms`, {
			details: `status=${last.status}`,
		});
	// A worker going silent (or back) is always news, whatever emitOn says.
	const changed = (a: R, b: R) =>
		a.workerSilent !== b.workerSilent || emitOn.some((field) => !sameValue(a[field], b[field]));
	if (signal?.aborted) return;
	const liveness = new Liveness();
	const realtime = options.transport === 'poll' ? undefined : calls.adapter.realtime;
	// Over Realtime, reads are gathered: many watches started together make one request.
	const read = () => (realtime ? calls.getGathered(id) : calls.get(id));
	// The first read survives an outage as the later ones do: a failure that is
	// not a job error (the network, a database restarting) is tried again every
	// intervalMs until the deadline; a job error (unknown id, permission) ends it.
	const readFirst = async (): Promise<R> => {
		for (;;) {
			try {
				return await beforeDeadline(
					read(),
					deadline,
					() => new TimeoutError(`job ${id}: no answer to the first read within ${timeoutMs} ms`),
				);
			} catch (e) {
				if (isJobError(e) || Date.now() >= deadline) throw e;
				if ((await pause(Math.min(intervalMs, deadline - Date.now()), signal)) === 'aborted') throw e;
			}
		}
	};
	// A signed-in user follows their own list topic (one channel for all their
	// watches), joined before the first read: once that topic is live, a new
	// watch costs one read and no join.
	const uid = realtime ? await realtime.userId().catch(() => null) : null;
	// What both topic follows share: the reads, the change rule, liveness and the deadline.
	const follow = {
		id,
		table: calls.table,
		read,
		changed,
		liveness,
		intervalMs,
		deadline,
		timeout,
		signal,
		onRealtime: options.onRealtime,
	};
	let last: R;
	if (realtime && uid !== null) {
		const notOwned = yield* followTopic<R>({
			...follow,
			realtime,
			topic: `jobs:${uid}`,
			readFirst,
			accept: (first) => first.ownerId === uid,
		});
		if (notOwned === undefined) return;
		last = notOwned;
	} else {
		last = await readFirst();
	}
	if (signal?.aborted) return;
	last = liveness.judge(last);
	yield last;
	if (isTerminalStatus(last.status)) return;

	if (realtime) {
		// Someone else's job (an admin, a service): the one topic its changes go to.
		yield* followTopic<R>({ ...follow, realtime, topic: jobTopic(last), first: last });
		return;
	}
	let current = last;
	while (!isTerminalStatus(last.status)) {
		const remaining = deadline - Date.now();
		if (remaining <= 0) throw timeout(last);
		// Read again when the declared beats are due, if that comes before the next poll.
		const checkIn = current.workerSilent ? intervalMs : liveness.silentAt(current) - Date.now();
		if ((await pause(Math.min(intervalMs, remaining, Math.max(0, checkIn)), signal)) === 'aborted') return;
		if (Date.now() >= deadline) throw timeout(last);
		current = liveness.judge(await beforeDeadline(calls.get(id), deadline, () => timeout(last)));
		if (signal?.aborted) return;
		if (isTerminalStatus(current.status) || changed(last, current)) {
			last = current;
			yield current;
		}
	}
}

export async function* watchChildren<R extends Job>(
	calls: JobCalls<R>,
	parentId: string,
	options: WatchChildrenOptions,
): AsyncGenerator<R[], void, undefined> {
	if (!isJobId(parentId)) throw notFound(parentId);
	const intervalMs = options.intervalMs ?? 2000;
	checkTimerMs('intervalMs', intervalMs);
	yield* followChildren<R>({
		parentId,
		read: () => children(calls, parentId),
		// Children share their parent's owner: jobs:<owner>, or the parent's job:<id> when ownerless.
		topic: async (kids) => {
			const owner = (kids[0] ?? (await calls.get(parentId))).ownerId;
			return owner === null ? `job:${parentId}` : `jobs:${owner}`;
		},
		realtime: options.transport === 'poll' ? undefined : calls.adapter.realtime,
		intervalMs,
		signal: options.signal,
	});
}

export function subscribeList<R extends Job>(calls: JobCalls<R>, options: SubscribeListOptions): () => void {
	const intervalMs = options.intervalMs ?? 2000;
	checkTimerMs('intervalMs', intervalMs);
	const label = tableLabel(calls.table);
	const wantedTags = checkTags('tags', options.tags) ?? [];
	const realtime = calls.adapter.realtime;
	let stopped = false;
	let poller: ReturnType<typeof setInterval> | null = null;
	let subscription: { close(): void } | null = null;
	const notify = (job?: JobSummary) => {
		if (!stopped) options.onChange(job);
	};
	const poll = (on: boolean) => {
		if (on && poller === null && !stopped) poller = setInterval(() => notify(), intervalMs);
		if (!on && poller !== null) {
			clearInterval(poller);
			poller = null;
		}
	};

	if (!realtime) {
		poll(true);
	} else {
		void (async () => {
			let owner = options.ownerId ?? null;
			if (owner === null) {
				try {
					owner = await realtime.userId();
				} catch {
					owner = null;
				}
			}
			if (stopped) return;
			if (owner === null) {
				options.onRealtime?.('refused');
				poll(true);
				return;
			}
			subscription = realtime.subscribe(`jobs:${owner}`, {
				message: (row) => {
					const message = parseJobBroadcast(row);
					if (message && message.jobTable === label && hasTags(message.job.tags, wantedTags)) notify(message.job);
				},
				status: (status) => {
					if (stopped) return;
					options.onRealtime?.(status);
					poll(status !== 'live');
					// Joined again, lost, or refused: what changed meanwhile is unknown.
					notify();
				},
			});
			if (stopped) subscription.close();
			else poll(true); // until the join answers
		})();
	}
	return () => {
		stopped = true;
		poll(false);
		subscription?.close();
	};
}

/** A watch whose rows carry their metadata as the kind's schema reads it (null when it does not fit). */
export async function* typedMetadata<R extends Job>(
	watching: AsyncGenerator<R, void, undefined>,
	kind: JobKind,
): AsyncGenerator<R, void, undefined> {
	for await (const row of watching) {
		yield { ...row, metadata: metadataOf(kind, row.metadata) };
	}
}

function metadataOf(kind: JobKind, raw: Record<string, unknown> | null): Record<string, unknown> | null {
	if (raw === null) return null;
	try {
		return kind.parseMetadata(raw) as Record<string, unknown>;
	} catch {
		return null;
	}
}
