/**
 * The one call a ProgressTracker makes. JobStore implements it with job_tick:
 * a single round trip that writes progress, stage and heartbeat and returns
 * the job's current status, so "cancelled" is learned in the same write.
 */

import type { JobStatusValue } from '../state.ts';

export type { JobStatusValue };

/**
 * What one tick writes. `progress` is a percentage, 0..100.
 */
export interface TickUpdate {
	progress: number;
	stage: string;
	/** The claimed attempt, so a tick from a reclaimed (superseded) attempt is refused. */
	attempt?: number;
	/**
	 * Seconds until the worker expects the run to end, from its plan; negative
	 * when the current phase has run that much past its measured time.
	 */
	etaSeconds?: number;
}

/**
 * Anything a ProgressTracker can report to. Anything but 'running' coming
 * back means the work is no longer wanted.
 */
export interface Ticker {
	tick(id: string, update: TickUpdate): Promise<JobStatusValue>;
	/**
	 * Reads the status without writing: what an interval asks when the bar did
	 * not move, so a cancel is still learned within one interval. Without it,
	 * such ticks are skipped until the heartbeat is due.
	 */
	readStatus?(id: string, options?: { attempt?: number }): Promise<JobStatusValue>;
}
