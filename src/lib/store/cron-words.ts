/**
 * Schedules in words, for the people who read lists of them (an admin's
 * dashboard, the doctor): cronstrue's descriptions, in English or Brazilian
 * Portuguese, of the expressions cron-expression.ts accepts.
 */
import cronstrue from 'cronstrue';
import 'cronstrue/locales/pt_BR.js';
import { cronerPattern, cronProblem, INTERVAL } from './cron-expression.ts';

/**
 * A schedule in words, for lists of schedules (the admin's dashboard, the
 * doctor): English by default, Brazilian Portuguese for any `pt` tag. Times
 * are UTC, as pg_cron runs them.
 *
 * @example
 * describeCron('0 2 * * *');            // 'At 02:00 AM'
 * describeCron('0 2 * * *', 'pt-BR');   // 'Às 02:00'
 * describeCron('0 9 * * mon-fri');      // 'At 09:00 AM, Monday through Friday'
 */
export function describeCron(expr: string, locale: string = 'en'): string {
	const problem = cronProblem(expr, { seconds: true });
	if (problem) throw new RangeError(problem);
	const text = expr.trim().toLowerCase();
	const interval = INTERVAL.exec(text);
	const pattern = interval ? `*/${interval[1]} * * * * *` : cronerPattern(text);
	const portuguese = locale.toLowerCase().split(/[-_]/)[0] === 'pt';
	return cronstrue.toString(pattern, { locale: portuguese ? 'pt_BR' : 'en' });
}
