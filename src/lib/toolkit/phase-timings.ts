/**
 * What the tracker records per phase and job_succeed stores in `jobs.timings`
 * ({"<phase>": {"seconds": n, "size": n|null}}), and what PhasePlan.fromHistory
 * reads back.
 */

/**
 * One phase of one job: how long it took and how large its input was.
 * `start` (seconds since the tracker was created) is optional and only used
 * to recover the phase order, which a jsonb object does not keep.
 */
export interface PhaseTiming {
	seconds: number;
	size: number | null;
	start?: number;
}

/**
 * Every phase timing of one job, keyed by phase.
 */
export type PhaseTimings = Record<string, PhaseTiming>;
