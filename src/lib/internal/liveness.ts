/**
 * How a watcher tells that a running job's worker went silent: the worker
 * declared at claim how often it beats (`heartbeatMs`); once two and a half
 * beats pass after its last sign of life (the row's `updatedAt` or
 * `heartbeatAt`, whichever is later) without another, the job is
 * `workerSilent`. Reclaim waits for three (supabase_jobs.missed_beats()), so
 * the screen says "not responding" before the job is readmitted, never after.
 *
 * A sign of life is timed by the database's clock and placed on the watcher's
 * by the smallest gap seen between a row's time and the moment it arrived
 * (the clocks need not agree; a row can only arrive after it was written, so
 * the silence is never called early). A read that brings a heartbeat older
 * than what a message already showed is no news: the silence counts from the
 * worker's last beat, not from the read.
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
	/** The newest sign of life seen, on the database's clock (epoch ms). */
	#lifeAt = -Infinity;
	/** Watcher clock minus database clock, the smallest seen (a row arrives after it was written). */
	#offset = Infinity;
	readonly #now: () => number;

	constructor(now: () => number = Date.now) {
		this.#now = now;
	}

	/** Records what this row says of the worker and returns it with `workerSilent` decided. */
	judge<R extends Job>(row: R): R {
		const at = Math.max(row.updatedAt.getTime(), row.heartbeatAt?.getTime() ?? -Infinity);
		const now = this.#now();
		this.#offset = Math.min(this.#offset, now - at);
		this.#lifeAt = Math.max(this.#lifeAt, at);
		const silent = now >= this.silentAt(row);
		return row.workerSilent === silent ? row : { ...row, workerSilent: silent };
	}

	/** When (watcher's clock) the worker of this row counts as silent unless a sign of life comes first; Infinity when it never can (not running, nothing declared). */
	silentAt(row: Job): number {
		if (row.status !== 'running' || row.heartbeatMs === null || this.#offset === Infinity) return Infinity;
		return this.#lifeAt + this.#offset + row.heartbeatMs * SILENT_AFTER_BEATS;
	}
}
