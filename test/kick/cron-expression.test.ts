import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/local/cron-expression.ts';

const at = (iso: string) => new Date(iso);

describe('the stand-in cron matches the expressions supabase-jobs schedules', () => {
	it('"* * * * *" matches every minute', () => {
		expect(parseCron('* * * * *').matches(at('2026-12-01T10:42:00Z'))).toBe(true);
	});

	it('"17 3 * * *" matches 03:17 UTC only', () => {
		const daily = parseCron('17 3 * * *');
		expect(daily.matches(at('2026-12-01T03:17:00Z'))).toBe(true);
		expect(daily.matches(at('2026-12-01T03:18:00Z'))).toBe(false);
		expect(daily.matches(at('2026-12-01T04:17:00Z'))).toBe(false);
	});

	it('steps, ranges and lists', () => {
		expect(parseCron('*/5 * * * *').matches(at('2026-12-01T10:45:00Z'))).toBe(true);
		expect(parseCron('*/5 * * * *').matches(at('2026-12-01T10:46:00Z'))).toBe(false);
		expect(parseCron('0 9-17/4 * * *').matches(at('2026-12-01T13:00:00Z'))).toBe(true);
		expect(parseCron('0 9-17/4 * * *').matches(at('2026-12-01T15:00:00Z'))).toBe(false);
		expect(parseCron('0,30 * * * *').matches(at('2026-12-01T15:30:00Z'))).toBe(true);
	});

	it('day of week 0 and 7 are Sunday; restricted day fields match either', () => {
		// 2026-12-06 is a Sunday.
		expect(parseCron('0 0 * * 7').matches(at('2026-12-06T00:00:00Z'))).toBe(true);
		expect(parseCron('0 0 * * 0').matches(at('2026-12-06T00:00:00Z'))).toBe(true);
		expect(parseCron('0 0 1 * 0').matches(at('2026-12-01T00:00:00Z'))).toBe(true);
		expect(parseCron('0 0 2 * 1').matches(at('2026-12-06T00:00:00Z'))).toBe(false);
	});

	it("'N seconds' (pg_cron 1.5 and later) matches every N seconds of the epoch", () => {
		const every5 = parseCron('5 seconds');
		expect(every5.everySeconds).toBe(5);
		expect(every5.matches(at('2026-12-01T10:42:05Z'))).toBe(true);
		expect(every5.matches(at('2026-12-01T10:42:05.900Z'))).toBe(true);
		expect(every5.matches(at('2026-12-01T10:42:06Z'))).toBe(false);
		expect(parseCron('1 second').matches(at('2026-12-01T10:42:06Z'))).toBe(true);
		expect(parseCron('* * * * *').everySeconds).toBeNull();
	});

	it('refuses what it does not support', () => {
		expect(() => parseCron('60 seconds')).toThrow(/1-59 seconds/);
		expect(() => parseCron('0 seconds')).toThrow(/1-59 seconds/);
		expect(() => parseCron('30 minutes')).toThrow(/5 fields/);
		expect(() => parseCron('61 * * * *')).toThrow(/out of range/);
		expect(() => parseCron('@daily')).toThrow();
	});
});
