/**
 * What one `store.watch` holds while it waits: its settings, its liveness
 * view, its inbox of topic events and the reads it makes. One object with its
 * methods on the prototype, so a thousand idle watches hold a thousand small
 * objects and no closures (see docs/architecture.md, "What a watch holds").
 */
import { TimeoutError, isJobCondition } from '../../errors.ts';
import { Liveness } from '../../internal/liveness.ts';
import { beforeDeadline, checkTimerMs } from '../../internal/timers.ts';
import type { JobRealtimeCapability, JobTopicStatus, RawRow } from '../adapter.ts';
import { Inbox } from './inbox.ts';
import type { JobCalls } from '../job-calls.ts';
import { parseJobBroadcast, tableLabel } from '../job-summary.ts';
import type { Job } from '../job.ts';
import { WATCH_EMIT_ON, WATCH_QUIET_READ_MS, type WatchOptions } from '../store-options.ts';
import type { TopicFollower } from './topic-router.ts';

/** What a topic tells a watch. */
export type TopicEvent =
	{ kind: 'message'; row: RawRow; topic: string } | { kind: 'status'; status: JobTopicStatus; reason?: unknown };

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

/**
 * Waits `ms`, or until `signal` aborts. Holds nothing but a timer.
 *
 * @internal
 * @example
 * ```ts
 * if ((await pause(2000, signal)) === 'aborted') return;
 * ```
 */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<'elapsed' | 'aborted'> {
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

/**
 * One watch of one job: built when the watch starts (it checks the options),
 * read by the polling loop and the topic loop alike.
 *
 * @internal
 * @example
 * ```ts
 * const watch = new JobWatch(calls, id, options, calls.adapter.realtime);
 * const first = watch.liveness.judge(await watch.readFirst());
 * ```
 */
export class JobWatch<R extends Job> extends Inbox<TopicEvent> implements TopicFollower {
	readonly liveness = new Liveness();
	readonly intervalMs: number;
	/** Over a live topic: the longest wait without news of a queued or running job before a read. */
	readonly quietReadMs: number;
	/** Epoch ms; Infinity without a timeout. */
	readonly deadline: number;
	/** A read is owed: the last one failed for a transient reason. */
	owed = false;

	constructor(
		readonly calls: JobCalls<R>,
		readonly id: string,
		readonly options: WatchOptions,
		/** Absent: the watch polls. */
		readonly realtime: JobRealtimeCapability | undefined,
	) {
		super();
		const intervalMs = options.intervalMs ?? 2000;
		checkTimerMs('intervalMs', intervalMs);
		checkTimerMs('timeoutMs', options.timeoutMs);
		const quietReadMs = options.quietReadMs ?? WATCH_QUIET_READ_MS;
		checkTimerMs('quietReadMs', quietReadMs);
		this.intervalMs = intervalMs;
		this.quietReadMs = quietReadMs;
		this.deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
	}

	get signal(): AbortSignal | undefined {
		return this.options.signal;
	}

	/** One read of the full row. Over Realtime, reads are gathered: many watches started together make one request. */
	read(): Promise<R> {
		return this.realtime ? this.calls.getGathered(this.id) : this.calls.get(this.id);
	}

	/**
	 * The first read survives an outage as the later ones do: a failure that is
	 * not a job error (the network, a database restarting) is tried again every
	 * intervalMs until the deadline; a job error (unknown id, permission) ends it.
	 */
	async readFirst(): Promise<R> {
		for (;;) {
			try {
				return await beforeDeadline(
					this.read(),
					this.deadline,
					() => new TimeoutError(`job ${this.id}: no answer to the first read within ${this.options.timeoutMs} ms`),
				);
			} catch (e) {
				if (isJobCondition(e) || Date.now() >= this.deadline) throw e;
				const wait = Math.min(this.intervalMs, this.deadline - Date.now());
				if ((await pause(wait, this.signal)) === 'aborted') throw e;
			}
		}
	}

	/**
	 * A read that a transient failure turns into null (and a read owed); job
	 * errors end the watch. The deadline holds during a read too: a slow answer
	 * must not hold the timeout back.
	 */
	async tryRead(last: R): Promise<R | null> {
		try {
			const row = await beforeDeadline(this.read(), this.deadline, () => this.timeout(last));
			this.owed = false;
			return row;
		} catch (e) {
			if (isJobCondition(e)) throw e;
			this.owed = true;
			return null;
		}
	}

	/** True when `b` differs from `a` in an emitOn field; a worker going silent (or back) is always news. */
	changed(a: R, b: R): boolean {
		if (a.workerSilent !== b.workerSilent) return true;
		for (const field of this.options.emitOn ?? WATCH_EMIT_ON) if (!sameValue(a[field], b[field])) return true;
		return false;
	}

	timeout(last: R): TimeoutError {
		return new TimeoutError(`job ${this.id} was still ${last.status} after ${this.options.timeoutMs} ms`, {
			details: `status=${last.status}`,
		});
	}

	/** The job change a message carries, or null when it is not about this job of this table. */
	summaryOf(event: TopicEvent) {
		if (event.kind !== 'message') return null;
		const message = parseJobBroadcast(event.row, event.topic);
		return message && message.job.id === this.id && message.jobTable === tableLabel(this.calls.table)
			? message.job
			: null;
	}

	onMessage(row: RawRow, topic: string): void {
		this.push({ kind: 'message', row, topic });
	}

	onStatus(status: JobTopicStatus, reason?: unknown): void {
		this.push({ kind: 'status', status, reason });
	}
}
