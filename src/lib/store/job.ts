/**
 * The job row as TypeScript sees it, and the one place raw rows become it:
 * zod at the boundary, snake_case -> camelCase, timestamps -> Date, payload ->
 * Uint8Array whichever adapter delivered it.
 */
import { z } from 'zod';
import { JobError } from '../errors.ts';
import { JOB_STATUSES, type JobStatusValue } from '../state.ts';
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import type { Database } from '../database.types.ts';
import type { RawRow } from './adapter.ts';

/**
 * The columns of a job row, as Supabase's generator read them from the
 * migrations: the parser below may only name these.
 */
type JobColumn = keyof Database['supabase_jobs']['Tables']['job']['Row'];

/**
 * A job's `params`: a small JSON object.
 */
export type JobParams = Record<string, unknown>;

/**
 * One job row (see docs/state-machine.md). `payload` is only ever present on
 * the row `claim` returns: get/list leave it null, and every terminal state drops it.
 */
export interface Job<P extends JobParams = JobParams> {
	id: string;
	isActive: boolean;
	createdAt: Date;
	updatedAt: Date;
	kind: string;
	status: JobStatusValue;
	params: P;
	payload: Uint8Array | null;
	resultId: string | null;
	/** Why it stopped, written for the user. */
	error: string | null;
	errorCode: string | null;
	attempts: number;
	maxAttempts: number;
	startedAt: Date | null;
	finishedAt: Date | null;
	/** Percent done, 0..100. */
	progress: number;
	stage: string | null;
	heartbeatAt: Date | null;
	/** The heartbeat interval (ms) the running attempt's worker declared at claim; null when none. */
	heartbeatMs: number | null;
	/**
	 * Set by `watch` only: the worker of this running job has missed two of the
	 * beats it declared, so it may be dead ("not responding; it will be
	 * retried"). False in every row read directly.
	 */
	workerSilent: boolean;
	ownerId: string | null;
	locale: string | null;
	availableAt: Date;
	timings: PhaseTimings | null;
	/** Labels chosen at enqueue. */
	tags: string[];
	/** The key of `enqueue({ idempotencyKey })`; null otherwise. */
	idempotencyKey: string | null;
	/** Claims take the highest first. */
	priority: number;
	/** A queued job not started by then expires (fails with error_code `expired`). */
	expiresAt: Date | null;
	/** Jobs of a kind sharing it run at most `maxRunningPerKey` at a time. */
	concurrencyKey: string | null;
	/** The job that enqueued this one ({@link JobStore.enqueueChild}); null for a job enqueued on its own. */
	parentId: string | null;
	/** What its kind's plan predicts, in seconds: its weight in its parent's progress. */
	expectedSeconds: number | null;
	/** When this parent last came back from `waiting` (its last child ended); null if it never waited. */
	resumedAt: Date | null;
	/**
	 * When the running attempt's worker expects it to end (the database's
	 * clock, from its phase plan); earlier than `updatedAt` means the current
	 * phase runs past its measured time. Null: no estimate.
	 */
	expectedEndAt: Date | null;
	/** The failed or cancelled job this one tries again ({@link JobStore.tryAgain}, {@link JobStore.replay}); null otherwise. */
	retryOf: string | null;
	/**
	 * What the handler said about the work so far (`ctx.setMetadata`), typed by
	 * its kind's `metadata` schema; null until first written.
	 */
	metadata: Record<string, unknown> | null;
	/**
	 * Failed with an error its kind declares permanent (`defineJobKind({ permanentErrors })`):
	 * trying again would fail the same way, so {@link JobStore.tryAgain} refuses it
	 * (`NotRetryableError`) and {@link JobStore.replay} skips it. False for every other row.
	 */
	failedForGood: boolean;
}

// One check, not a union of date and string: a union tries its branches in
// turn, and the one that fails builds its issues for every timestamp read.
/** A timestamp as the adapters deliver it (a Date, or text), or null when it is neither or not a time. */
function toDate(v: unknown): Date | null {
	const d = v instanceof Date ? v : typeof v === 'string' ? (postgresTime(v) ?? new Date(v)) : null;
	return d && !Number.isNaN(d.getTime()) ? d : null;
}

/** The value of the decimal digits of `v` from `at` to `end` (exclusive), or -1 when one is not a digit. */
function digits(v: string, at: number, end: number): number {
	let n = 0;
	for (let i = at; i < end; i++) {
		const d = v.charCodeAt(i) - 48;
		if (d < 0 || d > 9) return -1;
		n = n * 10 + d;
	}
	return n;
}

/**
 * A timestamptz as PostgreSQL renders it in JSON (`2026-12-02T00:28:29.123456+00:00`,
 * the fraction optional, or `Z`), read digit by digit: a
 * claimed row carries up to nine, and `new Date(text)` took ~40% longer.
 * Null for any other text (the caller then asks Date).
 */
function postgresTime(v: string): Date | null {
	const n = v.length;
	if (n < 20 || v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45 || v.charCodeAt(10) !== 84) return null;
	if (v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58) return null;
	const year = digits(v, 0, 4);
	const month = digits(v, 5, 7);
	const day = digits(v, 8, 10);
	const hour = digits(v, 11, 13);
	const minute = digits(v, 14, 16);
	const second = digits(v, 17, 19);
	// Date.UTC reads years 0-99 as 1900-1999: those (and days past the 28th) go to Date.
	if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23) return null;
	if (minute < 0 || minute > 59 || second < 0 || second > 59) return null;
	let i = 19;
	let ms = 0;
	if (v.charCodeAt(i) === 46) {
		const from = ++i;
		while (i < n && v.charCodeAt(i) >= 48 && v.charCodeAt(i) <= 57) i++;
		if (i === from) return null;
		// Milliseconds, truncated as Date truncates the microseconds.
		ms = digits(v, from, Math.min(i, from + 3)) * 10 ** Math.max(0, 3 - (i - from));
	}
	const sign = v.charCodeAt(i);
	let offset: number;
	if (sign === 90 && i + 1 === n)
		offset = 0; // Z
	else if ((sign === 43 || sign === 45) && i + 6 === n && v.charCodeAt(i + 3) === 58) {
		const oh = digits(v, i + 1, i + 3);
		const om = digits(v, i + 4, i + 6);
		if (oh < 0 || oh > 23 || om < 0 || om > 59) return null;
		offset = (sign === 43 ? 1 : -1) * (oh * 60 + om);
	} else return null;
	return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offset * 60_000);
}

/** @internal A timestamptz as either adapter or a broadcast delivers it (see {@link toDate}), as a Date. */
export const timestamp = z.unknown().transform((v, ctx) => {
	const d = toDate(v);
	if (d === null) {
		ctx.addIssue({ code: 'custom', message: `not a timestamp: ${String(v)}` });
		return z.NEVER;
	}
	return d;
});

const hexBytes = /^\\x([0-9a-fA-F]{2})*$/;

/** Bytes from postgres.js (a Buffer) or from PostgREST (`"\\x..."` hex), as a plain Uint8Array. */
const bytes = z
	.union([z.instanceof(Uint8Array), z.string().regex(hexBytes, 'bytea hex like \\x...')])
	.transform((v) => {
		if (typeof v !== 'string') return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
		const out = new Uint8Array((v.length - 2) / 2);
		for (let i = 0; i < out.length; i++) out[i] = parseInt(v.slice(2 + i * 2, 4 + i * 2), 16);
		return out;
	});

/**
 * Reads a `timings` value leniently: an entry another tool wrote badly is
 * skipped rather than making the whole job unreadable. Null when not an object.
 *
 * @internal
 * @example
 * ```ts
 * readTimings({ table: { seconds: 3, size: null }, junk: 1 }); // { table: { seconds: 3, size: null } }
 * ```
 */
export function readTimings(raw: unknown): PhaseTimings | null {
	if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
	const out: PhaseTimings = {};
	for (const [phase, t] of Object.entries(raw as Record<string, unknown>)) {
		if (typeof t !== 'object' || t === null) continue;
		const { seconds, size, start } = t as Record<string, unknown>;
		if (typeof seconds !== 'number' || !Number.isFinite(seconds)) continue;
		out[phase] = {
			seconds,
			size: typeof size === 'number' ? size : null,
			...(typeof start === 'number' ? { start } : {}),
		};
	}
	return out;
}

const timings = z.record(z.string(), z.unknown()).transform((raw) => readTimings(raw) ?? {});

/**
 * The zod schema of a raw job row (snake_case, as either adapter delivers it)
 * producing a {@link Job}.
 *
 * @example
 * ```ts
 * const job = jobRowSchema.parse({ id, status: 'queued', ... });
 * ```
 */
export const jobRowSchema = z
	.object({
		id: z.string(),
		is_active: z.boolean(),
		created_at: timestamp,
		updated_at: timestamp,
		kind: z.string(),
		status: z.enum(JOB_STATUSES),
		params: z.record(z.string(), z.unknown()),
		payload: bytes.nullable().optional(),
		result_id: z.string().nullable(),
		error: z.string().nullable(),
		error_code: z.string().nullable(),
		attempts: z.number().int(),
		max_attempts: z.number().int(),
		started_at: timestamp.nullable(),
		finished_at: timestamp.nullable(),
		progress: z.number(),
		stage: z.string().nullable(),
		heartbeat_at: timestamp.nullable(),
		// Absent from rows of job tables migrated before the liveness contract.
		heartbeat_ms: z.number().int().nullable().default(null),
		owner_id: z.string().nullable(),
		locale: z.string().nullable(),
		available_at: timestamp,
		timings: timings.nullable(),
		// Absent from rows of job tables migrated before tags and keys.
		tags: z.array(z.string()).default([]),
		idempotency_key: z.string().nullable().default(null),
		priority: z.number().int().default(0),
		expires_at: timestamp.nullable().default(null),
		concurrency_key: z.string().nullable().default(null),
		// Absent from rows of job tables migrated before parent and child jobs.
		parent_id: z.string().nullable().default(null),
		expected_seconds: z.number().nullable().default(null),
		resumed_at: timestamp.nullable().default(null),
		// Absent from rows of job tables migrated before the worker's estimate.
		expected_end_at: timestamp.nullable().default(null),
		// Absent from rows of job tables migrated before try again.
		retry_of: z.string().nullable().default(null),
		// Absent from rows of job tables migrated before typed metadata.
		metadata: z.record(z.string(), z.unknown()).nullable().default(null),
		// Absent from rows of job tables migrated before permanent failures, and from Realtime messages.
		failed_for_good: z.boolean().default(false),
	} satisfies { [C in JobColumn]?: z.ZodType })
	.transform((r): Job => ({
		id: r.id,
		isActive: r.is_active,
		createdAt: r.created_at,
		updatedAt: r.updated_at,
		kind: r.kind,
		status: r.status,
		params: r.params,
		payload: r.payload ?? null,
		resultId: r.result_id,
		error: r.error,
		errorCode: r.error_code,
		attempts: r.attempts,
		maxAttempts: r.max_attempts,
		startedAt: r.started_at,
		finishedAt: r.finished_at,
		progress: r.progress,
		stage: r.stage,
		heartbeatAt: r.heartbeat_at,
		heartbeatMs: r.heartbeat_ms,
		workerSilent: false,
		ownerId: r.owner_id,
		locale: r.locale,
		availableAt: r.available_at,
		timings: r.timings,
		tags: r.tags,
		idempotencyKey: r.idempotency_key,
		priority: r.priority,
		expiresAt: r.expires_at,
		concurrencyKey: r.concurrency_key,
		parentId: r.parent_id,
		expectedSeconds: r.expected_seconds,
		resumedAt: r.resumed_at,
		expectedEndAt: r.expected_end_at,
		retryOf: r.retry_of,
		metadata: r.metadata,
		failedForGood: r.failed_for_good,
	}));

/**
 * A row the database sent that is not a job row: the migrations and this
 * package are out of step. Not something a caller handles; it is reported.
 *
 * @example
 * ```ts
 * if (isJobError(e) && e.code === 'unexpected_row') console.error('run the supabase-jobs migrations');
 * ```
 */
export class UnexpectedRowError extends JobError {
	/** The job whose row could not be read, when the row named one; a listing skips that row and reports this error. */
	readonly jobId: string | null;

	constructor(message: string, options?: { cause?: unknown; details?: string | null; jobId?: string | null }) {
		super('unexpected_row', message, {
			cause: options?.cause,
			details: options?.details,
			hint: 'Are the supabase-jobs migrations up to date with the package?',
		});
		this.name = 'UnexpectedRowError';
		this.jobId = options?.jobId ?? null;
	}
}

// The common case of jobRowSchema without zod: a row as the adapters deliver
// it (timestamps as text or Dates, bytes as a Buffer, JSON already parsed),
// read with typeof checks. Anything else (bytea as PostgREST's hex text, a
// column of the wrong type or missing) returns null
// and takes jobRowSchema, which reads it or names what is wrong. Parsing each
// claimed row with zod was a good share of the Node runner's CPU per job.
const STATUSES: ReadonlySet<unknown> = new Set(JOB_STATUSES);
/** Thrown by the readers below at the first field that is not what a job row holds; caught by readJobRow. */
const BAD = Symbol('bad');
const bad = (): never => {
	throw BAD;
};
const str = (v: unknown): string => (typeof v === 'string' ? v : bad());
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : str(v));
const int = (v: unknown): number => (Number.isSafeInteger(v) ? (v as number) : bad());
const num = (v: unknown): number => (Number.isFinite(v) ? (v as number) : bad());
const bool = (v: unknown): boolean => (typeof v === 'boolean' ? v : bad());
const date = (v: unknown): Date => toDate(v) ?? bad();
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
/** A column every job row has (null allowed): missing, the row is not one. */
const column = (v: unknown): unknown => (v === undefined ? bad() : v);
const isRecord = (v: unknown): v is Record<string, unknown> => {
	if (typeof v !== 'object' || v === null) return false;
	const proto: unknown = Object.getPrototypeOf(v);
	return proto === Object.prototype || proto === null;
};

function readJobRow(r: RawRow): Job | null {
	const payload = r.payload;
	const timings = r.timings;
	const tags = r.tags === undefined ? [] : r.tags;
	const metadata = r.metadata ?? null;
	if (
		!STATUSES.has(r.status) ||
		typeof r.is_active !== 'boolean' ||
		!isRecord(r.params) ||
		!(payload === null || payload === undefined || payload instanceof Uint8Array) ||
		!(timings === null || isRecord(timings)) ||
		!(Array.isArray(tags) && allStrings(tags)) ||
		!(metadata === null || isRecord(metadata))
	)
		return null;
	// Each field read once, in the object it lands in; a reader throws BAD at a field that is not
	// what a job row holds (rare: the row then takes jobRowSchema, which names it).
	try {
		return {
			id: str(r.id),
			isActive: r.is_active,
			createdAt: date(r.created_at),
			updatedAt: date(r.updated_at),
			kind: str(r.kind),
			status: r.status as JobStatusValue,
			params: r.params,
			payload: payload ? new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength) : null,
			resultId: strOrNull(column(r.result_id)),
			error: strOrNull(column(r.error)),
			errorCode: strOrNull(column(r.error_code)),
			attempts: int(r.attempts),
			maxAttempts: int(r.max_attempts),
			startedAt: dateOrNull(column(r.started_at)),
			finishedAt: dateOrNull(column(r.finished_at)),
			progress: num(r.progress),
			stage: strOrNull(column(r.stage)),
			heartbeatAt: dateOrNull(column(r.heartbeat_at)),
			heartbeatMs: r.heartbeat_ms === null || r.heartbeat_ms === undefined ? null : int(r.heartbeat_ms),
			workerSilent: false,
			ownerId: strOrNull(column(r.owner_id)),
			locale: strOrNull(column(r.locale)),
			availableAt: date(r.available_at),
			timings: timings === null ? null : (readTimings(timings) ?? {}),
			tags: tags as string[],
			idempotencyKey: strOrNull(r.idempotency_key),
			priority: r.priority === undefined ? 0 : int(r.priority),
			expiresAt: dateOrNull(r.expires_at),
			concurrencyKey: strOrNull(r.concurrency_key),
			parentId: strOrNull(r.parent_id),
			expectedSeconds: r.expected_seconds === null || r.expected_seconds === undefined ? null : num(r.expected_seconds),
			resumedAt: dateOrNull(r.resumed_at),
			expectedEndAt: dateOrNull(r.expected_end_at),
			retryOf: strOrNull(r.retry_of),
			metadata,
			failedForGood: r.failed_for_good === undefined ? false : bool(r.failed_for_good),
		};
	} catch (e) {
		if (e === BAD) return null;
		throw e;
	}
}

function allStrings(items: unknown[]): boolean {
	for (const item of items) if (typeof item !== 'string') return false;
	return true;
}

/**
 * Parses one raw row into a {@link Job}, or throws {@link UnexpectedRowError}.
 *
 * @example
 * ```ts
 * const job = parseJobRow(rows[0]);
 * ```
 */
export function parseJobRow<P extends JobParams = JobParams>(raw: RawRow): Job<P> {
	const fast = readJobRow(raw);
	if (fast) return fast as Job<P>;
	const parsed = jobRowSchema.safeParse(raw);
	if (!parsed.success) {
		const jobId = typeof raw.id === 'string' ? raw.id : null;
		throw new UnexpectedRowError(
			`the database returned a job row this package cannot read${jobId ? ` (job ${jobId})` : ''}: ${z.prettifyError(parsed.error)}`,
			{ cause: parsed.error, jobId },
		);
	}
	return parsed.data as Job<P>;
}

/**
 * The exact `created_at` of a raw row as a keyset cursor part. Kept from the
 * raw text because a Date drops microseconds, and a cursor rounded to the
 * millisecond would skip rows created in the same millisecond.
 *
 * @internal
 * @example
 * ```ts
 * cursorOf(rows.at(-1)); // '2026-11-30T14:00:00.123456+00:00~2b0c...'
 * ```
 */
export function cursorOf(raw: RawRow): string {
	const created = raw.created_at;
	const text = created instanceof Date ? created.toISOString() : String(created);
	return `${text}~${String(raw.id)}`;
}
