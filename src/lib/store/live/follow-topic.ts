/**
 * watch over a push transport: the loop behind JobStore.watch when the
 * adapter has Realtime. While the topic is live it waits on messages only
 * (no query per tick); whenever the topic is not live — before the join,
 * after a connection loss, after a refusal — it polls like the plain watch,
 * and it re-reads the row on every status change, because changes committed
 * while not joined are never replayed.
 */
import { isOlderState } from '../../internal/older-state.ts';
import { isTerminalStatus } from '../../state.ts';
import type { JobRealtimeCapability } from '../adapter.ts';
import type { Job } from '../job.ts';
import type { JobCalls } from '../job-calls.ts';
import { JobWatch, type TopicEvent } from './watch-state.ts';
import { withSummary } from '../job-summary.ts';
import type { WatchOptions } from '../store-options.ts';
import { topicRouter, type TopicRouter } from './topic-router.ts';

/**
 * The one Realtime topic a job's changes are sent to (the SQL function
 * send_job_messages decides the same): the owner's `jobs:<owner>`, else for a
 * child its parent's `job:<parent>`, else the job's own `job:<id>`.
 *
 * @internal
 * @example
 * ```ts
 * jobTopic({ id, ownerId: null, parentId: null }); // `job:${id}`
 * ```
 */
export function jobTopic(job: Pick<Job, 'id' | 'ownerId' | 'parentId'>): string {
	if (job.ownerId !== null) return `jobs:${job.ownerId}`;
	return `job:${job.parentId ?? job.id}`;
}

/**
 * The watch of job `id` over Realtime, from the first read to its end:
 * yields the first read, then every change (see the module comment), until
 * a terminal state (re-read in full, so the last value is the row as it
 * ended), a timeout or an abort.
 *
 * A signed-in user follows their own list topic (one channel, one router for
 * all their watches), joined before the first read: once that topic is live,
 * a new watch costs one read and no join. A job that is not theirs (an
 * admin, a service) is followed on the one topic its changes go to.
 *
 * Reads that fail for a reason that is not a job error (the network, the
 * server restarting) are retried every `intervalMs`: a Realtime outage
 * usually takes REST with it, and a watch that survives the outage must not
 * die on the poll that backs it up. Job errors (the job vanished, permission)
 * end the watch as they would a polling one.
 *
 * @internal
 * @example
 * ```ts
 * for await (const job of followJob(calls, id, options, realtime)) render(job);
 * ```
 */
export async function* followJob<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	options: WatchOptions,
	realtime: JobRealtimeCapability,
): AsyncGenerator<R, void, undefined> {
	const watch = new JobWatch(calls, id, options, realtime);
	const { signal, liveness } = watch;
	if (signal?.aborted) return;
	const uid = await realtime.userId().catch(() => null);
	/** The topic followed next; null: the first read is to be yielded, then its job's topic followed. */
	let topic: string | null = uid === null ? null : `jobs:${uid}`;
	/** The first read, once made. */
	let first: R | undefined = topic === null ? await watch.readFirst() : undefined;
	for (;;) {
		if (topic === null) {
			if (signal?.aborted) return;
			first = liveness.judge(first!);
			yield first;
			if (isTerminalStatus(first.status)) return;
			// Someone else's job (an admin, a service): the one topic its changes go to.
			topic = jobTopic(first);
		}
		const router = topicRouter(realtime, topic);
		/** The first read came after a join this watch found already made: its `live` needs no read. */
		const caughtUp = router.add(watch) && first === undefined;
		try {
			if (first === undefined) {
				first = liveness.judge(await watch.readFirst());
				// The owner's topic carries only the owner's jobs: another's is followed on its own topic.
				if (first.ownerId !== uid) {
					watch.take(() => true);
					topic = null;
					continue;
				}
				if (signal?.aborted) return;
				yield first;
			}
			yield* followOnTopic(watch, router, first, caughtUp);
			return;
		} finally {
			router.remove(watch);
		}
	}
}

/** Whether the topic is live now, and whether the first read came after a join this watch found already made. */
interface Link {
	live: boolean;
	caughtUp: boolean;
}

/**
 * The rest of a watch on one joined topic, after its first value: waits on
 * messages while the topic is live, reads when it is not (or when the worker
 * is due to have beaten), and yields every change until a terminal state.
 */
async function* followOnTopic<R extends Job>(
	watch: JobWatch<R>,
	router: TopicRouter,
	first: R,
	caughtUp: boolean,
): AsyncGenerator<R, void, undefined> {
	const { signal, liveness, intervalMs, deadline } = watch;
	/** The last value yielded: emitOn compares against it. */
	let last = first;
	/** The newest state known (yielded or not): broadcasts merge into it. */
	let current = first;
	const link: Link = { live: false, caughtUp };
	while (!isTerminalStatus(last.status)) {
		const remaining = deadline - Date.now();
		if (remaining <= 0) throw watch.timeout(last);
		// A heartbeat writes no message: when the declared beats are due to
		// have been missed, a read tells whether the worker is still there
		// (and, once it is silent, every interval whether it came back).
		const checkAt = current.workerSilent ? Date.now() + intervalMs : liveness.silentAt(current);
		const quiet = link.live && !watch.owed ? remaining : Math.min(intervalMs, remaining);
		const event = await watch.next(Math.min(quiet, Math.max(0, checkAt - Date.now())), signal);
		if (event === 'aborted') return;
		const states = await candidateStates(watch, router, event, link, { last, current, checkAt });
		if (states === null) continue;
		if (signal?.aborted) return;
		for (const state of states) {
			if (isOlderState(state, current)) continue;
			current = liveness.judge(state);
			if (isTerminalStatus(current.status) || watch.changed(last, current)) {
				last = current;
				yield current;
				if (signal?.aborted) return;
			}
			if (isTerminalStatus(current.status)) break;
		}
	}
}

/**
 * The states one wait brought, oldest first (null: nothing to consider, wait
 * again): a read when the wait elapsed or the topic's status changed, the
 * broadcast summary when a message came (a terminal one read in full).
 */
async function candidateStates<R extends Job>(
	watch: JobWatch<R>,
	router: TopicRouter,
	event: 'elapsed' | TopicEvent,
	link: Link,
	at: { last: R; current: R; checkAt: number },
): Promise<R[] | null> {
	const { last, current } = at;
	let states: R[] = [];
	let read: R | null = null;
	if (event === 'elapsed') {
		if (Date.now() >= watch.deadline) throw watch.timeout(last);
		if (link.live && !watch.owed && Date.now() < at.checkAt) return null;
		read = await watch.tryRead(last);
	} else if (event.kind === 'status') {
		link.live = event.status === 'live';
		// Refused: plain polling from here on (the router has left the topic).
		if (event.status === 'refused') router.remove(watch);
		// Joined, lost or refused: either way what happened meanwhile is unknown,
		// unless the first read came after a join already made.
		if (!(link.caughtUp && link.live)) read = await watch.tryRead(last);
		link.caughtUp = false;
		// Reported once caught up, so "live" means "every change from now on arrives".
		watch.options.onRealtime?.(event.status);
	} else {
		const summary = watch.summaryOf(event);
		if (!summary || isOlderState(summary, current)) return null;
		if (isTerminalStatus(summary.status)) {
			// The end is read in full (error sentence, timings...) once; the broadcast stands in if that read fails.
			read = await watch.tryRead(last);
			if (read === null) states = [withSummary(current, summary)];
		} else {
			states = [withSummary(current, summary)];
		}
	}
	if (read !== null) states.push(...statesBefore(watch, current, read), read);
	return states;
}

/**
 * Messages that arrived during a read and are older than it are states the
 * job went through: taken from the inbox and returned in order, each merged
 * onto the one before (starting from `current`), to be kept before the read.
 */
function statesBefore<R extends Job>(watch: JobWatch<R>, current: R, read: R): R[] {
	const readAt = read.updatedAt.getTime();
	const between = watch
		.take((e) => {
			if (e.kind !== 'message') return false;
			const s = watch.summaryOf(e);
			return s === null || s.updatedAt.getTime() <= readAt;
		})
		.map((e) => watch.summaryOf(e))
		.filter((s): s is NonNullable<typeof s> => s !== null && s.updatedAt.getTime() < readAt);
	const states: R[] = [];
	let base = current;
	for (const s of between) {
		if (isOlderState(s, base)) continue;
		base = withSummary(base, s);
		states.push(base);
	}
	return states;
}
