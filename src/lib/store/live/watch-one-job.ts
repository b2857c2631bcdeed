/**
 * The watch of one job (`store.watch`): the job followed to its end, over
 * its Realtime topic when the adapter has one (follow-topic.ts), else by
 * polling. The lists (a job's children, the caller's jobs) are in
 * watch-job-list.ts.
 */
import { beforeDeadline } from '../../internal/timers.ts';
import { isTerminalStatus } from '../../state.ts';
import { followJob } from './follow-topic.ts';
import type { JobCalls } from '../job-calls.ts';
import type { JobKind } from '../job-kind.ts';
import type { Job } from '../job.ts';
import { JobWatch, pause } from './watch-state.ts';
import type { WatchOptions } from '../store-options.ts';

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
