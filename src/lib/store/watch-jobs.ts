/**
 * The screen's live views: one job followed to its end (`watch`), a job's
 * children, and the caller's list of jobs. Over Realtime they listen on
 * private topics; without it, or while it is down, they poll.
 */
import { beforeDeadline, checkTimerMs } from '../internal/timers.ts';
import { isTerminalStatus } from '../state.ts';
import { followChildren } from './follow-children.ts';
import { followJob } from './follow-topic.ts';
import { checkTags, isJobId, notFound } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import type { JobKind } from './job-kind.ts';
import { parseJobBroadcast, tableLabel, type JobSummary } from './job-summary.ts';
import type { Job } from './job.ts';
import { JobWatch, pause } from './job-watch.ts';
import { children } from './screen-reads.ts';
import { type SubscribeListOptions, type WatchChildrenOptions, type WatchOptions } from './store-options.ts';

const hasTags = (tags: readonly string[], wanted: readonly string[]) => wanted.every((t) => tags.includes(t));

/**
 * `store.watch`: over Realtime when the adapter has it (follow-topic.ts),
 * else by polling. The options are checked as the watch starts.
 */
export function watchJob<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	options: WatchOptions,
): AsyncGenerator<R, void, undefined> {
	const realtime = options.transport === 'poll' ? undefined : calls.adapter.realtime;
	return realtime ? followJob(calls, id, options, realtime) : pollJob(calls, id, options);
}

/** The watch without a push transport: a read every intervalMs (sooner when a worker's beats are due). */
async function* pollJob<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	options: WatchOptions,
): AsyncGenerator<R, void, undefined> {
	const watch = new JobWatch(calls, id, options, undefined);
	const { signal, liveness, intervalMs, deadline } = watch;
	if (signal?.aborted) return;
	let last = await watch.readFirst();
	if (signal?.aborted) return;
	last = liveness.judge(last);
	yield last;
	let current = last;
	while (!isTerminalStatus(last.status)) {
		const remaining = deadline - Date.now();
		if (remaining <= 0) throw watch.timeout(last);
		// Read again when the declared beats are due, if that comes before the next poll.
		const checkIn = current.workerSilent ? intervalMs : liveness.silentAt(current) - Date.now();
		if ((await pause(Math.min(intervalMs, remaining, Math.max(0, checkIn)), signal)) === 'aborted') return;
		if (Date.now() >= deadline) throw watch.timeout(last);
		current = liveness.judge(await beforeDeadline(calls.get(id), deadline, () => watch.timeout(last)));
		if (signal?.aborted) return;
		if (isTerminalStatus(current.status) || watch.changed(last, current)) {
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
