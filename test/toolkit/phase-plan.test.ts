import { describe, expect, it } from 'vitest';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';

const PLAN = PhasePlan.fromSeconds({ pdf: 1, table: 30, reading: 19 }, { perKilochar: { table: 0.5, reading: 0.2 } });

describe('PhasePlan.fromSeconds: the medians are the weights', () => {
	it('a phase that takes half the time takes half the bar', () => {
		const plan = PhasePlan.fromSeconds({ a: 10, b: 10 });
		expect(plan.spans()).toEqual({ a: { start: 0, end: 50 }, b: { start: 50, end: 100 } });
	});

	it('spans follow the declared order, are contiguous and end at exactly 100', () => {
		const spans = PLAN.spans(4000);
		expect(Object.keys(spans)).toEqual(['pdf', 'table', 'reading']);
		expect(spans.pdf!.start).toBe(0);
		expect(spans.table!.start).toBe(spans.pdf!.end);
		expect(spans.reading!.start).toBe(spans.table!.end);
		expect(spans.reading!.end).toBe(100);
	});

	it('expected seconds = median + perKilochar * size / 1000', () => {
		expect(PLAN.expectedSeconds('table', 40_000)).toBe(50);
		expect(PLAN.expectedSeconds('reading', 40_000)).toBe(27);
		expect(PLAN.expectedSeconds('pdf', 40_000)).toBe(1); // no slope declared
		expect(PLAN.expectedSeconds('table')).toBe(30);
		expect(PLAN.expectedSeconds('table', null)).toBe(30);
	});

	it('a call over 40,000 characters is not paced like one over 4,000', () => {
		const small = PLAN.spans(4000); // 1, 32, 19.8 -> total 52.8
		const large = PLAN.spans(40_000); // 1, 50, 27 -> total 78
		expect(small.pdf!.end).toBeCloseTo((100 * 1) / 52.8, 10);
		expect(large.pdf!.end).toBeCloseTo((100 * 1) / 78, 10);
		expect(large.table!.end - large.table!.start).toBeCloseTo((100 * 50) / 78, 10);
	});

	it('sizes can be given per phase; a phase without a size gets its median', () => {
		const spans = PLAN.spans({ table: 40_000 }); // 1, 50, 19 -> 70
		expect(spans.table!.end - spans.table!.start).toBeCloseTo((100 * 50) / 70, 10);
		expect(spans.reading!.end - spans.reading!.start).toBeCloseTo((100 * 19) / 70, 10);
	});

	it('all-zero medians split the bar evenly rather than dividing by zero', () => {
		expect(PhasePlan.fromSeconds({ a: 0, b: 0 }).spans()).toEqual({
			a: { start: 0, end: 50 },
			b: { start: 50, end: 100 },
		});
	});

	it('span() gives one phase and refuses an unknown one', () => {
		expect(PLAN.span('table', 40_000)).toEqual(PLAN.spans(40_000).table);
		expect(() => PLAN.span('ocr')).toThrow(/unknown phase "ocr".*pdf, table, reading/);
		expect(() => PLAN.expectedSeconds('ocr')).toThrow(RangeError);
	});

	it('refuses a slope for a phase that is not declared (a typo would pace nothing)', () => {
		expect(() => PhasePlan.fromSeconds({ table: 30 }, { perKilochar: { tabel: 0.5 } })).toThrow(/"tabel".*not a phase/);
	});

	it('refuses negative, infinite or missing numbers, and an empty plan', () => {
		expect(() => PhasePlan.fromSeconds({ a: -1 })).toThrow(RangeError);
		expect(() => PhasePlan.fromSeconds({ a: Infinity })).toThrow(RangeError);
		expect(() => PhasePlan.fromSeconds({ a: Number.NaN })).toThrow(RangeError);
		expect(() => PhasePlan.fromSeconds({ a: 1 }, { perKilochar: { a: -0.1 } })).toThrow(RangeError);
		expect(() => PhasePlan.fromSeconds({})).toThrow(/at least one phase/);
	});

	it('toJSON round-trips through fromSeconds', () => {
		const json = PLAN.toJSON();
		expect(json).toEqual({ medians: { pdf: 1, table: 30, reading: 19 }, perKilochar: { table: 0.5, reading: 0.2 } });
		expect(PhasePlan.fromSeconds(json.medians, json).spans(1234)).toEqual(PLAN.spans(1234));
	});
});
