/**
 * The dashboard's inputs, read from a query string or a posted form: the
 * failed-jobs filter, a job id, a kind. Bad input throws InvalidJobInputError
 * naming the field the form sent, before anything reaches the database.
 */
import { RATE_PER_MS_MAX, RATE_PER_MS_MIN, RATE_STARTS_MAX } from '../../internal/limits.ts';
import { checkKind, invalid, isJobId } from '../../store/input-checks.ts';
import type { RateLimit } from '../../store/store-options.ts';
import type { DashboardFilter } from './dashboard-data.ts';

type Fields = Pick<URLSearchParams, 'get'> | Pick<FormData, 'get'>;

function text(fields: Fields, name: string): string | undefined {
	const value = fields.get(name);
	if (value === null) return undefined;
	if (typeof value !== 'string') throw invalid(name, `${name} is text, not a file`);
	const trimmed = value.trim();
	return trimmed === '' ? undefined : trimmed;
}

function time(fields: Fields, name: string): string | undefined {
	const value = text(fields, name);
	if (value === undefined) return undefined;
	// <input type="datetime-local"> sends no zone: read it as UTC, as the page labels it.
	const withZone = /[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`;
	const at = new Date(withZone);
	if (Number.isNaN(at.getTime())) throw invalid(name, `${name} is a date and time (2026-12-01T14:00); got ${value}`);
	return at.toISOString();
}

/** The failed-jobs filter: kind, errorCode, from, to (all optional). */
export function readFilter(fields: Fields): DashboardFilter {
	const filter: DashboardFilter = {};
	const kind = text(fields, 'kind');
	if (kind !== undefined) filter.kind = checkKind(kind);
	const errorCode = text(fields, 'errorCode');
	if (errorCode !== undefined) {
		if (errorCode.length > 100)
			throw invalid('errorCode', `errorCode is at most 100 characters; got ${errorCode.length}`);
		filter.errorCode = errorCode;
	}
	const from = time(fields, 'from');
	const to = time(fields, 'to');
	if (from !== undefined) filter.from = from;
	if (to !== undefined) filter.to = to;
	if (from !== undefined && to !== undefined && from >= to) throw invalid('to', 'to is later than from');
	return filter;
}

/** The job an action is about (field `id`). */
export function readJobId(fields: Fields, name = 'id'): string {
	const id = text(fields, name);
	if (id === undefined) throw invalid(name, `${name} is required`);
	if (!isJobId(id)) throw invalid(name, `${name} is a job id (a UUID); got ${String(id).slice(0, 80)}`);
	return id;
}

/** The kind an action is about (field `kind`, required). */
export function readKind(fields: Fields): string {
	const kind = text(fields, 'kind');
	if (kind === undefined) throw invalid('kind', 'kind is required');
	return checkKind(kind);
}

/** Whether a failed job matches the filter's time and error code (kind is asked of the database). */
export function matchesFilter(
	job: { errorCode: string | null; finishedAt: string | null },
	filter: DashboardFilter,
): boolean {
	if (filter.errorCode !== undefined && job.errorCode !== filter.errorCode) return false;
	const at = job.finishedAt;
	if (filter.from !== undefined && (at === null || at < filter.from)) return false;
	if (filter.to !== undefined && (at === null || at >= filter.to)) return false;
	return true;
}

/** A number typed into a form field, required. */
function number(fields: Fields, name: string, what: string): number {
	const value = text(fields, name);
	if (value === undefined) throw invalid(name, `${name} is required: ${what}`);
	const n = Number(value);
	if (!Number.isFinite(n)) throw invalid(name, `${name} is a number: ${what}; got ${value.slice(0, 40)}`);
	return n;
}

/**
 * A kind's rate limit as the form sends it: `starts` (a whole number) per
 * `perSeconds` (seconds, to the millisecond).
 */
export function readRateLimit(fields: Fields): RateLimit {
	const starts = number(fields, 'starts', 'how many jobs start per window');
	if (!(Number.isInteger(starts) && starts >= 1 && starts <= RATE_STARTS_MAX))
		throw invalid('starts', `starts is a whole number from 1 to ${RATE_STARTS_MAX}; got ${starts}`);
	const seconds = number(fields, 'perSeconds', 'the window, in seconds');
	const perMs = Math.round(seconds * 1000);
	if (!(perMs >= RATE_PER_MS_MIN && perMs <= RATE_PER_MS_MAX))
		throw invalid(
			'perSeconds',
			`perSeconds is from ${RATE_PER_MS_MIN / 1000} to ${RATE_PER_MS_MAX / 1000} seconds; got ${seconds}`,
		);
	return { starts, perMs };
}
