/**
 * "How much longer?" from the row alone (src/lib/svelte/internal/eta.ts): the
 * bar is time-proportional, so p% after t seconds promises t·(100−p)/p more,
 * counted in the database's own times; smoothed; overrun said as such.
 */
import { describe, expect, it } from 'vitest';
import { EtaEstimator, remainingText } from '../../src/lib/svelte/internal/eta.ts';

const T0 = Date.parse('2026-12-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000);
const words = {
	lessThanMinute: '<1',
	minutes: { one: '1 min', other: '{n} min' },
	hours: { one: '1 h', other: '{n} h' },
};

describe("time left from the run's own pace", () => {
	it('25% after 30 s of running promises 90 s more, counted from when the row arrived', () => {
		const eta = new EtaEstimator();
		eta.observe({ status: 'running', progress: 25, startedAt: at(0), updatedAt: at(30) }, 1_000_000);
		expect(eta.at(1_000_000).seconds).toBeCloseTo(90);
		expect(eta.at(1_030_000).seconds).toBeCloseTo(60);
	});

	it('a browser whose clock is an hour off counts the same: only database times make the pace', () => {
		const a = new EtaEstimator();
		const b = new EtaEstimator();
		const row = { status: 'running', progress: 50, startedAt: at(0), updatedAt: at(40) };
		a.observe(row, 0);
		b.observe(row, 3_600_000);
		expect(a.at(10_000).seconds).toBeCloseTo(b.at(3_610_000).seconds!);
	});

	it('one slow tick does not make the estimate jump: the projected end moves a third of the way', () => {
		const eta = new EtaEstimator();
		eta.observe({ status: 'running', progress: 50, startedAt: at(0), updatedAt: at(60) }, 0); // 60 s left
		eta.observe({ status: 'running', progress: 51, startedAt: at(0), updatedAt: at(120) }, 60_000); // alone: ~115 s left
		const left = eta.at(60_000).seconds!;
		expect(left).toBeGreaterThan(0);
		expect(left).toBeLessThan(60);
	});

	it('past its projected end the job is overrunning, and no number is promised', () => {
		const eta = new EtaEstimator();
		eta.observe({ status: 'running', progress: 50, startedAt: at(0), updatedAt: at(60) }, 0);
		expect(eta.at(60_000)).toEqual({ seconds: 0, overrun: false }); // at the end: within grace
		expect(eta.at(60_000 + 30_000)).toEqual({ seconds: null, overrun: true });
	});

	it('says nothing before 2% or outside a run, and starts over with a new attempt', () => {
		const eta = new EtaEstimator();
		eta.observe({ status: 'running', progress: 1, startedAt: at(0), updatedAt: at(5) }, 0);
		expect(eta.at(0).seconds).toBeNull();
		eta.observe({ status: 'running', progress: 50, startedAt: at(0), updatedAt: at(10) }, 0);
		eta.observe({ status: 'running', progress: 10, startedAt: at(100), updatedAt: at(101) }, 0);
		expect(eta.at(0).seconds).toBeCloseTo(9);
	});

	it('reads as people say it', () => {
		expect(remainingText(20, words)).toBe('<1');
		expect(remainingText(95, words)).toBe('2 min');
		expect(remainingText(5400, words)).toBe('1.5 h');
	});
});

describe("time left from the worker's estimate (expectedEndAt, written with the progress)", () => {
	it('prefers the worker: its expected end beats the pace the bar suggests', () => {
		const eta = new EtaEstimator();
		// Pace alone: 50% after 60 s says 60 s more; the worker's plan says 150 s.
		eta.observe({ status: 'running', progress: 50, startedAt: at(0), updatedAt: at(60), expectedEndAt: at(210) }, 0);
		expect(eta.at(0).seconds).toBeCloseTo(150);
	});

	it('once the worker has spoken, a row without its estimate does not bring the pace back', () => {
		const eta = new EtaEstimator();
		eta.observe({ status: 'running', progress: 10, startedAt: at(0), updatedAt: at(10), expectedEndAt: at(130) }, 0);
		eta.observe({ status: 'running', progress: 50, startedAt: at(0), updatedAt: at(20) }, 10_000);
		expect(eta.at(10_000).seconds).toBeCloseTo(110);
	});

	it('an estimate that suddenly says much less moves the end a third of the way, never all at once', () => {
		const eta = new EtaEstimator();
		eta.observe({ status: 'running', progress: 20, startedAt: at(0), updatedAt: at(10), expectedEndAt: at(310) }, 0);
		eta.observe(
			{ status: 'running', progress: 25, startedAt: at(0), updatedAt: at(20), expectedEndAt: at(40) },
			10_000,
		);
		const left = eta.at(10_000).seconds!;
		expect(left).toBeGreaterThan(150); // not the 20 s the last row alone says
		expect(left).toBeLessThan(290);
	});

	it('an expected end before the tick means the phase overran: no number, "taking longer than usual"', () => {
		const eta = new EtaEstimator();
		eta.observe({ status: 'running', progress: 30, startedAt: at(0), updatedAt: at(10), expectedEndAt: at(40) }, 0);
		eta.observe(
			{ status: 'running', progress: 40, startedAt: at(0), updatedAt: at(50), expectedEndAt: at(45) },
			40_000,
		);
		expect(eta.at(40_000)).toEqual({ seconds: null, overrun: true });
		// The next phase starts on its own plan: an honest number again.
		eta.observe(
			{ status: 'running', progress: 60, startedAt: at(0), updatedAt: at(60), expectedEndAt: at(90) },
			50_000,
		);
		expect(eta.at(50_000).seconds).toBeCloseTo(30);
	});
});
