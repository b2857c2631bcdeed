/**
 * Asking the owner mid-job and trying a job again: the calls behind
 * `ctx.ask` (job_ask), the screen's question and answer (job_open_question,
 * job_answer), try again (job_try_again) and the admins' replay
 * (job_replay). An answer is checked twice: here with zod (the caller's
 * schema, else the open question's read back), naming the field, and in SQL
 * against the question's JSON Schema, whoever sends it. Only zod checks a
 * `pattern` (a JavaScript regular expression) and `format: email`.
 */
import { z } from 'zod';
import { UnexpectedRowError, type Job } from './job.ts';
import type { RawRow } from './adapter.ts';
import type { JobCalls } from './job-calls.ts';
import { checkInt, checkStorableJson, intervalText, invalid, isJobId, kindName, notFound } from './input-checks.ts';
import type { InvalidJobInputError } from '../errors.ts';
import type { JobKind } from './job-kind.ts';
import { BATCH_MAX } from '../internal/limits.ts';

/** A JSON Schema object, as `z.toJSONSchema` writes it. */
export type AnswerSchema = Record<string, unknown>;

/**
 * The open question of a waiting job, as its owner (or an admin) reads it.
 */
export interface AskedQuestion {
	jobId: string;
	/** Names the question within its job (`ask-1`, ... unless the handler named it). */
	key: string;
	/** What the person is asked, in their language. */
	prompt: string;
	/** The JSON Schema an answer must satisfy (JobQuestion lays the field out from it: an enum is a choice, a number a number field, ...). */
	schema: AnswerSchema;
	askedAt: Date;
	/** Unanswered by then, the job fails (`error_code` `question_unanswered`). */
	expiresAt: Date;
}

/**
 * What a worker asks through {@link JobStore.ask} (handlers call `ctx.ask`).
 */
export interface AskInput {
	/** Names the question within the job: the same key on a later run returns the stored answer. */
	key: string;
	/** The question, in the job's language (1..2000 characters). */
	prompt: string;
	/** The JSON Schema of the answer. */
	schema: AnswerSchema;
	/** How long the owner has to answer. @default 86_400_000 (a day); at most 30 days */
	timeoutMs?: number;
	/** The attempt asking: refused when another attempt owns the job. */
	attempt?: number;
}

/**
 * What {@link JobStore.ask} found: the stored answer, or the job now waits for one.
 */
export type AskResult = { answered: true; answer: unknown } | { answered: false; expiresAt: Date };

/**
 * Options of {@link JobStore.answer}.
 */
export interface AnswerOptions {
	/** Which question, when the handler named it; the open one otherwise. */
	key?: string;
	/**
	 * A zod schema to check the answer with before it is sent. Without it the
	 * open question's schema is read and checked (one more read); the database
	 * checks the JSON Schema anyway, all of it but `pattern` and `format: email`.
	 */
	schema?: z.ZodType;
}

/**
 * Which failed jobs {@link JobStore.replay} tries again: every filter given
 * must match; `from`/`to` bound when they ended (`from` included, `to` not).
 */
export interface ReplayFilter {
	kind?: string | JobKind;
	errorCode?: string;
	from?: Date;
	to?: Date;
}

const MAX_TIMEOUT_MS = 30 * 86_400_000;

/**
 * The first way `value` does not fit `schema`, as {@link InvalidJobInputError}
 * naming the field (`answer`, `answer.language`, `answer.items[0]`); null when it fits.
 *
 * @internal
 * @example
 * ```ts
 * answerProblem(z.enum(['en', 'pt-BR']), 'fr')?.field; // 'answer'
 * ```
 */
export function answerProblem(schema: z.ZodType, value: unknown): InvalidJobInputError | null {
	const parsed = schema.safeParse(value);
	if (parsed.success) return null;
	const issue = parsed.error.issues[0]!;
	// A key the schema does not take is named itself (answer.colour), as SQL names it.
	const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
	const field = path.reduce<string>(
		(at, part) => (typeof part === 'number' ? `${at}[${part}]` : `${at}.${String(part)}`),
		'answer',
	);
	return invalid(field, `${field}: ${issue.message}`);
}

/**
 * A zod schema read back from a question's JSON Schema, so a screen checks an
 * answer as the handler's schema would (for the shapes JSON Schema carries).
 *
 * @internal
 * @example
 * ```ts
 * answerProblem(schemaOfQuestion(question), value);
 * ```
 */
export function schemaOfQuestion(question: Pick<AskedQuestion, 'schema'>): z.ZodType {
	return z.fromJSONSchema(question.schema as Parameters<typeof z.fromJSONSchema>[0]);
}

const questionRow = z.object({
	job_id: z.string(),
	key: z.string(),
	prompt: z.string(),
	answer_schema: z.record(z.string(), z.unknown()),
	asked_at: z.union([z.string(), z.date()]).transform((v) => new Date(v)),
	expires_at: z.union([z.string(), z.date()]).transform((v) => new Date(v)),
});

export async function ask<R extends Job>(calls: JobCalls<R>, id: string, input: AskInput): Promise<AskResult> {
	if (!isJobId(id)) throw notFound(id);
	if (typeof input.key !== 'string' || input.key.length < 1 || input.key.length > 100)
		throw invalid('key', 'key names the question within its job: 1 to 100 characters');
	if (typeof input.prompt !== 'string' || input.prompt.trim() === '' || input.prompt.length > 2000)
		throw invalid('prompt', 'prompt is the question for the user: 1 to 2000 characters');
	const timeoutMs = input.timeoutMs ?? 86_400_000;
	if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS))
		throw invalid('timeoutMs', `timeoutMs is more than 0 and at most 30 days; got ${String(input.timeoutMs)}`);
	const value = (await calls.call('job_ask', {
		id,
		key: input.key,
		prompt: input.prompt,
		answer_schema: input.schema,
		timeout: intervalText(timeoutMs),
		attempt: checkInt('attempt', input.attempt),
	})) as { answered?: unknown; answer?: unknown; expires_at?: unknown } | null;
	if (value?.answered === true) return { answered: true, answer: value.answer };
	if (value?.answered === false) return { answered: false, expiresAt: new Date(String(value.expires_at)) };
	throw new UnexpectedRowError(`job_ask returned ${JSON.stringify(value)}`);
}

export async function openQuestion<R extends Job>(calls: JobCalls<R>, id: string): Promise<AskedQuestion | null> {
	if (!isJobId(id)) throw notFound(id);
	const rows = (await calls.call('job_open_question', { id })) as RawRow[];
	const row = rows[0];
	if (!row) return null;
	const parsed = questionRow.safeParse(row);
	if (!parsed.success) throw new UnexpectedRowError(`job_open_question returned ${z.prettifyError(parsed.error)}`);
	const r = parsed.data;
	return {
		jobId: r.job_id,
		key: r.key,
		prompt: r.prompt,
		schema: r.answer_schema,
		askedAt: r.asked_at,
		expiresAt: r.expires_at,
	};
}

export async function answer<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	value: unknown,
	options: AnswerOptions = {},
): Promise<R> {
	if (!isJobId(id)) throw notFound(id);
	if (value === undefined) throw invalid('answer', 'answer is required');
	checkStorableJson('answer', value);
	const problem = answerProblem(options.schema ?? (await questionSchema(calls, id, options.key)), value);
	if (problem) throw problem;
	return await calls.one('job_answer', { id, answer: value as never, key: options.key });
}

/**
 * The zod schema of the question `answer` would answer, read back from its
 * JSON Schema: what SQL does not check (a `pattern`, `format: email`) is
 * refused here, before the call. Accepts anything when no question the caller
 * may see is open under `key`, or its schema is not one zod reads back (the
 * database's answer decides then).
 */
async function questionSchema<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	key: string | undefined,
): Promise<z.ZodType> {
	const question = await openQuestion(calls, id);
	if (!question || (key !== undefined && key !== question.key)) return z.unknown();
	try {
		return schemaOfQuestion(question);
	} catch {
		return z.unknown();
	}
}

export async function tryAgain<R extends Job>(calls: JobCalls<R>, id: string): Promise<R> {
	if (!isJobId(id)) throw notFound(id);
	return await calls.one('job_try_again', { id });
}

export async function replay<R extends Job>(calls: JobCalls<R>, filter: ReplayFilter = {}): Promise<R[]> {
	const when = (field: string, d: Date | undefined) => {
		if (d === undefined) return undefined;
		if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw invalid(field, `${field} must be a valid Date`);
		return d.toISOString();
	};
	const from = when('from', filter.from);
	const to = when('to', filter.to);
	if (filter.from && filter.to && filter.from >= filter.to) throw invalid('to', 'to must come after from');
	const args = {
		kind: filter.kind === undefined ? undefined : kindName(filter.kind),
		error_code: filter.errorCode,
		ended_from: from,
		ended_to: to,
	};
	if (calls.adapter.maxRows === undefined) return await calls.many('job_replay', args);
	// Over PostgREST a reply carries at most max_rows jobs: the oldest `per` are tried again
	// per call, until a call tries fewer. The first call refuses more than BATCH_MAX matching,
	// so BATCH_MAX bounds the loop even if a job tried again fails again meanwhile.
	const per = Math.min(calls.adapter.maxRows, BATCH_MAX);
	const jobs: R[] = [];
	let tried = 0;
	for (;;) {
		const rows = await calls.rows('job_replay', { ...args, limit: per });
		jobs.push(...calls.readable(rows));
		tried += rows.length;
		if (rows.length < per || tried >= BATCH_MAX) return jobs;
	}
}
