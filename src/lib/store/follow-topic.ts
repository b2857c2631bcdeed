/**
 * watch over a push transport: the loop behind JobStore.watch when the
 * adapter has Realtime. While the topic is live it waits on messages only
 * (no query per tick); whenever the topic is not live — before the join,
 * after a connection loss, after a refusal — it polls like the plain watch,
 * and it re-reads the row on every status change, because changes committed
 * while not joined are never replayed.
 */
import { isJobError, TimeoutError } from '../errors.ts';
import { beforeDeadline, MAX_TIMER_MS } from '../internal/timers.ts';
import type { Liveness } from '../internal/liveness.ts';
import { isOlderState } from '../internal/older-state.ts';
import { isTerminalStatus } from '../state.ts';
import type { JobRealtimeCapability, JobTopicStatus, RawRow } from './adapter.ts';
import type { Job } from './job.ts';
import { parseJobBroadcast, tableLabel, withSummary } from './job-summary.ts';

type TopicEvent = { kind: 'message'; row: RawRow } | { kind: 'status'; status: JobTopicStatus; reason?: unknown };

/**
 * Events pushed synchronously by a transport, taken one at a time by an
 * async loop, with a timeout and an abort signal. Holds nothing but a timer.
 *
 * @internal
 * @example
 * ```ts
 * const inbox = new Inbox<number>();
 * inbox.push(1);
 * await inbox.next(1000, signal); // 1
 * ```
 */
export class Inbox<T> {
	#queue: T[] = [];
	#wake: (() => void) | null = null;

	push(event: T): void {
		this.#queue.push(event);
		this.#wake?.();
	}

	/** Removes and returns the queued events that `match`, in order, leaving the others queued. */
	take(match: (event: T) => boolean): T[] {
		const taken = this.#queue.filter(match);
		this.#queue = this.#queue.filter((e) => !match(e));
		return taken;
	}

	/** The next event, or 'elapsed' after `ms` (Infinity: never), or 'aborted'. */
	next(ms: number, signal: AbortSignal | undefined): Promise<T | 'elapsed' | 'aborted'> {
		if (signal?.aborted) return Promise.resolve('aborted');
		if (this.#queue.length > 0) return Promise.resolve(this.#queue.shift()!);
		return new Promise((resolve) => {
			let timer: ReturnType<typeof setTimeout> | undefined;
			const finish = (value: T | 'elapsed' | 'aborted') => {
				if (timer !== undefined) clearTimeout(timer);
				signal?.removeEventListener('abort', onAbort);
				this.#wake = null;
				resolve(value);
			};
			const onAbort = () => finish('aborted');
			if (ms < MAX_TIMER_MS) timer = setTimeout(() => finish('elapsed'), Math.max(0, ms));
			signal?.addEventListener('abort', onAbort, { once: true });
			this.#wake = () => finish(this.#queue.shift()!);
		});
	}
}

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
 * What {@link followTopic} needs from JobStore.watch.
 *
 * @internal
 */
export interface FollowInput<R extends Job> {
	id: string;
	/** The store's job table: messages of other tables are ignored. */
	table: string;
	/**
	 * The value already yielded (the first read). Absent: followTopic
	 * subscribes first, then reads the row (`readFirst`) and yields it, so a
	 * topic that is already joined needs no second read to catch up.
	 */
	first?: R;
	/** The first read when `first` is absent (its own timeout). */
	readFirst?: () => Promise<R>;
	/**
	 * With `first` absent: whether the row read belongs on this topic (the
	 * owner topic carries only the owner's jobs). When false the
	 * subscription is closed and the row returned, not yielded.
	 */
	accept?: (first: R) => boolean;
	/** One read of the full row (job_get). */
	read(): Promise<R>;
	realtime: JobRealtimeCapability;
	/**
	 * The topic to follow: where the job's changes are sent ({@link jobTopic}).
	 * A user's jobs all speak on `jobs:<uid>`, so one channel serves however
	 * many jobs they watch (Realtime allows 100 channels per connection).
	 * @default `job:${id}`
	 */
	topic?: string;
	/** True when `next` differs from `last` in an emitOn field (or in workerSilent). */
	changed(last: R, next: R): boolean;
	/** Decides workerSilent; the loop reads the row when a silence is due (heartbeats send no message). */
	liveness: Liveness;
	intervalMs: number;
	/** Epoch ms; Infinity without a timeout. */
	deadline: number;
	timeout(last: R): TimeoutError;
	signal?: AbortSignal;
	onRealtime?: (status: JobTopicStatus) => void;
}

/**
 * Yields every value after the first, until a terminal state (re-read in
 * full, so the last value is the row as it ended), a timeout or an abort.
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
 * yield first;
 * if (!isTerminalStatus(first.status)) yield* followTopic({ ...input, first });
 * ```
 */
export async function* followTopic<R extends Job>(input: FollowInput<R>): AsyncGenerator<R, R | undefined, undefined> {
	const { id, read, changed, liveness, intervalMs, deadline, signal } = input;
	const label = tableLabel(input.table);
	const inbox = new Inbox<TopicEvent>();
	/** The last value yielded: emitOn compares against it (set by the first read). */
	let last = input.first as R;
	/** The newest state known (yielded or not): broadcasts merge into it. */
	let current: R;
	let live = false;
	/** A read is owed: the last one failed for a transient reason. */
	let owed = false;

	const tryRead = async (): Promise<R | null> => {
		try {
			// The deadline holds during a read too: a slow answer must not hold the timeout back.
			const row = await beforeDeadline(read(), deadline, () => input.timeout(last));
			owed = false;
			return row;
		} catch (e) {
			if (isJobError(e)) throw e;
			owed = true;
			return null;
		}
	};

	/** The job change a message carries, or null when it is not about this job of this table. */
	const summaryOf = (event: Extract<TopicEvent, { kind: 'message' }>) => {
		const message = parseJobBroadcast(event.row);
		return message && message.job.id === id && message.jobTable === label ? message.job : null;
	};

	const subscription = input.realtime.subscribe(input.topic ?? `job:${id}`, {
		// On the owner's topic, other jobs' changes go by: only this job's are queued.
		message: (row) => {
			if (row.id === id) inbox.push({ kind: 'message', row });
		},
		status: (status, reason) => inbox.push({ kind: 'status', status, reason }),
	});
	/** The first read came after a join this subscription found already made: its `live` needs no read. */
	let caughtUp = false;
	try {
		let first = input.first;
		if (first === undefined) {
			caughtUp = subscription.joined === true;
			first = liveness.judge(await input.readFirst!());
			if (input.accept && !input.accept(first)) return first;
			if (signal?.aborted) return undefined;
			yield first;
		}
		last = current = first;
		while (!isTerminalStatus(last.status)) {
			const remaining = deadline - Date.now();
			if (remaining <= 0) throw input.timeout(last);
			// A heartbeat writes no message: when the declared beats are due to
			// have been missed, a read tells whether the worker is still there
			// (and, once it is silent, every interval whether it came back).
			const checkAt = current.workerSilent ? Date.now() + intervalMs : liveness.silentAt(current);
			const quiet = live && !owed ? remaining : Math.min(intervalMs, remaining);
			const event = await inbox.next(Math.min(quiet, Math.max(0, checkAt - Date.now())), signal);
			if (event === 'aborted') return undefined;

			/** Candidate states, oldest first. */
			let states: R[] = [];
			let read: R | null = null;
			if (event === 'elapsed') {
				if (Date.now() >= deadline) throw input.timeout(last);
				if (live && !owed && Date.now() < checkAt) continue;
				read = await tryRead();
			} else if (event.kind === 'status') {
				live = event.status === 'live';
				if (event.status === 'refused') subscription.close(); // plain polling from here on
				// Joined, lost or refused: either way what happened meanwhile is unknown,
				// unless the first read came after a join already made.
				if (!(caughtUp && live)) read = await tryRead();
				caughtUp = false;
				// Reported once caught up, so "live" means "every change from now on arrives".
				input.onRealtime?.(event.status);
			} else {
				const summary = summaryOf(event);
				if (!summary || isOlderState(summary, current)) continue;
				if (isTerminalStatus(summary.status)) {
					// The end is read in full (error sentence, timings...) once; the broadcast stands in if that read fails.
					read = await tryRead();
					if (read === null) states = [withSummary(current, summary)];
				} else {
					states = [withSummary(current, summary)];
				}
			}
			if (read !== null) {
				// Messages that arrived during the read and are older than it are
				// states the job went through: keep them, in order, before the read.
				const readAt = read.updatedAt.getTime();
				const between = inbox
					.take((e) => {
						if (e.kind !== 'message') return false;
						const s = summaryOf(e);
						return s === null || s.updatedAt.getTime() <= readAt;
					})
					.map((e) => summaryOf(e as Extract<TopicEvent, { kind: 'message' }>))
					.filter((s): s is NonNullable<typeof s> => s !== null && s.updatedAt.getTime() < readAt);
				let base = current;
				for (const s of between) {
					if (isOlderState(s, base)) continue;
					base = withSummary(base, s);
					states.push(base);
				}
				states.push(read);
			}
			if (signal?.aborted) return undefined;
			for (const state of states) {
				if (isOlderState(state, current)) continue;
				current = liveness.judge(state);
				if (isTerminalStatus(current.status) || changed(last, current)) {
					last = current;
					yield current;
					if (signal?.aborted) return undefined;
				}
				if (isTerminalStatus(current.status)) break;
			}
		}
	} finally {
		subscription.close();
	}
	return undefined;
}
