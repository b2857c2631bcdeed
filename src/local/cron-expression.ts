/**
 * A pg_cron schedule matcher, enough for the schedules supabase-jobs installs
 * and the usual hand-written ones: five cron fields (minute hour day-of-month
 * month day-of-week: `*`, numbers, `a-b`, lists `a,b`, steps `* /n` and
 * `a-b/n`), matched in UTC as pg_cron does by default, and pg_cron 1.5's
 * interval form `'N seconds'` (1-59). Local tooling only.
 */

export interface CronExpression {
	/** The expression as given. */
	source: string;
	/** For `'N seconds'`: N; null for a five-field expression (minute granularity). */
	everySeconds: number | null;
	/**
	 * True when `at` is a run time: for five fields, its UTC minute matches;
	 * for `'N seconds'`, its whole second of the epoch is a multiple of N.
	 */
	matches(at: Date): boolean;
}

const FIELDS = [
	{ name: 'minute', min: 0, max: 59 },
	{ name: 'hour', min: 0, max: 23 },
	{ name: 'day-of-month', min: 1, max: 31 },
	{ name: 'month', min: 1, max: 12 },
	{ name: 'day-of-week', min: 0, max: 7 },
] as const;

function parseField(text: string, min: number, max: number, name: string): Set<number> {
	const values = new Set<number>();
	for (const part of text.split(',')) {
		const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
		if (!match) throw new Error(`unsupported cron ${name} field: ${JSON.stringify(text)}`);
		const from = match[1] === '*' ? min : Number(match[2]);
		const to = match[1] === '*' ? max : match[3] !== undefined ? Number(match[3]) : match[4] ? max : from;
		const step = match[4] ? Number(match[4]) : 1;
		if (from < min || to > max || from > to || step < 1) {
			throw new Error(`cron ${name} field out of range ${min}-${max}: ${JSON.stringify(text)}`);
		}
		for (let v = from; v <= to; v += step) values.add(v);
	}
	return values;
}

/**
 * Parses a five-field expression or `'N seconds'` (1-59); throws on anything
 * else (the `@daily` aliases are not supported here).
 *
 * @example
 * parseCron('* * * * *').matches(new Date()); // true
 * parseCron('17 3 * * *').matches(new Date('2026-01-01T03:17:00Z')); // true
 * parseCron('5 seconds').matches(new Date('2026-01-01T03:17:05Z')); // true
 */
export function parseCron(source: string): CronExpression {
	const interval = /^\s*(\d+)\s+seconds?\s*$/i.exec(source);
	if (interval) {
		const every = Number(interval[1]);
		if (every < 1 || every > 59) throw new Error(`an interval schedule is 1-59 seconds, got ${JSON.stringify(source)}`);
		return { source, everySeconds: every, matches: (at) => Math.floor(at.getTime() / 1000) % every === 0 };
	}
	const parts = source.trim().split(/\s+/);
	if (parts.length !== 5) throw new Error(`a cron expression has 5 fields, got ${JSON.stringify(source)}`);
	const [minute, hour, dom, month, dow] = FIELDS.map((f, i) => parseField(parts[i]!, f.min, f.max, f.name));
	if (dow!.has(7)) dow!.add(0);
	const domRestricted = parts[2] !== '*';
	const dowRestricted = parts[4] !== '*';
	return {
		source,
		everySeconds: null,
		matches(at: Date): boolean {
			if (!minute!.has(at.getUTCMinutes()) || !hour!.has(at.getUTCHours()) || !month!.has(at.getUTCMonth() + 1))
				return false;
			const domOk = dom!.has(at.getUTCDate());
			const dowOk = dow!.has(at.getUTCDay());
			// Classic cron: when both day fields are restricted, either one matching is enough.
			if (domRestricted && dowRestricted) return domOk || dowOk;
			return domOk && dowOk;
		},
	};
}
