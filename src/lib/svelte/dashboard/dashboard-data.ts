/**
 * What the admin dashboard's route hands its page: plain, serialisable data
 * (strings, numbers, booleans; times as ISO strings), so the components take
 * props and nothing else, and any transport (SvelteKit's, JSON) carries it.
 */
import type { JobStatusValue } from '../../state.ts';
import type { Job } from '../../store/job.ts';
import type { JobTimelineEntry } from '../../store/job-timeline.ts';
import type { KindOverview } from '../../store/store-options.ts';

/**
 * One job as the dashboard lists it (never its params or payload).
 */
export interface DashboardJob {
	id: string;
	kind: string;
	status: JobStatusValue;
	/** The sentence the user's screen shows for a failure. */
	error: string | null;
	errorCode: string | null;
	attempts: number;
	maxAttempts: number;
	ownerId: string | null;
	createdAt: string;
	startedAt: string | null;
	finishedAt: string | null;
	/** The failed job this one tries again, when it is a replay. */
	retryOf: string | null;
}

/**
 * Which failed jobs the dashboard lists, and which ones a bulk action takes.
 * Every field is optional: none means every failed job.
 */
export interface DashboardFilter {
	kind?: string;
	errorCode?: string;
	/** ISO time: ended at or after. */
	from?: string;
	/** ISO time: ended before. */
	to?: string;
}

/**
 * The names of the dashboard's form actions.
 */
export type DashboardActionName =
	| 'cancel'
	| 'tryAgain'
	| 'replay'
	| 'cancelMany'
	| 'pause'
	| 'resume'
	| 'setRateLimit'
	| 'clearRateLimit'
	| 'deleteFinished';

/**
 * What the page shows: the route's `load` returns it.
 */
export interface JobsDashboardData {
	/** The queues: each kind's jobs by status, its last hour, and whether it is paused or limited. */
	kinds: KindOverview[];
	/** The newest failed jobs matching `filter`. */
	failed: DashboardJob[];
	/** True when more failed jobs match than the list shows, or may (the newest 2,000 were searched). */
	moreFailed: boolean;
	filter: DashboardFilter;
	/** The job opened with `?job=<id>`, with its timeline; null when none is. */
	selected: { job: DashboardJob; timeline: JobTimelineEntry[] } | null;
	/** The actions this store offers (an action absent here is not shown). */
	actions: DashboardActionName[];
	generatedAt: string;
}

/**
 * What an action answers, for the page's live region: how many jobs it
 * touched, or why it refused (`field` names the bad input).
 */
export type DashboardActionResult =
	| { action: DashboardActionName; ok: true; count: number; kind?: string; jobId?: string; newJobId?: string }
	| { action: DashboardActionName; ok: false; code: string; message: string; field?: string };

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** A job row as the dashboard shows it. */
export function dashboardJob(job: Job): DashboardJob {
	return {
		id: job.id,
		kind: job.kind,
		status: job.status,
		error: job.error,
		errorCode: job.errorCode,
		attempts: job.attempts,
		maxAttempts: job.maxAttempts,
		ownerId: job.ownerId,
		createdAt: job.createdAt.toISOString(),
		startedAt: iso(job.startedAt),
		finishedAt: iso(job.finishedAt),
		retryOf: job.retryOf,
	};
}
