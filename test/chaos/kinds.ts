/**
 * The three kinds the chaos run enqueues, and their handlers, shared by the
 * Node runner processes and the Deno function instances. Each run is written
 * down (job, worker incarnation, attempt, start, end) in chaos.runs through the
 * recorder its process passes in, so overlapping runs of one job can be
 * counted afterwards from the database.
 */
import type postgres from 'postgres';
import { z } from 'zod';
import { defineJobKind } from '../../src/lib/index.ts';
import { defineJobHandler, delay, type JobHandler, type ProgressTracker } from '../../src/lib/worker.ts';
import { beforeDeadline } from '../../src/lib/internal/timers.ts';

/** A couple of short steps: most of the load. */
export const quick = defineJobKind({
	name: 'chaos.quick',
	params: z.object({ steps: z.number().int().min(1).max(20), stepMs: z.number().int().min(0).max(2000) }),
});

/** Long enough to be cancelled and killed while running, with progress every step. */
export const steps = defineJobKind({
	name: 'chaos.steps',
	params: z.object({ steps: z.number().int().min(1).max(50), stepMs: z.number().int().min(0).max(2000) }),
});

/** Throws on its first `failUntil - 1` attempts: retries, and a failure once max_attempts is spent. */
export const flaky = defineJobKind({
	name: 'chaos.flaky',
	params: z.object({ stepMs: z.number().int().min(0).max(2000), failUntil: z.number().int().min(1).max(10) }),
});

export const CHAOS_KINDS = [quick.name, steps.name, flaky.name] as const;

/** Writes one run's start and end; `start` resolves to the run's id. */
export interface RunRecorder {
	start(jobId: string, attempt: number): Promise<number>;
	end(runId: number, outcome: 'returned' | 'threw' | 'aborted'): Promise<void>;
}

/** How long a recorder query may stay unsettled before its process gives up (see sqlRecorder). */
const RECORDER_QUERY_MS = 20_000;

/**
 * The SQL a recorder runs (postgres.js tagged templates, the same under Node
 * and Deno). An end the database cannot take (it is restarting) is printed
 * instead, as a `chaos-run-end` line of the process's output, which the fleet
 * collects (`printedRunEnd`): a database restart must not leave a run
 * that ended looking as if it never did.
 *
 * postgres.js 3.4.9 can leave a query sent while the server shuts down
 * unsettled for ever (no result, no error). A handler awaiting it would hang
 * with its worker still beating, so its job would never end: the chaos run
 * found it. A recorder query unsettled after RECORDER_QUERY_MS calls `hung`,
 * which ends the process as a crash would (the supervisor starts it again,
 * the reclaim recovers its jobs, and its open runs end when it did).
 */
export function sqlRecorder(sql: postgres.Sql, worker: string, hung: (what: string) => never): RunRecorder {
	const bounded = <T>(what: string, query: Promise<T>): Promise<T> =>
		beforeDeadline(query, Date.now() + RECORDER_QUERY_MS, () => hung(what));
	return {
		async start(jobId, attempt) {
			const [row] = await bounded(
				`recording the start of job ${jobId}`,
				sql`insert into chaos.runs (job_id, worker, attempt) values (${jobId}, ${worker}, ${attempt}) returning id`,
			);
			return Number(row!.id);
		},
		async end(runId, outcome) {
			const endedAt = new Date();
			try {
				await bounded(
					`recording the end of run ${runId}`,
					sql`update chaos.runs set ended_at = ${endedAt}, outcome = ${outcome} where id = ${runId}`,
				);
			} catch {
				console.log(`${RUN_END} ${runId} ${outcome} ${endedAt.toISOString()}`);
			}
		},
	};
}

const RUN_END = 'chaos-run-end';

/** A run's end as a recorder printed it, when the database could not take it. */
export interface PrintedRunEnd {
	id: number;
	outcome: string;
	endedAt: Date;
}

/** The run end a line of a worker's output carries, if it is one (see sqlRecorder). */
export function printedRunEnd(line: string): PrintedRunEnd | null {
	const [tag, id, outcome, at] = line.trim().split(' ');
	return tag === RUN_END ? { id: Number(id), outcome: outcome!, endedAt: new Date(at!) } : null;
}

async function recorded<T>(
	recorder: RunRecorder,
	jobId: string,
	attempt: number,
	signal: AbortSignal,
	work: () => Promise<T>,
): Promise<T> {
	const runId = await recorder.start(jobId, attempt);
	let outcome: 'returned' | 'threw' | 'aborted' = 'threw';
	try {
		const value = await work();
		outcome = 'returned';
		return value;
	} catch (error) {
		if (signal.aborted) outcome = 'aborted';
		throw error;
	} finally {
		await recorder.end(runId, outcome);
	}
}

/** The handlers of the three kinds, writing their runs through `recorder`. */
export function chaosHandlers(recorder: RunRecorder): JobHandler[] {
	const stepping = (count: number, stepMs: number, tracker: ProgressTracker) =>
		tracker.run('work', async (signal) => {
			for (let i = 0; i < count; i++) {
				await delay(stepMs, signal);
				await tracker.report('work', { done: (i + 1) / count });
			}
		});
	return [
		defineJobHandler(quick, ({ job, params, tracker, signal, attempt }) =>
			recorded(recorder, job.id, attempt, signal, async () => {
				await stepping(params.steps, params.stepMs, tracker);
				return null;
			}),
		),
		defineJobHandler(steps, ({ job, params, tracker, signal, attempt }) =>
			recorded(recorder, job.id, attempt, signal, async () => {
				await stepping(params.steps, params.stepMs, tracker);
				return null;
			}),
		),
		defineJobHandler(flaky, ({ job, params, tracker, signal, attempt }) =>
			recorded(recorder, job.id, attempt, signal, async () => {
				await stepping(2, params.stepMs, tracker);
				if (attempt < params.failUntil) throw new Error(`chaos.flaky: attempt ${attempt} fails on purpose`);
				return null;
			}),
		),
	];
}
