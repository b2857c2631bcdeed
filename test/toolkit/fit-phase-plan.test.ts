import { describe, expect, it } from 'vitest';
import { fitPhasePlan, type PhaseHistoryRow } from '../../src/lib/toolkit/fit-phase-plan.ts';
import { PhasePlan, type PhaseHistorySource } from '../../src/lib/toolkit/phase-plan.ts';

/** seconds = base + slope * size/1000, exactly. */
const line = (base: number, slope: number, size: number) => ({ seconds: base + (slope * size) / 1000, size });

describe('fitPhasePlan: medians and per-kilochar slopes from recorded timings', () => {
	it('recovers the median and the slope of a clean linear history', () => {
		const rows: PhaseHistoryRow[] = [2000, 4000, 8000, 16_000, 32_000].map((size) => ({ table: line(30, 0.5, size) }));
		const fit = fitPhasePlan(rows)!;
		expect(fit.perKilochar.table).toBeCloseTo(0.5, 10);
		expect(fit.medians.table).toBeCloseTo(30, 10);
		expect(fit.samples.table).toBe(5);
	});

	it('is robust: a few pathological jobs do not drag the fit (Theil–Sen, not least squares)', () => {
		const rows: PhaseHistoryRow[] = [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000].map((size) => ({
			table: line(10, 1, size),
		}));
		rows.push({ table: { seconds: 900, size: 1500 } }, { table: { seconds: 0.1, size: 9500 } }); // a cold start, a cache hit
		const fit = fitPhasePlan(rows)!;
		expect(fit.perKilochar.table).toBeGreaterThan(0.8);
		expect(fit.perKilochar.table).toBeLessThan(1.2);
		expect(fit.medians.table).toBeGreaterThan(8);
		expect(fit.medians.table).toBeLessThan(12);
	});

	it('fewer than 3 samples with sizes: no slope, just the median', () => {
		const fit = fitPhasePlan([
			{ pdf: { seconds: 1, size: 1000 } },
			{ pdf: { seconds: 3, size: 9000 } },
			{ pdf: { seconds: 2, size: null } },
		])!;
		expect(fit.perKilochar).toEqual({});
		expect(fit.medians.pdf).toBe(2);
	});

	it('too few sizes for a slope of its own: the prior plan’s shape, scaled by how much slower the recorded jobs ran', () => {
		// One job of 160 KB took 34 s, as the prior promised (2 + 0.2 × 160): its shape stays.
		const prior = { medians: { analyse: 2 }, perKilochar: { analyse: 0.2 } };
		const fit = fitPhasePlan([{ analyse: { seconds: 34, size: 160_000 } }], { prior })!;
		expect(fit.perKilochar.analyse).toBeCloseTo(0.2, 10);
		expect(fit.medians.analyse).toBeCloseTo(2, 10);
		// Twice as slow as promised, at any size: both halves of the plan double.
		const slow = fitPhasePlan([{ analyse: { seconds: 68, size: 160_000 } }], { prior })!;
		expect(slow.medians.analyse).toBeCloseTo(4, 10);
		expect(slow.perKilochar.analyse).toBeCloseTo(0.4, 10);
		// A phase the prior does not know: the median, as without one.
		expect(fitPhasePlan([{ pdf: { seconds: 3, size: null } }], { prior })).toMatchObject({
			medians: { pdf: 3 },
			perKilochar: {},
		});
	});

	it('all samples the same size: no slope can be told', () => {
		const fit = fitPhasePlan([1, 2, 3, 4].map((s) => ({ pdf: { seconds: s, size: 5000 } })))!;
		expect(fit.perKilochar).toEqual({});
		expect(fit.medians.pdf).toBe(2.5);
	});

	it('clamps a negative slope to 0: bigger input never makes work faster', () => {
		const rows = [1000, 2000, 3000, 4000].map((size) => ({ reading: line(20, -2, size) }));
		const fit = fitPhasePlan(rows)!;
		expect(fit.perKilochar.reading).toBe(0);
		expect(fit.medians.reading).toBe(median([18, 16, 14, 12]));
	});

	it('ignores what jsonb may hold that is not a timing', () => {
		const rows = [
			{ table: { seconds: 5, size: 100 } },
			{ table: { seconds: -1, size: 100 } },
			{ table: { seconds: Number.NaN, size: 100 } },
			{ table: null },
			{ table: 'fast' },
			null,
			{ table: { seconds: 7, size: -5 } },
		] as unknown as PhaseHistoryRow[];
		const fit = fitPhasePlan(rows)!;
		expect(fit.samples.table).toBe(2);
		expect(fit.medians.table).toBe(6);
	});

	it('nothing usable gives null', () => {
		expect(fitPhasePlan([])).toBeNull();
		expect(fitPhasePlan([{}, { a: null }] as unknown as PhaseHistoryRow[])).toBeNull();
	});

	it('orders phases by their recorded start, since jsonb keeps keys sorted rather than in run order', () => {
		// What jsonb gives back: keys sorted by length, then bytes.
		const rows = [1, 2, 3].map(() => ({
			pdf: { seconds: 1, size: null, start: 0 },
			table: { seconds: 30, size: null, start: 20 },
			reading: { seconds: 19, size: null, start: 1 },
		}));
		expect(fitPhasePlan(rows)!.phases).toEqual(['pdf', 'reading', 'table']);
		expect(fitPhasePlan(rows, { order: ['table'] })!.phases).toEqual(['table', 'pdf', 'reading']);
	});

	it('uses at most maxSamples per phase, from the front (newest first)', () => {
		const rows = [
			{ a: { seconds: 1, size: null } },
			{ a: { seconds: 1, size: null } },
			{ a: { seconds: 100, size: null } },
		];
		expect(fitPhasePlan(rows, { maxSamples: 2 })!.medians.a).toBe(1);
	});
});

describe('PhasePlan.fromHistory(source, kind)', () => {
	const history = (rows: PhaseHistoryRow[]): PhaseHistorySource & { asked: string[] } => {
		const asked: string[] = [];
		return { asked, phaseHistory: async (kind) => (asked.push(kind), rows) };
	};

	it('fits a plan from the source’s rows for that kind', async () => {
		const source = history(
			[2000, 4000, 8000].map((size) => ({ table: line(30, 0.5, size), pdf: { seconds: 1, size: null } })),
		);
		const plan = (await PhasePlan.fromHistory(source, 'extract'))!;
		expect(source.asked).toEqual(['extract']);
		expect(plan.expectedSeconds('table', 40_000)).toBeCloseTo(50, 10);
		expect(plan.expectedSeconds('pdf', 40_000)).toBe(1);
	});

	it('one job at a large size does not promise a small one its time: the fallback’s shape, scaled to what was recorded', async () => {
		const fallback = PhasePlan.fromSeconds({ analyse: 0.3 }, { perKilochar: { analyse: 0.2 } });
		// 160 KB promised 32.3 s and took 34: about 5% slower, at every size.
		const plan = await PhasePlan.fromHistory(history([{ analyse: { seconds: 34, size: 160_000 } }]), 'doc', {
			fallback,
		});
		expect(plan.expectedSeconds('analyse', 160_000)).toBeCloseTo(34, 10);
		expect(plan.expectedSeconds('analyse', 40_000)).toBeCloseTo((8.3 * 34) / 32.3, 10);
	});

	it('no history: null, or the fallback when given', async () => {
		const fallback = PhasePlan.fromSeconds({ table: 30 });
		expect(await PhasePlan.fromHistory(history([]), 'extract')).toBeNull();
		expect(await PhasePlan.fromHistory(history([]), 'extract', { fallback })).toBe(fallback);
	});

	it('with a fallback: measured values win, its order is kept, phases the history lacks come from it, and a phase recorded without sizes keeps its slope, scaled', async () => {
		const fallback = PhasePlan.fromSeconds(
			{ pdf: 1, table: 30, reading: 19 },
			{ perKilochar: { table: 0.5, reading: 0.2 } },
		);
		const rows = [1, 2, 3].map(() => ({ reading: { seconds: 10, size: null }, pdf: { seconds: 2, size: null } }));
		const plan = await PhasePlan.fromHistory(history(rows), 'extract', { fallback });
		expect(plan.phases).toEqual(['pdf', 'table', 'reading']);
		const { medians, perKilochar } = plan.toJSON();
		expect(medians).toEqual({ pdf: 2, table: 30, reading: 10 });
		expect(perKilochar.table).toBe(0.5);
		// reading ran in 10 s where 19 were promised: its slope shrinks alike.
		expect(perKilochar.reading).toBeCloseTo((0.2 * 10) / 19, 10);
	});
});

function median(xs: number[]): number {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
