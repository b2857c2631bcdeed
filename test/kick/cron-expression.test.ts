import { Cron } from 'croner';
import { beforeAll, describe, expect, it } from 'vitest';
import { cronProblem } from '../../src/lib/store/cron-expression.ts';
import { describeCron } from '../../src/lib/store/cron-words.ts';
import { parseCron } from '../../src/local/cron-expression.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { ACCEPTED, REFUSED } from './cron-cases.ts';

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

	it('refuses what pg_cron refuses, naming the field', () => {
		expect(() => parseCron('60 seconds')).toThrow(/1-59 seconds/);
		expect(() => parseCron('0 seconds')).toThrow(/1-59 seconds/);
		expect(() => parseCron('30 minutes')).toThrow(/five fields/);
		expect(() => parseCron('61 * * * *')).toThrow('the minute is 0-59; got 61');
		expect(() => parseCron('@reboot')).toThrow(RangeError);
	});

	it('names, the @ aliases and "$" (the last day of the month) match as pg_cron runs them', () => {
		expect(parseCron('0 0 * * mon-fri').matches(at('2026-12-07T00:00:00Z'))).toBe(true); // a Monday
		expect(parseCron('0 0 * * mon-fri').matches(at('2026-12-06T00:00:00Z'))).toBe(false); // a Sunday
		expect(parseCron('0 0 * dec *').matches(at('2026-12-06T00:00:00Z'))).toBe(true);
		expect(parseCron('@daily').matches(at('2026-12-06T00:00:00Z'))).toBe(true);
		expect(parseCron('@daily').matches(at('2026-12-06T00:01:00Z'))).toBe(false);
		expect(parseCron('@hourly').nextRun(at('2026-12-06T10:30:00Z'))).toEqual(at('2026-12-06T11:00:00Z'));
		expect(parseCron('0 12 $ * *').nextRun(at('2026-02-10T00:00:00Z'))).toEqual(at('2026-02-28T12:00:00Z'));
	});

	it("matching is croner's: the stand-in and croner agree on every minute of a week", () => {
		for (const expr of ['*/7 9-17 * * mon-fri', '0,30 */3 1-7 * 0', '15 4 * * *']) {
			const ours = parseCron(expr);
			const theirs = new Cron(expr, { paused: true, timezone: 'UTC', mode: '5-part' });
			let agreed = 0;
			for (let t = Date.parse('2026-12-01T00:00:00Z'); t < Date.parse('2026-12-08T00:00:00Z'); t += 60_000) {
				expect(ours.matches(new Date(t)), `${expr} at ${new Date(t).toISOString()}`).toBe(theirs.match(new Date(t)));
				agreed++;
			}
			expect(agreed).toBe(7 * 24 * 60);
		}
	});
});

describe('cron expressions are checked in range, the same in TypeScript and in SQL', () => {
	let db: TestDatabase;
	beforeAll(async () => {
		db = await useTestDatabase();
	});

	it.each(ACCEPTED)('%j is a schedule (TypeScript)', (expr) => {
		expect(cronProblem(expr)).toBeNull();
		expect(parseCron(expr).nextRun(at('2026-12-01T00:00:00Z'))).toBeInstanceOf(Date);
	});

	it.each(REFUSED)('%j is refused: %s (TypeScript)', (expr, sentence) => {
		expect(cronProblem(expr)).toBe(sentence);
	});

	it('supabase_jobs.cron_problem gives the same answer for every case', async () => {
		const cases = [...ACCEPTED.map((e) => [e, null] as const), ...REFUSED];
		const rows = await db.sql<{ expr: string; problem: string | null }[]>`
			select c.expr, supabase_jobs.cron_problem(c.expr) as problem
			  from unnest(${cases.map(([e]) => e)}::text[]) with ordinality as c(expr, n) order by c.n`;
		expect(rows.map((r) => [r.expr, r.problem])).toEqual(cases.map(([e, p]) => [e, p]));
	});

	it("'N seconds' is a stand-in schedule (pg_cron 1.5) but not a recurring job's", () => {
		expect(cronProblem('5 seconds', { seconds: true })).toBeNull();
		expect(cronProblem('5 seconds')).toMatch(/at most once a minute/);
	});
});

describe('describeCron: a schedule in words, in English and Brazilian Portuguese', () => {
	it('a daily time', () => {
		expect(describeCron('0 2 * * *')).toBe('At 02:00 AM');
		expect(describeCron('0 2 * * *', 'pt-BR')).toBe('Às 02:00');
	});

	it('steps, ranges and weekday names', () => {
		expect(describeCron('*/15 * * * *', 'en')).toBe('Every 15 minutes');
		expect(describeCron('*/15 * * * *', 'pt-BR')).toBe('A cada 15 minutos');
		expect(describeCron('0 9 * * mon-fri', 'en')).toBe('At 09:00 AM, Monday through Friday');
		expect(describeCron('0 9 * * mon-fri', 'pt-BR')).toBe('Às 09:00, de segunda-feira a sexta-feira');
	});

	it("aliases, '$' and 'N seconds' read as what they run", () => {
		expect(describeCron('@daily')).toBe('At 12:00 AM');
		expect(describeCron('0 12 $ * *')).toBe('At 12:00 PM, on the last day of the month');
		expect(describeCron('5 seconds')).toBe('Every 5 seconds');
		expect(describeCron('5 seconds', 'pt-BR')).toBe('A cada 5 segundos');
	});

	it('any Portuguese tag reads as pt-BR, anything else as English; a bad expression throws', () => {
		expect(describeCron('0 2 * * *', 'pt')).toBe('Às 02:00');
		expect(describeCron('0 2 * * *', 'de')).toBe('At 02:00 AM');
		expect(() => describeCron('61 25 * * *')).toThrow('the minute is 0-59; got 61');
	});
});
