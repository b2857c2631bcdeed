/**
 * `supabase-jobs/svelte`: the Svelte 5 layer — state classes that follow jobs
 * live, and thin components that show them. Kept out of the main entry so Node
 * and Deno workers importing `supabase-jobs` never load Svelte or components.
 *
 * @example
 * ```svelte
 * <script lang="ts">
 * 	import { WatchedJob, JobProgress, CancelButton } from 'supabase-jobs/svelte';
 * 	const job = WatchedJob.create(store, jobId);
 * </script>
 * <JobProgress {job} /> <CancelButton {job} />
 * ```
 */

export { WatchedJob, type WatchedJobOptions } from './watched-job.svelte.ts';
export { JobList, type JobListOptions } from './job-list.svelte.ts';
export type { AnsweringJob } from './question-form.svelte.ts';
export { JOB_MESSAGES, messagesFor, resolveJobLocale, type JobLocale, type JobMessages } from './messages.ts';
export type { JobProgressView } from './internal/progress-view.svelte.ts';
export type {
	JobListFilter,
	JobListPage,
	JobListSource,
	JobSnapshot,
	JobSnapshotStatus,
	JobStreamPiece,
	JobWatchSource,
	ListRecentOptions,
	MaybeGetter,
} from './types.ts';

/**
 * Progress bar for one job (role="progressbar"; failed highlighted, cancelled neutral).
 *
 * @example
 * <JobProgress {job} label="Reading the tender" />
 */
export { default as JobProgress } from './components/JobProgress.svelte';

/**
 * A job's streamed output as it is written, with a polite live region that
 * speaks whole sentences (never each token) and the end.
 *
 * @example
 * <JobStream {job} name="summary" label="Summary" />
 */
export { default as JobStream } from './components/JobStream.svelte';

/**
 * Cancel button: "Cancelling…" at once, one request however many clicks.
 *
 * @example
 * <CancelButton {job} />
 */
export { default as CancelButton } from './components/CancelButton.svelte';

/**
 * The "queued or running" strip.
 *
 * @example
 * <JobStrip jobs={inFlight.jobs} />
 */
export { default as JobStrip } from './components/JobStrip.svelte';

/**
 * A status badge (failed highlighted, cancelled neutral).
 *
 * @example
 * <JobStatusBadge status={job.status} />
 */
export { default as JobStatusBadge } from './components/JobStatusBadge.svelte';

export { DASHBOARD_MESSAGES, dashboardMessagesFor, type DashboardMessages } from './dashboard/dashboard-messages.ts';
export type { DashboardEnhance } from './dashboard/jobs-dashboard.svelte.ts';

/**
 * The admin dashboard: queues, failed jobs with their sentences, a job's
 * timeline and the actions, over what `createAdminDashboard` (from
 * `supabase-jobs/kit`) loads.
 *
 * @example
 * <JobsDashboard {data} {form} {enhance} />
 */
export { default as JobsDashboard } from './dashboard/JobsDashboard.svelte';

/**
 * A job's timeline (transitions and its worker's log lines), from `store.timeline(id)`.
 *
 * @example
 * <JobTimeline entries={await store.timeline(jobId)} />
 */
export { default as JobTimeline } from './components/JobTimeline.svelte';
export type { JobTimelineEntry } from '../store/job-timeline.ts';

/**
 * The question a waiting job asks its owner (`ctx.ask`), laid out from its JSON
 * Schema: one or several of a list, yes/no, a number in its bounds, a date, a
 * text with its pattern; what an answer must be said under the field, and a
 * refusal shown with the field named.
 *
 * @example
 * <JobQuestion {job} labels={{ en: 'English', 'pt-BR': 'Português' }} />
 */
export { default as JobQuestion } from './components/JobQuestion.svelte';

/**
 * "Try again" on a failed or cancelled job: a new linked job, handed to `onretried`.
 *
 * @example
 * <TryAgainButton {job} onretried={(again) => goto(`/jobs/${again.id}`)} />
 */
export { default as TryAgainButton } from './components/TryAgainButton.svelte';
