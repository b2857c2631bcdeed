/**
 * Recurring jobs declared in code: a name, a kind, a cron expression and the
 * params of every run. `store.syncSchedules([...])` makes the database's set
 * this set (pg_cron entries included); each run is a normal job row, once per
 * minute slot (an idempotency key), so no slot runs twice.
 */
import { isJobKind, type JobKind, type JobKindInput } from './job-kind.ts';
import type { JobParams } from './job.ts';

/**
 * One recurring job, as {@link defineSchedule} returns it.
 */
export interface JobSchedule {
	/** Unique; lowercase letters, digits, `.`, `-`, `_`. The pg_cron entry is `supabase-jobs-schedule:<name>`. */
	readonly name: string;
	readonly kind: string;
	/** Five fields in pg_cron's syntax (UTC): minute hour day month weekday. */
	readonly cron: string;
	readonly params: JobParams;
}

/**
 * Declares a recurring job. With a declared kind its params are checked now,
 * at startup, not at 2 a.m.
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
	const kind = input.kind;
	const params = isJobKind(kind)
		? (kind.parseParams(input.params ?? {}) as JobParams)
		: ((input.params ?? {}) as JobParams);
	return Object.freeze({ name: input.name, kind: isJobKind(kind) ? kind.name : kind, cron: input.cron, params });
}
