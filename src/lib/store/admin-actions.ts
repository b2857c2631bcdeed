/**
 * The admin's actions (supabase/schemas/17_admin_actions.sql): cancel in
 * bulk, pause and resume a kind, limit a kind's starts, delete finished jobs,
 * and the per-kind figures a dashboard shows. Admins (app_metadata.role =
 * 'admin') and the service role only; anyone else gets PermissionDeniedError.
 */
import { JOB_STATUSES, type JobStatusValue } from '../state.ts';
import type { RawRow } from './adapter.ts';
import { cancelManyArgs, checkKind, deleteFinishedArgs, rateLimitArgs } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import type { JobKind } from './job-kind.ts';
import { UnexpectedRowError, type Job } from './job.ts';
import type { CancelManyFilter, DeleteFinishedFilter, KindOverview, RateLimit } from './store-options.ts';

function count(fn: string, value: unknown): number {
	const n = typeof value === 'string' ? Number(value) : value;
	if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
		throw new UnexpectedRowError(`${fn} returned ${JSON.stringify(value)}, not a count`);
	return n;
}

function flag(fn: string, value: unknown): boolean {
	if (typeof value !== 'boolean')
		throw new UnexpectedRowError(`${fn} returned ${JSON.stringify(value)}, not a boolean`);
	return value;
}

export async function cancelMany<R extends Job>(calls: JobCalls<R>, filter: CancelManyFilter): Promise<number> {
	return count('job_cancel_many', await calls.call('job_cancel_many', cancelManyArgs(filter)));
}

export async function pauseKind<R extends Job>(calls: JobCalls<R>, kind: string | JobKind): Promise<boolean> {
	return flag('job_pause_kind', await calls.call('job_pause_kind', { kind: checkKind(kind) }));
}

export async function resumeKind<R extends Job>(calls: JobCalls<R>, kind: string | JobKind): Promise<boolean> {
	return flag('job_resume_kind', await calls.call('job_resume_kind', { kind: checkKind(kind) }));
}

export async function setRateLimit<R extends Job>(
	calls: JobCalls<R>,
	kind: string | JobKind,
	limit: RateLimit | null,
): Promise<void> {
	await calls.call('job_set_rate_limit', { kind: checkKind(kind), ...rateLimitArgs(limit) });
}

export async function deleteFinished<R extends Job>(calls: JobCalls<R>, filter: DeleteFinishedFilter): Promise<number> {
	return count('job_delete_finished', await calls.call('job_delete_finished', deleteFinishedArgs(filter)));
}

const orNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function kindOverview(row: RawRow): KindOverview {
	const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, count('job_admin_kinds', row[s] ?? 0)])) as Record<
		JobStatusValue,
		number
	>;
	const rateStarts = orNull(row.rate_starts);
	const ratePerMs = orNull(row.rate_per_ms);
	return {
		kind: String(row.kind),
		counts,
		doneLastHour: count('job_admin_kinds', row.done_last_hour),
		failedLastHour: count('job_admin_kinds', row.failed_last_hour),
		pausedAt: row.paused_at === null || row.paused_at === undefined ? null : new Date(row.paused_at as string | Date),
		rateLimit: rateStarts !== null && ratePerMs !== null ? { starts: rateStarts, perMs: ratePerMs } : null,
		maxRunning: orNull(row.max_running),
		maxRunningPerKey: orNull(row.max_running_per_key),
	};
}

export async function adminKinds<R extends Job>(calls: JobCalls<R>): Promise<KindOverview[]> {
	const rows = await calls.call('job_admin_kinds', {});
	if (!Array.isArray(rows)) throw new UnexpectedRowError(`job_admin_kinds returned ${typeof rows}, not rows`);
	return rows.map((r) => kindOverview(r as RawRow));
}
