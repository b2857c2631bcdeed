/**
 * The Realtime budget of a runner's progress ticks: the formula of messages
 * per second, the floor it gives between two progress messages of one job,
 * and the tick writer holding a visible change back until the floor passed
 * (reading the status meanwhile) and then writing the newest state.
 */
import { describe, expect, test } from 'vitest';
import {
	DEFAULT_REALTIME_BUDGET,
	resolveRealtimeBudget,
	TICK_SHARE,
	tickFloorMs,
	tickMessagesPerSecond,
} from '../../src/lib/internal/tick-budget.ts';
import { TickWriter } from '../../src/lib/internal/tick-writer.ts';
import type { TickUpdate } from '../../src/lib/toolkit/ticker.ts';

describe('the tick budget', () => {
	test('100 running jobs ticking every second with one viewer each cost 200 messages a second, twice the Free plan', () => {
		expect(tickMessagesPerSecond(100, 1000, 1)).toBe(200);
		expect(DEFAULT_REALTIME_BUDGET).toEqual({ messagesPerSecond: 100, viewersPerTopic: 1 });
	});

	test('the floor keeps any number of running jobs within the tick share of the plan', () => {
		const budget = { messagesPerSecond: 100, viewersPerTopic: 5 };
		expect(tickFloorMs(200, budget)).toBe(24_000);
		for (const running of [1, 7, 100, 200, 1000]) {
			const rate = tickMessagesPerSecond(running, tickFloorMs(running, budget), budget.viewersPerTopic);
			expect(rate).toBeCloseTo(TICK_SHARE * budget.messagesPerSecond, 6);
		}
	});

	test('a bad budget is refused naming its field; false turns pacing off', () => {
		expect(resolveRealtimeBudget(false)).toBeNull();
		expect(resolveRealtimeBudget({ viewersPerTopic: 5 })).toEqual({ messagesPerSecond: 100, viewersPerTopic: 5 });
		expect(() => resolveRealtimeBudget({ messagesPerSecond: 0 })).toThrow(/realtimeBudget\.messagesPerSecond/);
		expect(() => resolveRealtimeBudget({ messagesPerSecond: Number.NaN })).toThrow(/realtimeBudget\.messagesPerSecond/);
		expect(() => resolveRealtimeBudget({ viewersPerTopic: 1.5 })).toThrow(/realtimeBudget\.viewersPerTopic/);
		expect(() => resolveRealtimeBudget({ viewersPerTopic: -1 })).toThrow(/realtimeBudget\.viewersPerTopic/);
	});
});

describe('a paced tick writer', () => {
	function writer(gapMs: number) {
		let now = 1_000;
		const written: TickUpdate[] = [];
		let reads = 0;
		const ticker = {
			tick: async (_id: string, update: TickUpdate) => {
				written.push(update);
				return 'running' as const;
			},
			readStatus: async () => {
				reads++;
				return 'running' as const;
			},
		};
		const w = new TickWriter(ticker, 'job', {
			heartbeatMs: 60_000,
			now: () => now,
			minGapMs: () => gapMs,
			onStatus: () => {},
		});
		return { w, written, reads: () => reads, advance: (ms: number) => void (now += ms) };
	}

	test('writes no visible change until the gap since the claim passed, reads the status meanwhile, then writes the newest state', async () => {
		const t = writer(5_000);
		await t.w.write(() => ({ progress: 10, stage: 'a' }));
		t.advance(2_000);
		await t.w.write(() => ({ progress: 20, stage: 'a' }));
		expect(t.written).toEqual([]);
		expect(t.reads()).toBe(2);
		t.advance(3_000);
		await t.w.write(() => ({ progress: 30, stage: 'b' }));
		expect(t.written.map((u) => [u.progress, u.stage])).toEqual([[30, 'b']]);
		t.advance(4_999);
		await t.w.write(() => ({ progress: 40, stage: 'b' }));
		expect(t.written).toHaveLength(1);
		t.advance(1);
		await t.w.write(() => ({ progress: 50, stage: 'b' }));
		expect(t.written.map((u) => u.progress)).toEqual([30, 50]);
	});

	test('with a gap of 0 every visible change is written at once', async () => {
		const t = writer(0);
		await t.w.write(() => ({ progress: 10, stage: 'a' }));
		await t.w.write(() => ({ progress: 20, stage: 'a' }));
		expect(t.written.map((u) => u.progress)).toEqual([10, 20]);
	});
});
