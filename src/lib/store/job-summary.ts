/**
 * The part of a job row that Realtime carries: what send_job_messages
 * (supabase/schemas/09_realtime.sql) sends on `jobs:<owner_id>` or
 * `job:<id>`. Never params or payload.
 */
import { z } from 'zod';
import { JOB_STATUSES, type JobStatusValue } from '../state.ts';
import type { RawRow } from './adapter.ts';
import { timestamp, type Job } from './job.ts';

/**
 * A job as a list or a progress bar shows it: the columns a broadcast carries.
 * A full {@link Job} has every one of these fields, so it can stand in for a
 * summary, and a summary is what the Svelte layer's `JobSnapshot` needs.
 */
export interface JobSummary {
	id: string;
	kind: string;
	status: JobStatusValue;
	/** Percent done, 0..100. */
	progress: number;
	stage: string | null;
	error: string | null;
	errorCode: string | null;
	resultId: string | null;
	attempts: number;
	maxAttempts: number;
	createdAt: Date;
	updatedAt: Date;
	startedAt: Date | null;
	finishedAt: Date | null;
	locale: string | null;
	ownerId: string | null;
	/** The heartbeat interval the running attempt's worker declared at claim; null when none. */
	heartbeatMs: number | null;
	/** Not claimable before this: a queued job in the future is scheduled. */
	availableAt: Date;
	tags: string[];
	/** When the running attempt's worker expects it to end (see {@link Job.expectedEndAt}). */
	expectedEndAt: Date | null;
	/** What the handler said about the work so far (see {@link Job.metadata}); null until written. */
	metadata: Record<string, unknown> | null;
}

/** The fields of a {@link Job} a broadcast refreshes; the rest keep the value of the last full read. */
export const SUMMARY_FIELDS = [
	'id',
	'kind',
	'status',
	'progress',
	'stage',
	'error',
	'errorCode',
	'resultId',
	'attempts',
	'maxAttempts',
	'createdAt',
	'updatedAt',
	'startedAt',
	'finishedAt',
	'locale',
	'ownerId',
	'heartbeatMs',
	'availableAt',
	'tags',
	'expectedEndAt',
	'metadata',
] as const satisfies readonly (keyof Job & keyof JobSummary)[];

const summarySchema = z
	.object({
		id: z.string(),
		kind: z.string(),
		status: z.enum(JOB_STATUSES),
		progress: z.number(),
		stage: z.string().nullable(),
		error: z.string().nullable(),
		error_code: z.string().nullable(),
		result_id: z.string().nullable(),
		attempts: z.number().int(),
		max_attempts: z.number().int(),
		created_at: timestamp,
		updated_at: timestamp,
		started_at: timestamp.nullable(),
		finished_at: timestamp.nullable(),
		locale: z.string().nullable(),
		owner_id: z.string().nullable(),
		// Absent from messages written before the liveness contract migration.
		heartbeat_ms: z.number().int().nullable().default(null),
		available_at: timestamp,
		tags: z.array(z.string()).default([]),
		// Absent from messages written before the worker's estimate.
		expected_end_at: timestamp.nullable().default(null),
		// Sent once written: absent means none yet.
		metadata: z.record(z.string(), z.unknown()).nullable().default(null),
		job_table: z.string(),
	})
	.transform((r) => ({
		jobTable: r.job_table,
		job: {
			id: r.id,
			kind: r.kind,
			status: r.status,
			progress: r.progress,
			stage: r.stage,
			error: r.error,
			errorCode: r.error_code,
			resultId: r.result_id,
			attempts: r.attempts,
			maxAttempts: r.max_attempts,
			createdAt: r.created_at,
			updatedAt: r.updated_at,
			startedAt: r.started_at,
			finishedAt: r.finished_at,
			locale: r.locale,
			ownerId: r.owner_id,
			heartbeatMs: r.heartbeat_ms,
			availableAt: r.available_at,
			tags: r.tags,
			expectedEndAt: r.expected_end_at,
			metadata: r.metadata,
		} satisfies JobSummary,
	}));

/**
 * Reads one broadcast message; null when it is not a job change this package
 * understands (a message is never worth failing a screen over: the next read
 * brings the truth).
 *
 * @internal
 * @example
 * ```ts
 * const m = parseJobBroadcast(raw);
 * if (m && m.jobTable === 'jobs') render(m.job);
 * ```
 */
export function parseJobBroadcast(raw: RawRow): { jobTable: string; job: JobSummary } | null {
	const parsed = summarySchema.safeParse(raw);
	return parsed.success ? parsed.data : null;
}

/**
 * How the broadcast trigger names a job table: `jobs` for `public.jobs`,
 * `<schema>.<name>` otherwise (the same label the job_* functions take).
 *
 * @internal
 * @example
 * ```ts
 * tableLabel('public.jobs'); // 'jobs'
 * ```
 */
export function tableLabel(table: string): string {
	const unquoted = table.replaceAll('"', '');
	return unquoted.startsWith('public.') ? unquoted.slice('public.'.length) : unquoted;
}

/**
 * A full row refreshed with a broadcast's fields. Fields a broadcast does not
 * carry (params, timings, heartbeat...) keep the value of the last full read.
 *
 * @internal
 * @example
 * ```ts
 * last = withSummary(last, message.job);
 * ```
 */
export function withSummary<R extends Job>(row: R, summary: JobSummary): R {
	const next = { ...row };
	for (const field of SUMMARY_FIELDS) (next as Record<string, unknown>)[field] = summary[field];
	return next;
}
