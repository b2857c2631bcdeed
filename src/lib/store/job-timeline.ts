/**
 * A job's timeline: its transitions and its worker's log lines, as
 * job_timeline returns them (supabase/schemas/18_timeline.sql), and the
 * worker's log writes (job_log): one check of a line, one write path.
 */
import { LOG_FIELDS_MAX_BYTES, LOG_LINES_MAX, LOG_MESSAGE_MAX } from '../internal/limits.ts';
import type { RawRow } from './adapter.ts';
import { checkStorableJson, INT4_MAX, invalid, isJobId, notFound } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import { UnexpectedRowError, type Job } from './job.ts';

/** The levels of a worker's log line, least to most severe. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A log line as a worker hands it to the store. */
export interface LogLine {
	level: LogLevel;
	message: string;
	/** Small structured detail (at most 4 KiB as JSON). */
	fields?: Record<string, unknown> | null;
	/** Shown to the job's owner too (admins read every line). */
	userFacing?: boolean;
	/** When it was logged; the store's call time when left out. */
	at?: Date;
}

/**
 * What happened to a job at one point:
 * - `source: 'transition'`: `event` is `queued`, `claimed`, `retried`,
 *   `reclaimed`, `released`, `waiting`, `resumed`, `done`, `failed` or
 *   `cancelled`;
 * - `source: 'log'`: a worker's line; `event` is its level.
 */
export interface JobTimelineEntry {
	at: Date;
	source: 'transition' | 'log';
	event: string;
	/** The attempt it belongs to (0 before the first claim). */
	attempt: number;
	/** The log line, or why the transition happened (the error sentence, the cancel reason). */
	message: string | null;
	/** A log line's fields; a transition's `error_code` and the `progress` its attempt reached. */
	fields: Record<string, unknown> | null;
	/** Who made the change, where known: a user id, or the database role (`service_role` for workers). */
	actor: string | null;
	/** A log line the owner may read. */
	userFacing: boolean;
}

const textOrNull = (v: unknown) => (v === null || v === undefined ? null : String(v));

function parseEntry(row: RawRow): JobTimelineEntry {
	const at = new Date(row.at as string);
	if (Number.isNaN(at.getTime())) throw new UnexpectedRowError(`job_timeline returned the time ${String(row.at)}`);
	const fields = row.fields;
	return {
		at,
		source: row.source === 'log' ? 'log' : 'transition',
		event: String(row.event),
		attempt: Number(row.attempt),
		message: textOrNull(row.message),
		fields: fields && typeof fields === 'object' ? (fields as Record<string, unknown>) : null,
		actor: textOrNull(row.actor),
		userFacing: row.user_facing === true,
	};
}

/** The timeline as the caller may read it: everything for an admin or a worker, the user-facing lines for the owner, nothing for anyone else. */
export async function readTimeline<R extends Job>(calls: JobCalls<R>, id: string): Promise<JobTimelineEntry[]> {
	if (!isJobId(id)) throw notFound(id);
	return (await calls.rows('job_timeline', { id })).map(parseEntry);
}

const encoder = new TextEncoder();

/**
 * Checks one line as job_log would; throws {@link InvalidJobInputError}
 * naming the field (`level`, `message`, `fields`, `userFacing`), prefixed by
 * `prefix` when given (`lines[2].`).
 */
export function checkLogLine(line: LogLine, prefix = ''): void {
	if (typeof line !== 'object' || line === null || Array.isArray(line))
		throw invalid(prefix ? prefix.slice(0, -1) : 'line', 'a log line is an object { level, message, fields?, at? }');
	if (!(LOG_LEVELS as readonly string[]).includes(line.level))
		throw invalid(`${prefix}level`, `level is one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(line.level)}`);
	if (typeof line.message !== 'string')
		throw invalid(`${prefix}message`, `message must be a string; got ${typeof line.message}`);
	checkStorableJson(`${prefix}message`, line.message);
	if (line.message.length > LOG_MESSAGE_MAX)
		throw invalid(`${prefix}message`, `message is at most ${LOG_MESSAGE_MAX} characters; got ${line.message.length}`);
	const { fields } = line;
	if (fields !== undefined && fields !== null) {
		if (typeof fields !== 'object' || Array.isArray(fields))
			throw invalid(`${prefix}fields`, 'fields must be a plain object of JSON values');
		checkStorableJson(`${prefix}fields`, fields);
		let text: string;
		try {
			text = JSON.stringify(fields);
		} catch (e) {
			throw invalid(`${prefix}fields`, `fields must be JSON: ${(e as Error).message}`);
		}
		if (encoder.encode(text).byteLength > LOG_FIELDS_MAX_BYTES)
			throw invalid(`${prefix}fields`, `fields are at most ${LOG_FIELDS_MAX_BYTES} bytes as JSON`);
	}
	if (line.userFacing !== undefined && typeof line.userFacing !== 'boolean')
		throw invalid(`${prefix}userFacing`, `userFacing must be a boolean; got ${typeof line.userFacing}`);
	if (line.at !== undefined && !(line.at instanceof Date && !Number.isNaN(line.at.getTime())))
		throw invalid(`${prefix}at`, 'at must be a valid Date');
}

/**
 * Writes a worker's lines for the attempt that holds the job (the store's
 * claimed attempt unless given). `dropped`: lines the worker already dropped
 * past the bound, counted in the marker line. Resolves to the lines stored.
 */
export async function writeLog<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	lines: readonly LogLine[],
	options: { attempt?: number; dropped?: number },
): Promise<number> {
	if (!isJobId(id)) throw notFound(id);
	if (!Array.isArray(lines)) throw invalid('lines', `lines is an array of log lines; got ${typeof lines}`);
	if (lines.length > LOG_LINES_MAX) throw invalid('lines', `at most ${LOG_LINES_MAX} lines per call`);
	lines.forEach((line, i) => checkLogLine(line, `lines[${i}].`));
	const dropped = options.dropped ?? 0;
	if (!(Number.isInteger(dropped) && dropped >= 0))
		throw invalid('dropped', `dropped is a count of lines, zero or more; got ${String(dropped)}`);
	const stored = await calls.call('job_log', {
		id,
		attempt: options.attempt,
		// The count saturates, as the database's does: past the largest integer it says "that many or more".
		dropped: Math.min(dropped, INT4_MAX),
		lines: lines.map((l) => ({
			level: l.level,
			message: l.message,
			fields: l.fields ?? null,
			user_facing: l.userFacing ?? false,
			...(l.at ? { at: l.at.toISOString() } : {}),
		})),
	});
	return Number(stored);
}
