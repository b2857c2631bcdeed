/**
 * Cron expressions as pg_cron reads them: five fields (minute 0-59, hour 0-23,
 * day of month 1-31 or `$` for the last day, month 1-12 or jan-dec, day of
 * week 0-7 or sun-sat, Sunday being 0 and 7), each a list of `*`, `n`, `a-b`,
 * `* /n` or `a-b/n` (a step needs a range, as in pg_cron); the aliases
 * `@yearly` `@annually` `@monthly` `@weekly` `@daily` `@midnight` `@hourly`;
 * and, where asked for, pg_cron 1.5's interval form `'N seconds'` (1-59).
 * Always UTC. The same rules are written in SQL as supabase_jobs.cron_problem
 * (12e_schedules.sql); test/kick/cron-expression.test.ts holds both to one
 * list of cases. Matching and next runs are croner's, so the local stand-in
 * and production agree; descriptions in words (cronstrue's) are in
 * cron-words.ts, so only code that shows schedules loads them.
 */
import { Cron } from 'croner';

interface CronField {
	name: string;
	min: number;
	max: number;
	/** The largest step croner (and a useful schedule) takes. */
	stepMax: number;
	names?: readonly string[];
}

const FIELDS: readonly CronField[] = [
	{ name: 'minute', min: 0, max: 59, stepMax: 60 },
	{ name: 'hour', min: 0, max: 23, stepMax: 24 },
	{ name: 'day of month', min: 1, max: 31, stepMax: 31 },
	{
		name: 'month',
		min: 1,
		max: 12,
		stepMax: 12,
		names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
	},
	{ name: 'day of week', min: 0, max: 7, stepMax: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

const ALIASES: Readonly<Record<string, string>> = {
	'@yearly': '0 0 1 1 *',
	'@annually': '0 0 1 1 *',
	'@monthly': '0 0 1 * *',
	'@weekly': '0 0 * * 0',
	'@daily': '0 0 * * *',
	'@midnight': '0 0 * * *',
	'@hourly': '0 * * * *',
};

/** pg_cron 1.5's interval form, on a trimmed lower-case expression. @internal */
export const INTERVAL = /^(\d+)\s*seconds?$/;
const PART = /^(\*|([0-9]+|[a-z]+)(?:-([0-9]+|[a-z]+))?)(?:\/([0-9]+))?$/;

/** A value of one field: a number, or a month or weekday name (case-insensitive). */
function fieldValue(token: string, field: CronField): number | string {
	if (/^[0-9]+$/.test(token)) {
		const n = Number(token);
		return n < field.min || n > field.max ? `the ${field.name} is ${field.min}-${field.max}; got ${token}` : n;
	}
	const at = field.names?.indexOf(token) ?? -1;
	if (at < 0) {
		return field.names
			? `'${token}' is not a ${field.name} name (${field.names[0]}-${field.names.at(-1)})`
			: `the ${field.name} takes no names; got '${token}'`;
	}
	return at + (field.min === 1 ? 1 : 0);
}

function partProblem(part: string, field: CronField): string | null {
	const m = PART.exec(part);
	if (!m) return `the ${field.name} field '${part}' is not a number, a name, a range a-b, * or a step */n or a-b/n`;
	const [, whole, from, to, step] = m;
	if (whole !== '*') {
		const a = fieldValue(from!, field);
		if (typeof a === 'string') return a;
		if (to === undefined && step !== undefined) {
			return `the ${field.name} field '${part}' has a step without a range: write */${step} or ${from}-${field.max}/${step}`;
		}
		if (to !== undefined) {
			const b = fieldValue(to, field);
			if (typeof b === 'string') return b;
			if (b < a) return `the ${field.name} range '${part}' runs backwards`;
		}
	}
	if (step !== undefined && (Number(step) < 1 || Number(step) > field.stepMax)) {
		return `the ${field.name} step is 1-${field.stepMax}; got ${step}`;
	}
	return null;
}

/**
 * Why pg_cron would refuse `expr`, or would never run it, in one sentence that
 * names the field; null when it is a schedule. `seconds` admits pg_cron 1.5's
 * `'N seconds'` (1-59); recurring jobs do not take it (one job per minute slot).
 *
 * @example
 * cronProblem('0 2 * * *');   // null
 * cronProblem('61 25 * * *'); // 'the minute is 0-59; got 61'
 */
export function cronProblem(expr: string, options: { seconds?: boolean } = {}): string | null {
	const text = String(expr ?? '')
		.trim()
		.toLowerCase();
	const interval = INTERVAL.exec(text);
	if (interval) {
		if (!options.seconds) {
			return `a recurring job runs at most once a minute (one job per minute slot): write five fields, not '${text}'`;
		}
		const n = Number(interval[1]);
		return n >= 1 && n <= 59 ? null : `an interval schedule is 1-59 seconds; got '${text}'`;
	}
	if (text.startsWith('@')) {
		return text in ALIASES
			? null
			: `'${text}' is not a schedule pg_cron runs: use @yearly, @monthly, @weekly, @daily, @hourly or five fields`;
	}
	const fields = text.split(/\s+/);
	if (fields.length !== 5) {
		return `a cron expression is five fields (minute hour day-of-month month day-of-week, in UTC), e.g. '0 2 * * *'; got '${text}'`;
	}
	for (const [i, field] of FIELDS.entries()) {
		if (i === 2 && fields[2] === '$') continue; // pg_cron 1.6: the last day of the month
		for (const part of fields[i]!.split(',')) {
			const problem = partProblem(part, field);
			if (problem) return problem;
		}
	}
	return null;
}

/** A schedule parsed: what the local stand-in for pg_cron runs on. */
export interface CronSchedule {
	/** The expression as given. */
	readonly source: string;
	/** For `'N seconds'`: N; null for five fields or an alias (minute granularity). */
	readonly everySeconds: number | null;
	/**
	 * True when `at` is a run time: for five fields, its UTC minute matches;
	 * for `'N seconds'`, its whole second of the epoch is a multiple of N.
	 */
	matches(at: Date): boolean;
	/** The first run strictly after `after` (default now); null if there is none. */
	nextRun(after?: Date): Date | null;
}

/**
 * The pattern croner (and cronstrue) read for a checked five-field expression
 * or alias, trimmed and in lower case: aliases expanded, `$` as `L`.
 *
 * @internal
 * @example
 * cronerPattern('@daily'); // '0 0 * * *'
 */
export function cronerPattern(text: string): string {
	const fields = (ALIASES[text] ?? text).split(/\s+/);
	if (fields[2] === '$') fields[2] = 'L';
	return fields.join(' ');
}

/**
 * Parses a schedule (throws a RangeError with {@link cronProblem}'s sentence
 * when it is not one); matching and next runs are croner's, in UTC.
 *
 * @example
 * parseCron('17 3 * * *').matches(new Date('2026-01-01T03:17:00Z')); // true
 * parseCron('5 seconds', { seconds: true }).everySeconds;             // 5
 */
export function parseCron(source: string, options: { seconds?: boolean } = {}): CronSchedule {
	const problem = cronProblem(source, options);
	if (problem) throw new RangeError(problem);
	const text = source.trim().toLowerCase();
	const interval = INTERVAL.exec(text);
	if (interval) {
		const every = Number(interval[1]);
		return {
			source,
			everySeconds: every,
			matches: (at) => Math.floor(at.getTime() / 1000) % every === 0,
			nextRun: (after = new Date()) => new Date((Math.floor(after.getTime() / 1000 / every) + 1) * every * 1000),
		};
	}
	const cron = new Cron(cronerPattern(text), { paused: true, timezone: 'UTC', mode: '5-part' });
	return {
		source,
		everySeconds: null,
		matches: (at) => cron.match(new Date(Math.floor(at.getTime() / 60_000) * 60_000)),
		nextRun: (after = new Date()) => cron.nextRun(after),
	};
}
