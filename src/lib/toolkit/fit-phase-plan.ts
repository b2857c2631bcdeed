/**
 * Fits a phase plan from recorded timings: the pure half of
 * PhasePlan.fromHistory, so it can be tested and reused without a database.
 */
import { median, theilSenSlope, type Point } from '../internal/robust-stats.ts';

/**
 * One job's timings as read back from `jobs.timings` (jsonb: be ready for anything).
 */
export type PhaseHistoryRow = Readonly<
	Record<string, { seconds: number; size: number | null; start?: number } | null | undefined>
>;

/**
 * Tuning for {@link fitPhasePlan}.
 */
export interface FitPhasePlanOptions {
	/**
	 * Samples with a size needed before a slope is fitted; fewer means the
	 * phase is paced by its median alone.
	 * @default 3
	 */
	minSizedSamples?: number;
	/**
	 * Samples used per phase, taken from the front (pass newest first).
	 * Theil–Sen looks at every pair, so this bounds the work at n²/2.
	 * @default 400
	 */
	maxSamples?: number;
	/** Phase order to use; phases not listed follow, in recorded order. */
	order?: readonly string[];
}

/**
 * What {@link fitPhasePlan} measured. Feed it to `PhasePlan.fromSeconds(fit.medians, { perKilochar: fit.perKilochar })`.
 */
export interface PhaseFit {
	/** Phases in the order they run. */
	phases: string[];
	/** Seconds at size 0 when a slope was fitted (Theil–Sen intercept), else the median seconds. */
	medians: Record<string, number>;
	/** Seconds per 1000 units of size, only for phases with enough sized samples. */
	perKilochar: Record<string, number>;
	/** Usable samples per phase. */
	samples: Record<string, number>;
}

interface Sample {
	seconds: number;
	size: number | null;
	start: number | null;
}

const finiteAtLeast0 = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function collect(rows: readonly PhaseHistoryRow[], maxSamples: number): Map<string, Sample[]> {
	const byPhase = new Map<string, Sample[]>();
	for (const row of rows) {
		if (typeof row !== 'object' || row === null) continue;
		for (const [phase, t] of Object.entries(row)) {
			if (typeof t !== 'object' || t === null || !finiteAtLeast0(t.seconds)) continue;
			const list = byPhase.get(phase) ?? [];
			if (!byPhase.has(phase)) byPhase.set(phase, list);
			if (list.length >= maxSamples) continue;
			list.push({
				seconds: t.seconds,
				size: finiteAtLeast0(t.size) ? t.size : null,
				start: finiteAtLeast0(t.start) ? t.start : null,
			});
		}
	}
	return byPhase;
}

function orderPhases(byPhase: Map<string, Sample[]>, order: readonly string[]): string[] {
	const seen = [...byPhase.keys()];
	const typicalStart = (p: string) => {
		const starts = byPhase.get(p)!.flatMap((s) => (s.start === null ? [] : [s.start]));
		return starts.length ? median(starts) : Infinity;
	};
	// Recorded starts win over key order: jsonb stores keys sorted, not in run order.
	const rest = seen
		.filter((p) => !order.includes(p))
		.map((p, i) => ({ p, i, start: typicalStart(p) }))
		.sort((a, b) => a.start - b.start || a.i - b.i)
		.map((x) => x.p);
	return [...order.filter((p) => byPhase.has(p)), ...rest];
}

/**
 * Fits each phase's typical duration and its growth with input size from
 * recorded timings. Robust: the slope is Theil–Sen (median of pairwise
 * slopes, clamped at 0 since bigger input never makes work faster) and the
 * base is the median residual, so a few pathological jobs do not repace every
 * bar. Phases with fewer than `minSizedSamples` sized samples get no slope.
 * Returns null when there is nothing usable.
 *
 * @example
 * const rows = await sql`select timings from jobs where kind = 'extract' and status = 'done' order by finished_at desc limit 200`;
 * const fit = fitPhasePlan(rows.map((r) => r.timings));
 * const plan = fit && PhasePlan.fromSeconds(fit.medians, { perKilochar: fit.perKilochar });
 */
export function fitPhasePlan(rows: readonly PhaseHistoryRow[], options: FitPhasePlanOptions = {}): PhaseFit | null {
	const { minSizedSamples = 3, maxSamples = 400, order = [] } = options;
	const byPhase = collect(rows, maxSamples);
	if (byPhase.size === 0) return null;

	const fit: PhaseFit = { phases: orderPhases(byPhase, order), medians: {}, perKilochar: {}, samples: {} };
	for (const phase of fit.phases) {
		const samples = byPhase.get(phase)!;
		fit.samples[phase] = samples.length;
		const sized: Point[] = samples.flatMap((s) => (s.size === null ? [] : [{ x: s.size / 1000, y: s.seconds }]));
		const slope = sized.length >= Math.max(2, minSizedSamples) ? theilSenSlope(sized) : null;
		if (slope === null) {
			fit.medians[phase] = median(samples.map((s) => s.seconds));
			continue;
		}
		const perKilochar = Math.max(0, slope);
		fit.perKilochar[phase] = perKilochar;
		fit.medians[phase] = Math.max(0, median(sized.map((p) => p.y - perKilochar * p.x)));
	}
	return fit;
}
