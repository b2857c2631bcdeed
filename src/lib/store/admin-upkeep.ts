/**
 * The admin's upkeep: readmit jobs whose worker went silent, limit how many of
 * a kind run at once, and keep the recurring schedules in step (admins, a
 * worker or the service role; the actions only admins take: admin-actions).
 */
import { StaleAfterRequiredError } from '../errors.ts';
// Only what int4 cannot hold is refused here; the database says what is in range (maxRunning is at least 1).
import { checkKind, checkRange, INT4_MAX, INT4_MIN, intervalText, invalid } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import type { JobKind } from './job-kind.ts';
import { checkSchedules, type JobSchedule } from './job-schedule.ts';
import type { Job } from './job.ts';
import type { ConcurrencyLimits } from './store-options.ts';

export async function reclaimStale<R extends Job>(calls: JobCalls<R>, staleAfterMs: number | undefined): Promise<R[]> {
	if (staleAfterMs === undefined) {
		throw new StaleAfterRequiredError(
			'reclaimStale refuses without staleAfterMs: create the JobStore with { staleAfterMs: <milliseconds> } rather than let it guess when a worker is dead',
			{ details: 'field=staleAfterMs' },
		);
	}
	return await calls.many('job_reclaim_stale', { stale_after: intervalText(staleAfterMs) });
}

export async function reclaimSilent<R extends Job>(calls: JobCalls<R>): Promise<R[]> {
	return await calls.many('job_reclaim_silent', {});
}

export async function setConcurrency<R extends Job>(
	calls: JobCalls<R>,
	kind: string | JobKind,
	limits: ConcurrencyLimits,
): Promise<void> {
	const name = checkKind(kind);
	if (typeof limits !== 'object' || limits === null || Array.isArray(limits))
		throw invalid('limits', 'limits is an object: { maxRunning?, maxRunningPerKey? }');
	await calls.call('job_set_concurrency', {
		kind: name,
		max_running: checkRange('maxRunning', limits.maxRunning, INT4_MIN, INT4_MAX),
		max_running_per_key: checkRange('maxRunningPerKey', limits.maxRunningPerKey, INT4_MIN, INT4_MAX),
	});
}

export async function syncSchedules<R extends Job>(
	calls: JobCalls<R>,
	schedules: readonly JobSchedule[],
): Promise<number> {
	checkSchedules(schedules);
	const value = await calls.call('job_sync_schedules', {
		schedules: schedules.map((s) => ({ name: s.name, kind: s.kind, cron: s.cron, params: s.params })),
	});
	return Number(value);
}
