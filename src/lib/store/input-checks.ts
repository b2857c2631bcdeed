/**
 * The store's input checks, in one place: every path that writes a job
 * (enqueue, each item of enqueueMany, enqueueChild) runs the same
 * {@link checkEnqueue}, so a value refused on one path is refused on the
 * others with the same sentence. Bad input throws {@link InvalidJobInputError}
 * naming the field the caller wrote (`priority`, `items[2].delayMs`) before
 * any round trip; the SQL functions refuse the same values with 22023.
 */
import { InvalidJobInputError, JobNotFoundError } from '../errors.ts';
import {
	BATCH_MAX,
	CONCURRENCY_KEY_MAX,
	DURATION_MAX_MS,
	KIND_MAX,
	LIST_MAX,
	KIND_PATTERN,
	LOCALE_PATTERN,
	MAX_ATTEMPTS_MAX,
	METADATA_MAX_BYTES,
	PRIORITY_MAX,
	PRIORITY_MIN,
	RATE_PER_MS_MAX,
	RATE_PER_MS_MIN,
	RATE_STARTS_MAX,
	TAG_MAX_LENGTH,
	TAGS_MAX,
} from '../internal/limits.ts';
import { isJobKind, type JobKind } from './job-kind.ts';
import type { JobParams } from './job.ts';
import type { CancelManyFilter, ChildInput, DeleteFinishedFilter, EnqueueInput, RateLimit } from './store-options.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A malformed id names no job: the store answers as it would for an unknown one, without a round trip. */
export const isJobId = (id: unknown): id is string => typeof id === 'string' && UUID.test(id);

export const notFound = (id: string): JobNotFoundError => new JobNotFoundError(`job ${String(id)} not found`);

export function invalid(field: string, message: string): InvalidJobInputError {
	return new InvalidJobInputError(message, { field, details: `field=${field}`, hint: 'Nothing was written.' });
}

/** The range of a SQL integer (int4) argument: past it the database answers a raw 22003 naming nothing. */
export const INT4_MIN = -2_147_483_648;
export const INT4_MAX = 2_147_483_647;

/** NaN and Infinity would reach PostgREST as JSON null and silently mean "default": refuse them here, for both adapters alike. */
export function checkInt(field: string, value: number | undefined): number | undefined {
	if (value !== undefined && !Number.isInteger(value))
		throw invalid(field, `${field} must be an integer; got ${String(value)}`);
	return value;
}

export function checkFinite(field: string, value: number | undefined): number | undefined {
	if (value !== undefined && !Number.isFinite(value))
		throw invalid(field, `${field} must be a finite number; got ${String(value)}`);
	return value;
}

export function checkRange(field: string, value: number | undefined, min: number, max: number): number | undefined {
	if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max))
		throw invalid(field, `${field} is an integer from ${min} to ${max}; got ${String(value)}`);
	return value;
}

/** Metadata is a JSON object (merged key by key into the job's); job_tick refuses anything else, and its size past the limit. */
export function checkMetadata(
	value: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== 'object' || value === null || Array.isArray(value))
		throw invalid(
			'metadata',
			`metadata is an object of keys to set; got ${Array.isArray(value) ? 'an array' : typeof value}`,
		);
	const bytes = new TextEncoder().encode(JSON.stringify(value)).byteLength;
	if (bytes > METADATA_MAX_BYTES)
		throw invalid(
			'metadata',
			`metadata holds at most ${METADATA_MAX_BYTES} bytes of JSON; this update alone is ${bytes}`,
		);
	return value as Record<string, unknown>;
}

export function checkPositive(field: string, value: number | undefined): number | undefined {
	if (value !== undefined && !(Number.isFinite(value) && value > 0))
		throw invalid(field, `${field} must be a positive number of milliseconds; got ${String(value)}`);
	return value;
}

const DURATION_RANGE = `3650 days (${DURATION_MAX_MS} ms)`;

/**
 * A delay, expiry or key lifetime in milliseconds: finite, not negative (not
 * zero when `positive`), at most {@link DURATION_MAX_MS}, the range
 * supabase_jobs.check_duration refuses past.
 */
export function checkDuration(field: string, value: number | undefined, positive = false): number | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== 'number' || !Number.isFinite(value))
		throw invalid(field, `${field} must be a finite number of milliseconds; got ${String(value)}`);
	if (value < 0 || (positive && value === 0) || value > DURATION_MAX_MS)
		throw invalid(
			field,
			`${field} is ${positive ? 'more than 0 and at most' : '0 to'} ${DURATION_RANGE}; got ${String(value)}`,
		);
	return value;
}

function checkDate(field: string, value: Date | undefined): Date | undefined {
	if (value !== undefined && (!(value instanceof Date) || Number.isNaN(value.getTime())))
		throw invalid(field, `${field} must be a valid Date; got ${String(value)}`);
	return value;
}

/** A start time: a valid Date within {@link DURATION_MAX_MS} of now, either side (the database's clock decides at the edge). */
function checkRunAt(value: Date | undefined): Date | undefined {
	const runAt = checkDate('runAt', value);
	if (runAt !== undefined && Math.abs(runAt.getTime() - Date.now()) > DURATION_MAX_MS)
		throw invalid('runAt', `runAt is a time within 3650 days of now; got ${runAt.toISOString()}`);
	return runAt;
}

export function checkTags(field: string, tags: readonly string[] | undefined): string[] | undefined {
	if (tags === undefined) return undefined;
	if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))
		throw invalid(field, `${field} must be an array of strings`);
	if (tags.length > TAGS_MAX) throw invalid(field, `at most ${TAGS_MAX} tags; got ${tags.length}`);
	const bad = tags.find((t) => t.length < 1 || t.length > TAG_MAX_LENGTH);
	if (bad !== undefined) throw invalid(field, `a tag is 1 to ${TAG_MAX_LENGTH} characters; got '${bad.slice(0, 100)}'`);
	checkStorableJson(field, tags);
	return [...tags];
}

function checkText(field: string, value: string | undefined, test: (v: string) => boolean, rule: string) {
	if (value !== undefined && (typeof value !== 'string' || !test(value)))
		throw invalid(field, `${field} ${rule}; got ${JSON.stringify(String(value).slice(0, 80))}`);
	if (value !== undefined) checkStorableJson(field, value);
	return value;
}

export const kindName = (kind: string | JobKind): string => (isJobKind(kind) ? kind.name : kind);

export function checkKind(kind: string | JobKind): string {
	const name = kindName(kind);
	if (typeof name !== 'string' || name === '') throw invalid('kind', 'kind is required');
	if (name.length > KIND_MAX) throw invalid('kind', `kind is at most ${KIND_MAX} characters; got ${name.length}`);
	checkText(
		'kind',
		name,
		(v) => KIND_PATTERN.test(v),
		'may use letters, digits and _ . : / - (starting with a letter or digit)',
	);
	return name;
}

// What PostgreSQL's jsonb cannot hold, found before the round trip: a NUL
// character (\u0000) or a lone UTF-16 surrogate in any key or string (22P05 /
// 22P02 from the database, naming nothing), and numbers JSON has no text for
// (NaN, ±Infinity, which JSON.stringify turns into null). One walk, used by
// every write of a JSON value the caller gives.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored as PostgreSQL text, or null. */
export function textProblem(text: string): string | null {
	if (text.includes('\u0000')) return 'holds a NUL character';
	if (LONE_SURROGATE.test(text)) return 'holds a lone UTF-16 surrogate';
	return null;
}

function problemIn(value: unknown, depth: number): string | null {
	if (typeof value === 'string') return textProblem(value);
	if (typeof value === 'number') return Number.isFinite(value) ? null : `holds ${String(value)}, which JSON cannot`;
	if (typeof value !== 'object' || value === null || depth > 100) return null;
	if (Array.isArray(value)) {
		for (const v of value) {
			const p = problemIn(v, depth + 1);
			if (p) return p;
		}
		return null;
	}
	for (const [k, v] of Object.entries(value)) {
		const p = textProblem(k) ?? problemIn(v, depth + 1);
		if (p) return p;
	}
	return null;
}

/**
 * Throws InvalidJobInputError naming `field` when `value` holds what jsonb cannot store.
 *
 * @example
 * checkStorableJson('metadata', { note: 'a\u0000b' }); // throws: metadata holds a NUL character
 */
export function checkStorableJson(field: string, value: unknown): void {
	const problem = problemIn(value, 0);
	if (problem) throw invalid(field, `${field} ${problem}: PostgreSQL cannot store it`);
}

/** A job's params as the kind checks them (a declared kind parses; a named one takes any JSON object). */
function paramsFor(kind: string | JobKind, params: unknown): JobParams | undefined {
	if (isJobKind(kind)) {
		const parsed = kind.parseParams(params ?? {});
		checkStorableJson('params', parsed);
		return parsed;
	}
	if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
		throw invalid('params', 'params must be a JSON object (put large input in payload)');
	checkStorableJson('params', params);
	return params as JobParams | undefined;
}

/** A payload as bytes (a string is UTF-8); anything else is no payload the API takes, refused before it is sent. */
function payloadBytes(payload: EnqueueInput['payload']): Uint8Array | null | undefined {
	if (typeof payload === 'string') return new TextEncoder().encode(payload);
	if (payload === undefined || payload === null || payload instanceof Uint8Array) return payload;
	const got = Array.isArray(payload) ? 'an array' : typeof payload;
	throw invalid('payload', `payload is bytes (a Uint8Array) or text, or null; got ${got}`);
}

/** run_at / delay: the database's clock counts a delay, so browsers with a wrong clock schedule right. */
export function checkStart(input: { runAt?: Date; delayMs?: number }): { runAt?: Date; delayMs?: number } {
	if (input.runAt !== undefined && input.delayMs !== undefined)
		throw invalid('runAt', 'give runAt or delayMs, not both');
	const delayMs = checkDuration('delayMs', input.delayMs);
	return { runAt: checkRunAt(input.runAt), delayMs };
}

/**
 * Milliseconds as a PostgreSQL interval literal, in plain decimal to the microsecond (the interval's resolution):
 * `${ms / 1000}` would write a tiny or huge number in exponent form ("5e-324 seconds"), which no interval parses.
 * Past ±1e12 s (31,000 years, beyond every range the SQL checks) it is held there, so the SQL refuses it naming the
 * field rather than failing to parse it.
 */
export function intervalText(ms: number): string {
	const s = Math.min(Math.max(ms / 1000, -1e12), 1e12);
	return `${s.toFixed(6).replace(/\.?0+$/, '')} seconds`;
}

/** The SQL arguments for a start: run_at as an ISO time, delay as an interval. */
export function startArgs(input: { runAt?: Date; delayMs?: number }): { run_at?: string; delay?: string } {
	const { runAt, delayMs } = checkStart(input);
	return {
		...(runAt !== undefined ? { run_at: runAt.toISOString() } : {}),
		...(delayMs !== undefined ? { delay: intervalText(delayMs) } : {}),
	};
}

/** An enqueue input with every option checked: what the three enqueue paths write. */
export interface CheckedEnqueue {
	params: JobParams | undefined;
	payload: Uint8Array | null | undefined;
	maxAttempts: number | undefined;
	locale: string | undefined;
	ownerId: string | undefined;
	runAt: Date | undefined;
	delayMs: number | undefined;
	tags: string[] | undefined;
	priority: number | undefined;
	expireAfterMs: number | undefined;
	concurrencyKey: string | undefined;
	expectedSeconds: number | undefined;
}

function checkFields(kind: string | JobKind, input: EnqueueInput<unknown> & ChildInput<unknown>): CheckedEnqueue {
	if (typeof input !== 'object' || input === null) throw invalid('input', 'each job is an object of options');
	const expected = input.expectedSeconds;
	if (expected !== undefined && !(Number.isFinite(expected) && expected > 0))
		throw invalid('expectedSeconds', `expectedSeconds must be a positive number; got ${String(expected)}`);
	checkDuration('idempotencyTtlMs', input.idempotencyTtlMs);
	const { runAt, delayMs } = checkStart(input);
	const start = { runAt, delayMs };
	checkText(
		'idempotencyKey',
		input.idempotencyKey,
		(v) => v.length >= 1 && v.length <= CONCURRENCY_KEY_MAX,
		`is 1 to ${CONCURRENCY_KEY_MAX} characters`,
	);
	return {
		params: paramsFor(kind, input.params),
		payload: payloadBytes(input.payload),
		maxAttempts: checkRange('maxAttempts', input.maxAttempts, 1, MAX_ATTEMPTS_MAX),
		locale: checkText('locale', input.locale, (v) => LOCALE_PATTERN.test(v), 'must be a language tag like en or pt-BR'),
		ownerId: checkText('ownerId', input.ownerId, (v) => UUID.test(v), 'must be a user id (a UUID)'),
		...start,
		tags: checkTags('tags', input.tags),
		priority: checkRange('priority', input.priority, PRIORITY_MIN, PRIORITY_MAX),
		expireAfterMs: checkDuration('expireAfterMs', input.expireAfterMs, true),
		concurrencyKey: checkText(
			'concurrencyKey',
			input.concurrencyKey,
			(v) => v.length >= 1 && v.length <= CONCURRENCY_KEY_MAX,
			`is 1 to ${CONCURRENCY_KEY_MAX} characters`,
		),
		expectedSeconds: expected,
	};
}

/**
 * Checks one job's options, every one and every range, the same for enqueue,
 * an item of enqueueMany (`prefix` `items[3].`) and enqueueChild. The error
 * names the field with the prefix and keeps that field's own sentence.
 */
export function checkEnqueue(
	kind: string | JobKind,
	input: EnqueueInput<unknown> & ChildInput<unknown>,
	prefix = '',
): CheckedEnqueue {
	try {
		return checkFields(kind, input);
	} catch (e) {
		if (!prefix || !(e instanceof InvalidJobInputError)) throw e;
		const field = `${prefix}${e.field ?? 'params'}`;
		throw new InvalidJobInputError(`${prefix.slice(0, -1)}: ${e.message}`, {
			field,
			details: `field=${field}`,
			hint: 'Nothing was written.',
			cause: e,
		});
	}
}

function checkStatuses(field: string, statuses: readonly string[] | undefined, allowed: readonly string[]) {
	if (statuses === undefined) return undefined;
	if (!Array.isArray(statuses) || statuses.length === 0 || statuses.some((v) => !allowed.includes(v)))
		throw invalid(field, `${field} are some of ${allowed.join(', ')}; got ${JSON.stringify(statuses)}`);
	return [...statuses];
}

function checkFilterObject(filter: unknown, method: string): void {
	if (typeof filter !== 'object' || filter === null) throw invalid('filter', `${method} takes a filter object`);
}

/** The SQL arguments of job_cancel_many, every filter checked (at least one given). */
export function cancelManyArgs(filter: CancelManyFilter) {
	checkFilterObject(filter, 'cancelMany');
	const createdAfter = checkDate('createdAfter', filter.createdAfter);
	const createdBefore = checkDate('createdBefore', filter.createdBefore);
	if (createdAfter && createdBefore && createdAfter.getTime() >= createdBefore.getTime())
		throw invalid('createdBefore', 'createdBefore must be later than createdAfter');
	const args = {
		kind: filter.kind === undefined ? undefined : checkKind(filter.kind),
		statuses: checkStatuses('statuses', filter.statuses, ['queued', 'running', 'waiting']),
		created_after: createdAfter?.toISOString(),
		created_before: createdBefore?.toISOString(),
		owner_id: checkText('ownerId', filter.ownerId, (v) => UUID.test(v), 'must be a user id (a UUID)'),
		reason: checkText('reason', filter.reason, () => true, 'must be a sentence'),
		limit: checkRange('limit', filter.limit, 1, LIST_MAX),
	};
	if (
		args.kind === undefined &&
		args.statuses === undefined &&
		args.created_after === undefined &&
		args.created_before === undefined &&
		args.owner_id === undefined
	)
		throw invalid(
			'kind',
			'name at least one of kind, statuses, createdAfter, createdBefore or ownerId: a bulk cancel never means every job',
		);
	return args;
}

/** The SQL arguments of job_delete_finished, every filter checked (endedBefore required). */
export function deleteFinishedArgs(filter: DeleteFinishedFilter) {
	checkFilterObject(filter, 'deleteFinished');
	const endedBefore = checkDate('endedBefore', filter.endedBefore);
	if (endedBefore === undefined)
		throw invalid('endedBefore', 'endedBefore is required: the jobs that finished before it are deleted');
	return {
		ended_before: endedBefore.toISOString(),
		kind: filter.kind === undefined ? undefined : checkKind(filter.kind),
		statuses: checkStatuses('statuses', filter.statuses, ['done', 'failed', 'cancelled']),
		limit: checkRange('limit', filter.limit, 1, BATCH_MAX),
	};
}

/** The SQL arguments of job_set_rate_limit: both null clears the limit. */
export function rateLimitArgs(limit: RateLimit | null): { starts: number | null; per_ms: number | null } {
	if (limit === null) return { starts: null, per_ms: null };
	if (typeof limit !== 'object') throw invalid('limit', 'a rate limit is { starts, perMs }, or null to remove it');
	if (limit.starts === undefined) throw invalid('starts', 'starts is required: how many jobs start per window');
	if (limit.perMs === undefined) throw invalid('perMs', 'perMs is required: the window, in milliseconds');
	return {
		starts: checkRange('starts', limit.starts, 1, RATE_STARTS_MAX)!,
		per_ms: checkRange('perMs', limit.perMs, RATE_PER_MS_MIN, RATE_PER_MS_MAX)!,
	};
}
