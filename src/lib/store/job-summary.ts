/**
 * The part of a job row that Realtime carries: what the view job_messages
 * (supabase/schemas/09_realtime.sql) builds, sent on `jobs:<owner_id>` or
 * `job:<id>`. Never params or payload. A message is a full snapshot of these
 * columns: a key it leaves out is null (tags: none), never "unchanged"; the
 * owner is not in it but in its topic.
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
	/** The topic's owner (`jobs:<owner>`); null for a job sent on `job:<id>`. */
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
	/** Failed with an error its kind declares permanent: trying again would fail the same way (see {@link Job.failedForGood}). */
	failedForGood: boolean;
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
	'ownerId',
	'heartbeatMs',
	'availableAt',
	'tags',
	'expectedEndAt',
	'metadata',
	'failedForGood',
] as const satisfies readonly (keyof Job & keyof JobSummary)[];

/** A key a message leaves out when its column is null. */
const unlessNull = <T extends z.ZodType>(schema: T) => schema.nullable().default(null);

const summarySchema = z.object({
	id: z.string(),
	kind: z.string(),
	status: z.enum(JOB_STATUSES),
	progress: z.number(),
	attempts: z.number().int(),
	max_attempts: z.number().int(),
	job_table: z.string(),
	created_at: timestamp,
	updated_at: timestamp,
	available_at: timestamp,
	stage: unlessNull(z.string()),
	error: unlessNull(z.string()),
	error_code: unlessNull(z.string()),
	result_id: unlessNull(z.string()),
	started_at: unlessNull(timestamp),
	finished_at: unlessNull(timestamp),
	heartbeat_ms: unlessNull(z.number().int()),
	expected_end_at: unlessNull(timestamp),
	tags: z.array(z.string()).default([]),
	metadata: unlessNull(z.record(z.string(), z.unknown())),
	failed_for_good: z.boolean().default(false),
});

/** The owner a topic names: `jobs:<owner>` carries only that owner's jobs, `job:<id>` only ownerless ones; undefined for any other topic. */
function ownerOfTopic(topic: string): string | null | undefined {
	if (topic.startsWith('jobs:')) return topic.slice('jobs:'.length);
	return topic.startsWith('job:') ? null : undefined;
}

/**
 * Reads one broadcast message heard on `topic`; null when it is not a job
 * change this package understands (a message is never worth failing a screen
 * over: the next read brings the truth).
 *
 * @internal
 * @example
 * ```ts
 * const m = parseJobBroadcast(raw, `jobs:${uid}`);
 * if (m && m.jobTable === 'jobs') render(m.job);
 * ```
 */
export function parseJobBroadcast(raw: RawRow, topic: string): { jobTable: string; job: JobSummary } | null {
	const ownerId = ownerOfTopic(topic);
	const parsed = summarySchema.safeParse(raw);
	if (ownerId === undefined || !parsed.success) return null;
	const r = parsed.data;
	return {
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
			ownerId,
			heartbeatMs: r.heartbeat_ms,
			availableAt: r.available_at,
			tags: r.tags,
			expectedEndAt: r.expected_end_at,
			metadata: r.metadata,
			failedForGood: r.failed_for_good,
		},
	};
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
