/**
 * How a watcher tells that a running job's worker went silent, by its own
 * clock only (the browser's clock and the database's need not agree): the
 * worker declared at claim how often it beats (`heartbeatMs`); any sign of
 * life (a new status, attempt, update or heartbeat) restarts the count, and
 * once two and a half beats pass without one the job is `workerSilent`.
 * Reclaim waits for three (supabase_jobs.missed_beats()), so the screen says
 * "not responding" before the job is readmitted, never after.
 */
import type { Job } from '../store/job.ts';

/** Beats without a sign of life before a watcher calls the worker silent. */
export const SILENT_AFTER_BEATS = 2.5;

/**
 * One watch's view of its job's liveness.
 *
 * @internal
 * @example
 * ```ts
 * const liveness = new Liveness();
 * const shown = liveness.judge(row); // row with workerSilent decided
 * const wakeAt = liveness.silentAt(shown); // when to look again (Infinity: no contract)
 * ```
 */
export class Liveness {
	#seenAt = 0;
	#mark = '';
	readonly #now: () => number;

	constructor(now: () => number = Date.now) {
		this.#now = now;
	}

	/** Records what this row says of the worker and returns it with `workerSilent` decided. */
	judge<R extends Job>(row: R): R {
		const mark = `${row.status}|${row.attempts}|${row.updatedAt.getTime()}|${row.heartbeatAt?.getTime() ?? ''}`;
		const now = this.#now();
		if (mark !== this.#mark) {
			this.#mark = mark;
			this.#seenAt = now;
		}
		const silent = now >= this.silentAt(row);
		return row.workerSilent === silent ? row : { ...row, workerSilent: silent };
	}

	/** When the worker of this row counts as silent unless a sign of life comes first; Infinity when it never can (not running, nothing declared). */
	silentAt(row: Job): number {
		if (row.status !== 'running' || row.heartbeatMs === null) return Infinity;
		return this.#seenAt + row.heartbeatMs * SILENT_AFTER_BEATS;
	}
}
