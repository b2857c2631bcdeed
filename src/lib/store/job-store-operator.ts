/**
 * JobStore's operator and admin calls: readmit, limit, schedule, replay;
 * bulk cancel, pause, rate limits, cleanup, the kinds overview. The work is
 * in operator.ts, questions.ts and admin-actions.ts.
 */
import * as admin from './admin-actions.ts';
import type { JobKind } from './job-kind.ts';
import type { JobSchedule } from './job-schedule.ts';
import type { Job, JobParams } from './job.ts';
import * as operator from './operator.ts';
import * as questions from './questions.ts';
import type { ReplayFilter } from './questions.ts';
import type {
	CancelManyFilter,
	ConcurrencyLimits,
	DeleteFinishedFilter,
	KindOverview,
	RateLimit,
} from './store-options.ts';
import { ScreenCalls } from './job-store-screen.ts';

/** The operator's and the admin's calls of {@link JobStore}. */
export class OperatorCalls<P extends JobParams = JobParams, R extends Job<P> = Job<P>> extends ScreenCalls<P, R> {
	// The operator: readmit, limit, schedule, replay.

	/**
	 * Admins (or a worker): tries again every failed job of this table that
	 * matches the filter (kind, error code, ended in `[from, to)`) and was not
	 * tried again yet, oldest first; returns the new jobs (`retryOf` set). More
	 * than the batch limit (`supabase_jobs.batch_max()`, 5,000) matching throws {@link InvalidJobInputError}
	 * (field `filter`) and writes nothing; anyone else gets {@link PermissionDeniedError}.
	 *
	 * @example
	 * const again = await store.replay({ kind: 'extract', errorCode: 'worker_lost', from: new Date(Date.now() - 3_600_000) });
	 * console.log(`${again.length} jobs queued again`);
	 */
	replay(filter: ReplayFilter = {}): Promise<R[]> {
		return questions.replay(this.calls, filter);
	}

	/**
	 * Readmits running jobs whose worker went silent for `staleAfterMs`:
	 * back to queued, or failed with a sentence for the user once their
	 * max_attempts are spent (a job that kills its worker is not readmitted
	 * forever). Without `staleAfterMs` it refuses with
	 * {@link StaleAfterRequiredError} before touching the database, rather than guess.
	 *
	 * @example
	 * const store = new JobStore(postgresAdapter(sql), { staleAfterMs: 300_000 });
	 * setInterval(() => void store.reclaimStale(), 60_000);
	 */
	reclaimStale(): Promise<R[]> {
		return operator.reclaimStale(this.calls, this.staleAfterMs);
	}

	/**
	 * One pass of what the reclaim schedule runs (every 5 seconds where pg_cron
	 * accepts seconds schedules, every minute otherwise), on this store's table,
	 * through the same SQL function: readmits running jobs whose worker broke
	 * the liveness contract it declared at claim (`heartbeatMs`: three beats
	 * missed in a row), and closes queued jobs past their `expireAfterMs` as
	 * failed (`expired`). Jobs claimed without a declared heartbeat are never
	 * touched unless an operator set `supabase_jobs.settings.stale_after`, so
	 * nothing is guessed. Returns the jobs it readmitted or closed. For an app
	 * that runs its own loop instead of pg_cron.
	 *
	 * @example
	 * setInterval(() => void store.reclaimSilent(), 10_000);
	 */
	reclaimSilent(): Promise<R[]> {
		return operator.reclaimSilent(this.calls);
	}

	/**
	 * Limits how many jobs of a kind run at once in this store's table,
	 * enforced where jobs are claimed (racing workers included): a job over the
	 * limit waits queued until a slot frees. Both omitted: no limit. Service role.
	 *
	 * @example
	 * await store.setConcurrency(exportKind, { maxRunningPerKey: 1 }); // one export per concurrencyKey
	 */
	setConcurrency(kind: string | JobKind, limits: ConcurrencyLimits): Promise<void> {
		return operator.setConcurrency(this.calls, kind, limits);
	}

	/**
	 * Makes the recurring schedules of this store's table exactly these (added,
	 * changed and removed at once), with one pg_cron entry each. Each one is
	 * checked first (a name, an expression pg_cron runs: see defineSchedule); a
	 * bad one throws InvalidJobInputError naming it (`schedules["nightly-report"].cron`)
	 * and nothing changes. Each run is a
	 * job enqueued once per minute slot; slots missed while the database or
	 * pg_cron was down are skipped, not backfilled. Service role only.
	 *
	 * @example
	 * await store.syncSchedules([defineSchedule({ name: 'nightly-report', kind: 'report.build', cron: '0 2 * * *' })]);
	 */
	syncSchedules(schedules: readonly JobSchedule[]): Promise<number> {
		return operator.syncSchedules(this.calls, schedules);
	}

	// The admin (app_metadata.role = 'admin', or the service role; anyone else: PermissionDeniedError).

	/**
	 * Cancels up to `limit` (1,000) unfinished jobs matching every filter
	 * given, oldest first, each as {@link cancel} would (children too, one
	 * Realtime message per job). Returns how many; call again while it returns `limit`.
	 *
	 * @example
	 * await admin.cancelMany({ kind: 'export', statuses: ['queued'], reason: 'Exports are paused for maintenance.' });
	 */
	cancelMany(filter: CancelManyFilter): Promise<number> {
		return admin.cancelMany(this.calls, filter);
	}

	/**
	 * Stops claims of a kind in this table (running jobs run on) until
	 * {@link resumeKind}; a queued job's screen says so. True when this call paused it.
	 *
	 * @example
	 * await admin.pauseKind('email.send'); // the provider is down
	 */
	pauseKind(kind: string | JobKind): Promise<boolean> {
		return admin.pauseKind(this.calls, kind);
	}

	/**
	 * Lets a paused kind be claimed again and wakes the workers. True when it was paused.
	 *
	 * @example
	 * await admin.resumeKind('email.send');
	 */
	resumeKind(kind: string | JobKind): Promise<boolean> {
		return admin.resumeKind(this.calls, kind);
	}

	/**
	 * At most `starts` jobs of a kind start in any `perMs` milliseconds, across
	 * every worker (for work calling an API that answers 429); null removes it.
	 *
	 * @example
	 * await admin.setRateLimit('geocode', { starts: 10, perMs: 1000 }); // 10 a second
	 */
	setRateLimit(kind: string | JobKind, limit: RateLimit | null): Promise<void> {
		return admin.setRateLimit(this.calls, kind, limit);
	}

	/**
	 * Deletes up to `limit` (5,000) jobs that finished before `endedBefore`,
	 * oldest first (the timings of done ones are kept for phase plans). Returns how many.
	 *
	 * @example
	 * await admin.deleteFinished({ endedBefore: new Date(Date.now() - 7 * 86_400_000), statuses: ['cancelled'] });
	 */
	deleteFinished(filter: DeleteFinishedFilter): Promise<number> {
		return admin.deleteFinished(this.calls, filter);
	}

	/**
	 * Every kind of this table, for a dashboard: jobs by status, done and
	 * failed in the last hour, paused or not, its rate and concurrency limits.
	 *
	 * @example
	 * for (const k of await admin.adminKinds()) console.log(k.kind, k.counts.queued, k.pausedAt ? 'paused' : '');
	 */
	adminKinds(): Promise<KindOverview[]> {
		return admin.adminKinds(this.calls);
	}
}
