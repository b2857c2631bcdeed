/**
 * The schedule matcher of the local stand-in for pg_cron: the package's own
 * parser (src/lib/store/cron-expression.ts, croner underneath) with pg_cron
 * 1.5's `'N seconds'` admitted, so the stack and production read a schedule
 * the same way. Five-field schedules match at the start of a UTC minute.
 * Local tooling only.
 */
import { parseCron as parseSchedule, type CronSchedule } from '../lib/store/cron-expression.ts';

/** A schedule as the stand-in runs it. */
export type CronExpression = CronSchedule;

/**
 * Parses what `cron.schedule` may hold: five fields, an `@` alias or
 * `'N seconds'` (1-59); throws a RangeError naming the field otherwise.
 *
 * @example
 * parseCron('17 3 * * *').matches(new Date('2026-01-01T03:17:00Z')); // true
 * parseCron('5 seconds').matches(new Date('2026-01-01T03:17:05Z'));  // true
 */
export function parseCron(source: string): CronExpression {
	return parseSchedule(source, { seconds: true });
}
