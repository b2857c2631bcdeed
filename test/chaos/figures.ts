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
