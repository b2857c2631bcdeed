/**
 * A measured plan of a job's phases: how long each usually takes, and how
 * that grows with the input. The medians are weights: a phase that takes half
 * the time takes half the bar.
 */
import { fitPhasePlan, type FitPhasePlanOptions, type PhaseHistoryRow } from './fit-phase-plan.ts';

/**
 * Where a phase sits on the 0..100 bar.
 */
export interface PhaseSpan {
	start: number;
	end: number;
}

/**
 * Input size per phase (characters, pages, bytes: whatever the slope was measured in), or one size for all.
 */
export type PhaseSizes = number | Readonly<Record<string, number | null | undefined>>;

/**
 * Anything that can read recorded timings of finished jobs of a kind, newest first (JobStore is one).
 */
export interface PhaseHistorySource {
	phaseHistory(kind: string): Promise<PhaseHistoryRow[]>;
}

/**
 * Options of {@link PhasePlan.fromHistory}.
 */
export interface FromHistoryOptions extends FitPhasePlanOptions {
	/** Declared plan used when there is no history, and for phases or slopes the history lacks. */
	fallback?: PhasePlan;
}

function checkSeconds(what: string, value: unknown): number {
	if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
		throw new RangeError(`${what} must be a finite number >= 0, got ${String(value)}`);
	}
	return value;
}

/**
 * @example
 * const PLAN = PhasePlan.fromSeconds(
 *   { pdf: 1, table: 30, reading: 19 },
 *   { perKilochar: { table: 0.5, reading: 0.2 } },
 * );
 * PLAN.spans(40_000); // { pdf: { start: 0, end: 1.8 }, table: { ... }, reading: { ..., end: 100 } }
 */
export class PhasePlan {
	/** Phases in the order they run. */
	readonly phases: readonly string[];
	readonly #medians: ReadonlyMap<string, number>;
	readonly #perKilochar: ReadonlyMap<string, number>;

	private constructor(medians: Map<string, number>, perKilochar: Map<string, number>) {
		this.phases = Object.freeze([...medians.keys()]);
		this.#medians = medians;
		this.#perKilochar = perKilochar;
	}

	/**
	 * Declares what you measured: median seconds per phase (in run order) and,
	 * optionally, seconds added per 1000 units of input size.
	 * Refuses a slope for a phase that is not in `medians` (a typo would
	 * otherwise pace nothing, silently).
	 *
	 * @example
	 * const PLAN = PhasePlan.fromSeconds({ table: 30, reading: 19 }, { perKilochar: { table: 0.5 } });
	 */
	static fromSeconds(
		medians: Readonly<Record<string, number>>,
		options: { perKilochar?: Readonly<Record<string, number>> } = {},
	): PhasePlan {
		const m = new Map<string, number>();
		for (const [phase, seconds] of Object.entries(medians)) m.set(phase, checkSeconds(`median of "${phase}"`, seconds));
		if (m.size === 0) throw new RangeError('a PhasePlan needs at least one phase');
		const k = new Map<string, number>();
		for (const [phase, slope] of Object.entries(options.perKilochar ?? {})) {
			if (!m.has(phase))
				throw new RangeError(`perKilochar names "${phase}", which is not a phase (${[...m.keys()].join(', ')})`);
			k.set(phase, checkSeconds(`perKilochar of "${phase}"`, slope));
		}
		return new PhasePlan(m, k);
	}

	/**
	 * Fits a plan from the recorded timings of finished jobs of `kind`
	 * (see {@link fitPhasePlan}). With a `fallback`, phases and slopes the
	 * history lacks come from it and its order is kept (a phase recorded at
	 * too few sizes for a slope of its own keeps the fallback's shape, scaled
	 * by how much slower or faster it ran than promised); without one, an
	 * empty history gives null.
	 *
	 * @example
	 * const plan = await PhasePlan.fromHistory(store, 'extract', { fallback: PLAN });
	 */
	static fromHistory(
		source: PhaseHistorySource,
		kind: string,
		options: FromHistoryOptions & { fallback: PhasePlan },
	): Promise<PhasePlan>;
	static fromHistory(source: PhaseHistorySource, kind: string, options?: FromHistoryOptions): Promise<PhasePlan | null>;
	static async fromHistory(
		source: PhaseHistorySource,
		kind: string,
		options: FromHistoryOptions = {},
	): Promise<PhasePlan | null> {
		const { fallback, ...fitOptions } = options;
		const fit = fitPhasePlan(await source.phaseHistory(kind), {
			order: fallback?.phases,
			prior: fallback?.toJSON(),
			...fitOptions,
		});
		if (!fit) return fallback ?? null;
		const medians = new Map<string, number>();
		const perKilochar = new Map<string, number>();
		const phases = fallback ? [...fallback.phases, ...fit.phases.filter((p) => !fallback.#medians.has(p))] : fit.phases;
		for (const p of phases) {
			medians.set(p, fit.medians[p] ?? fallback!.#medians.get(p)!);
			const slope = Object.hasOwn(fit.perKilochar, p) ? fit.perKilochar[p] : fallback && fallback.#perKilochar.get(p);
			if (slope !== undefined) perKilochar.set(p, slope);
		}
		return new PhasePlan(medians, perKilochar);
	}

	/**
	 * True when the plan knows this phase.
	 *
	 * @example
	 * if (!PLAN.has('ocr')) throw new Error('measure ocr first');
	 */
	has(phase: string): boolean {
		return this.#medians.has(phase);
	}

	/**
	 * Seconds the phase is expected to take for an input of `size`
	 * (median + perKilochar * size / 1000; no size means the median).
	 *
	 * @example
	 * PLAN.expectedSeconds('table', 40_000); // 30 + 0.5 * 40 = 50
	 */
	expectedSeconds(phase: string, size?: number | null): number {
		const median = this.#medians.get(phase);
		if (median === undefined) throw new RangeError(`unknown phase "${phase}"; the plan has ${this.phases.join(', ')}`);
		const slope = this.#perKilochar.get(phase) ?? 0;
		return median + (size != null && Number.isFinite(size) && size > 0 ? (slope * size) / 1000 : 0);
	}

	/**
	 * Each phase's span of the 0..100 bar for one job, proportional to its
	 * expected seconds at these sizes. The last span ends at exactly 100.
	 *
	 * @example
	 * const spans = PLAN.spans({ table: text.length, reading: text.length });
	 * spans.table; // { start: 2, end: 61 }
	 */
	spans(sizes?: PhaseSizes): Record<string, PhaseSpan> {
		const sizeOf = (p: string) => (typeof sizes === 'number' ? sizes : sizes?.[p]);
		const expected = this.phases.map((p) => this.expectedSeconds(p, sizeOf(p)));
		const total = expected.reduce((a, b) => a + b, 0);
		const weights = total > 0 ? expected : expected.map(() => 1); // all zero: split evenly
		const sum = total > 0 ? total : expected.length;
		const spans: Record<string, PhaseSpan> = {};
		let acc = 0;
		this.phases.forEach((p, i) => {
			const start = (100 * acc) / sum;
			acc += weights[i]!;
			spans[p] = { start, end: i === this.phases.length - 1 ? 100 : (100 * acc) / sum };
		});
		return spans;
	}

	/**
	 * One phase's span (see {@link PhasePlan.spans}).
	 *
	 * @example
	 * const { start, end } = PLAN.span('reading', text.length);
	 */
	span(phase: string, sizes?: PhaseSizes): PhaseSpan {
		if (!this.has(phase)) throw new RangeError(`unknown phase "${phase}"; the plan has ${this.phases.join(', ')}`);
		return this.spans(sizes)[phase]!;
	}

	/**
	 * The plan as data, the shape `fromSeconds` takes.
	 *
	 * @example
	 * console.log(JSON.stringify(await PhasePlan.fromHistory(store, 'extract')));
	 */
	toJSON(): { medians: Record<string, number>; perKilochar: Record<string, number> } {
		return { medians: Object.fromEntries(this.#medians), perKilochar: Object.fromEntries(this.#perKilochar) };
	}
}
