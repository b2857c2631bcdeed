/**
 * The one rule both state classes use to take a new snapshot of a job.
 *
 * Progress never moves backwards within one attempt. Snapshots can arrive out of
 * order (the first read and a Realtime broadcast race; a poll answers late) and
 * a tracker may report a slightly lower estimate after a real count; showing
 * 40% then 30% would make the bar lie. But a retry or a reclaim really does start
 * over, and pretending otherwise would lie the other way. So:
 *
 * - a new attempt starts when `attempts` changes, or when the job goes back to
 *   `queued` (the previous attempt ended; the next claim will bump `attempts`);
 *   the displayed value then follows the row, even downwards;
 * - within one attempt the displayed value is max(previous, incoming);
 * - `done` shows 100: the work finished, whatever the last tick said;
 * - nothing leaves a terminal state (as in the database), so a late non-terminal
 *   snapshot after done/failed/cancelled is ignored;
 * - a snapshot older than the one shown (`updatedAt` earlier, or fewer
 *   `attempts`) is ignored, unless it is terminal: nothing follows the end.
 *
 * @internal
 */
import { isTerminalStatus } from '../../state.ts';
import type { JobSnapshot } from '../types.ts';

/** @internal Clamps to 0..100; anything not a finite number reads as 0. */
export function clampProgress(value: unknown): number {
	const n = typeof value === 'number' ? value : Number(value);
	if (!Number.isFinite(n)) return 0;
	return Math.min(100, Math.max(0, n));
}

function time(d: Date | null | undefined): number | null {
	if (!(d instanceof Date)) return null;
	const t = d.getTime();
	return Number.isNaN(t) ? null : t;
}

/**
 * @internal
 * True when `next` begins a different attempt from `prev` (see the rule above).
 */
export function isNewAttempt(
	prev: Pick<JobSnapshot, 'attempts' | 'status'>,
	next: Pick<JobSnapshot, 'attempts' | 'status'>,
): boolean {
	return next.attempts !== prev.attempts || (next.status === 'queued' && prev.status !== 'queued');
}

/**
 * @internal
 * Returns the snapshot to show after `next` arrives, or null when `next` must be
 * ignored (stale, or after a terminal state). The returned object is a copy with
 * `progress` set to the displayed value.
 */
export function mergeSnapshot<T extends JobSnapshot>(prev: T | null, next: T): T | null {
	let progress = clampProgress(next.progress);
	if (prev) {
		if (isTerminalStatus(prev.status)) return null;
		if (next.attempts < prev.attempts) return null;
		const pt = time(prev.updatedAt);
		const nt = time(next.updatedAt);
		// A terminal snapshot is the last word whatever its clock says (nothing follows it).
		if (pt !== null && nt !== null && nt < pt && next.attempts === prev.attempts && !isTerminalStatus(next.status))
			return null;
		if (!isNewAttempt(prev, next)) progress = Math.max(prev.progress, progress);
	}
	// 100% only together with Done: the last tick of a run never fills the bar before the row ends.
	progress = next.status === 'done' ? 100 : Math.min(99, progress);
	return { ...next, progress };
}

/** @internal Whether a source's answer (a cancel's, an answer's) is a snapshot of job `id`, to show at once. */
export function isSnapshotOf(value: unknown, id: string): value is JobSnapshot {
	if (typeof value !== 'object' || value === null) return false;
	const v = value as Partial<JobSnapshot>;
	return v.id === id && typeof v.status === 'string' && typeof v.attempts === 'number';
}
