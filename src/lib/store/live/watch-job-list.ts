/**
 * The watch of a list of jobs: a job's children (`store.watchChildren`) and
 * the caller's jobs (`store.subscribeList`). Over Realtime they listen on
 * private topics; without it, or while it is down, they poll. The watch of
 * one job is in watch-one-job.ts.
 */
import { checkTimerMs } from '../../internal/timers.ts';
import { checkTags, isJobId, notFound } from '../input-checks.ts';
import type { JobCalls } from '../job-calls.ts';
import { parseJobBroadcast, tableLabel, type JobSummary } from '../job-summary.ts';
import type { Job } from '../job.ts';
import { children } from '../screen-reads.ts';
import type { SubscribeListOptions, WatchChildrenOptions } from '../store-options.ts';
import { followChildren } from './follow-children.ts';

const hasTags = (tags: readonly string[], wanted: readonly string[]) => wanted.every((t) => tags.includes(t));

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
			const topic = `jobs:${owner}`;
			subscription = realtime.subscribe(topic, {
				message: (row) => {
					const message = parseJobBroadcast(row, topic);
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
