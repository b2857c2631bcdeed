/**
 * Recurring jobs declared in code: a name, a kind, a cron expression and the
 * params of every run. `store.syncSchedules([...])` makes the database's set
 * this set (pg_cron entries included); each run is a normal job row, once per
 * minute slot (an idempotency key), so no slot runs twice. A schedule is
 * checked where it is written (defineSchedule), again before it is sent
 * (syncSchedules) and in the database (job_sync_schedules): an expression
 * pg_cron would refuse or never run is refused naming the schedule, e.g.
 * `schedules["nightly-report"].cron`, and nothing is stored.
 */
import { cronProblem, parseCron } from './cron-expression.ts';
import { KIND_MAX, KIND_PATTERN } from '../internal/limits.ts';
import { invalid } from './input-checks.ts';
import { isJobKind, type JobKind, type JobKindInput } from './job-kind.ts';
import type { JobParams } from './job.ts';

const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** The field path of one schedule's part, by its name: `schedules["nightly-report"].cron`. */
const fieldOf = (name: string, part: string) => `schedules[${JSON.stringify(name)}].${part}`;

/**
 * Checks a set of schedules as job_sync_schedules does (names, cron
 * expressions, duplicates); throws InvalidJobInputError naming the first bad
 * field (a bad name by its position: the name cannot name it).
 */
export function checkSchedules(schedules: readonly Pick<JobSchedule, 'name' | 'kind' | 'cron' | 'params'>[]): void {
	if (!Array.isArray(schedules)) throw invalid('schedules', 'schedules is an array of defineSchedule(...) values');
	const seen = new Set<string>();
	schedules.forEach((s, i) => {
		if (typeof s !== 'object' || s === null) throw invalid(`schedules[${i}]`, 'each schedule is an object');
		checkSchedule(s, `schedules[${i}].name`);
		checkRun(s);
	});
	for (const s of schedules) {
		if (seen.has(s.name)) throw invalid('schedules', `two schedules are named '${s.name}'`);
		seen.add(s.name);
	}
}

function checkSchedule(s: Pick<JobSchedule, 'name' | 'cron'>, nameField: string): void {
	if (typeof s.name !== 'string' || !NAME.test(s.name)) {
		throw invalid(
			nameField,
			`a schedule name is 1 to 63 lowercase letters, digits, dots, dashes or underscores; got ${s.name == null ? 'NULL' : `'${String(s.name).replaceAll("'", "''")}'`}`,
		);
	}
	const problem = cronProblem(typeof s.cron === 'string' ? s.cron : '');
	if (problem) throw invalid(fieldOf(s.name, 'cron'), problem);
	// In range yet never due (February 31st): pg_cron would keep it and never run it.
	if (parseCron(s.cron).nextRun() === null) {
		throw invalid(fieldOf(s.name, 'cron'), `'${s.cron.trim()}' never runs: no date matches it`);
	}
}

/** What each run enqueues: a kind's name (as job_sync_schedules checks it) and params that are a JSON object. */
function checkRun(s: Pick<JobSchedule, 'name' | 'kind' | 'params'>): void {
	const kind: unknown = s.kind;
	if (typeof kind !== 'string' || kind.length > KIND_MAX || !KIND_PATTERN.test(kind))
		throw invalid(fieldOf(s.name, 'kind'), `not a kind: ${JSON.stringify(String(kind).slice(0, 100))}`);
	const params: unknown = s.params;
	if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
		throw invalid(fieldOf(s.name, 'params'), 'params is a JSON object');
}

/**
 * One recurring job, as {@link defineSchedule} returns it.
 */
export interface JobSchedule {
	/** Unique; lowercase letters, digits, `.`, `-`, `_`. The pg_cron entry is `supabase-jobs-schedule:<name>`. */
	readonly name: string;
	readonly kind: string;
	/**
	 * Five fields in pg_cron's syntax, in UTC: minute (0-59) hour (0-23) day of
	 * month (1-31, or `$` for the last) month (1-12, jan-dec) day of week (0-7,
	 * sun-sat); lists, ranges `a-b` and steps `* /n`, `a-b/n`; or `@daily`,
	 * `@hourly`, `@weekly`, `@monthly`, `@yearly`. See {@link describeCron}.
	 */
	readonly cron: string;
	readonly params: JobParams;
}

/**
 * Declares a recurring job. Its name and cron expression are checked now (a
 * minute of 61 throws InvalidJobInputError with field
 * `schedules["<name>"].cron`), and with a declared kind its params too: at
 * startup, not at 2 a.m.
 *
 * @example
 * ```ts
 * export const schedules = [
 *   defineSchedule({ name: 'nightly-report', kind: buildReport, cron: '0 2 * * *', params: { scope: 'all' } }),
 * ];
 * await store.syncSchedules(schedules);
 * ```
 */
export function defineSchedule<K extends JobKind>(input: {
	name: string;
	kind: K;
	cron: string;
	params?: JobKindInput<K>;
}): JobSchedule;
export function defineSchedule(input: { name: string; kind: string; cron: string; params?: JobParams }): JobSchedule;
export function defineSchedule(input: {
	name: string;
	kind: string | JobKind;
	cron: string;
	params?: unknown;
}): JobSchedule {
	checkSchedule(input, 'name');
	const kind = input.kind;
	const params = isJobKind(kind)
		? (kind.parseParams(input.params ?? {}) as JobParams)
		: ((input.params ?? {}) as JobParams);
	return Object.freeze({ name: input.name, kind: isJobKind(kind) ? kind.name : kind, cron: input.cron, params });
}
