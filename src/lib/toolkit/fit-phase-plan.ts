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
	/**
	 * A plan measured elsewhere (`PhasePlan.toJSON()`'s shape), for phases
	 * whose history cannot fit a slope of their own (fewer than
	 * `minSizedSamples` sized samples, or all of one size): its shape is kept
	 * and scaled by how much slower or faster the recorded jobs ran than it
	 * promised (the median ratio). One job of 160 KB that took a tenth longer
	 * than the prior said makes a 40 KB job a tenth longer too, not as long as
	 * the 160 KB one. PhasePlan.fromHistory passes its fallback.
	 */
	prior?: {
		readonly medians: Readonly<Record<string, number>>;
		readonly perKilochar?: Readonly<Record<string, number>>;
	};
}

/**
 * What {@link fitPhasePlan} measured. Feed it to `PhasePlan.fromSeconds(fit.medians, { perKilochar: fit.perKilochar })`.
 */
export interface PhaseFit {
	/** Phases in the order they run. */
	phases: string[];
	/** Seconds at size 0 when a slope was fitted (Theil–Sen intercept), else the prior's, scaled, else the median seconds. */
	medians: Record<string, number>;
	/** Seconds per 1000 units of size: fitted where there were enough sized samples, else the prior's, scaled (see `prior`). */
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
	const { minSizedSamples = 3, maxSamples = 400, order = [], prior } = options;
	const byPhase = collect(rows, maxSamples);
	if (byPhase.size === 0) return null;

	const fit: PhaseFit = { phases: orderPhases(byPhase, order), medians: {}, perKilochar: {}, samples: {} };
	for (const phase of fit.phases) {
		const samples = byPhase.get(phase)!;
		fit.samples[phase] = samples.length;
		const sized: Point[] = samples.flatMap((s) => (s.size === null ? [] : [{ x: s.size / 1000, y: s.seconds }]));
		const slope = sized.length >= Math.max(2, minSizedSamples) ? theilSenSlope(sized) : null;
		if (slope === null && prior && scalePrior(fit, phase, samples, prior)) continue;
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

/**
 * The prior's median and slope for `phase`, scaled by the median of
 * recorded / promised seconds over `samples`. False when the prior does not
 * know the phase or promised nothing to compare with.
 */
function scalePrior(
	fit: PhaseFit,
	phase: string,
	samples: readonly Sample[],
	prior: NonNullable<FitPhasePlanOptions['prior']>,
): boolean {
	const base = Object.hasOwn(prior.medians, phase) ? prior.medians[phase] : undefined;
	if (!finiteAtLeast0(base)) return false;
	const priorSlope = prior.perKilochar && Object.hasOwn(prior.perKilochar, phase) ? prior.perKilochar[phase] : 0;
	const slope = finiteAtLeast0(priorSlope) ? priorSlope : 0;
	const ratios = samples.flatMap((s) => {
		const promised = base + (slope * (s.size ?? 0)) / 1000;
		return promised > 0 ? [s.seconds / promised] : [];
	});
	if (ratios.length === 0) return false;
	const factor = median(ratios);
	fit.medians[phase] = base * factor;
	if (slope > 0) fit.perKilochar[phase] = slope * factor;
	return true;
}
