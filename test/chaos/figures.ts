/** Percentiles and the figures block the chaos run prints. */

/** The p-th percentile (nearest rank) of `values`; null when there are none. */
export function percentile(values: readonly number[], p: number): number | null {
	if (values.length === 0) return null;
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function spread(values: readonly number[]): string {
	const f = (v: number | null) => (v === null ? '-' : `${Math.round(v)} ms`);
	return `p50 ${f(percentile(values, 50))}, p95 ${f(percentile(values, 95))}, p99 ${f(percentile(values, 99))} (n=${values.length})`;
}

/** Recovery after a worker dies mid-job, with the default 5 s beat: the targets docs/reliability.md states. */
export const RECOVERY_TARGETS = { silentMs: 15_000, runningAgainMs: 25_000 } as const;

/** Epoch ms of each step of one recovery, as a watcher (a page, a store's watch) and the database saw it. */
export interface RecoveryTimes {
	killedAt: number;
	/** The watcher first said "Not responding". */
	silentAt: number;
	/** The reclaim's requeue committed (its NOTIFY arrived), when listened for. */
	requeuedAt?: number;
	/** The watcher first showed the job running again (the next attempt). */
	runningAgainAt: number;
	doneAt: number;
}

/** `kill → "Not responding" 12.9 s → requeued 15.1 s → running again 15.2 s → done 31.0 s`. */
export function recoveryLine(t: RecoveryTimes): string {
	const s = (at: number) => `${((at - t.killedAt) / 1000).toFixed(1)} s`;
	return [
		'kill',
		`"Not responding" ${s(t.silentAt)}`,
		...(t.requeuedAt === undefined ? [] : [`requeued ${s(t.requeuedAt)}`]),
		`running again ${s(t.runningAgainAt)}`,
		`done ${s(t.doneAt)}`,
	].join(' → ');
}
