import type { JobStatusValue } from '../state.ts';
import type { HoldReason } from '../store/job-store.ts';
import type { AskedQuestion } from '../store/questions.ts';

/**
 * The shapes the Svelte layer reads. They are deliberately a subset of the
 * contract's `Job` row, so a `JobStore` (either adapter) satisfies them as it is,
 * and a test or a demo can satisfy them with a few lines of code.
 */

/**
 * A job's status as the screen sees it. Same values as the database enum
 * `public.job_status`; terminal: done, failed, cancelled.
 */
export type JobSnapshotStatus = JobStatusValue;

/**
 * The part of a job row a progress screen needs. A full `Job` row is assignable
 * to it; payload and params are left out on purpose (they can be large, and the
 * screen has no use for them).
 */
export interface JobSnapshot {
	id: string;
	kind: string;
	status: JobSnapshotStatus;
	/** 0..100, percent. */
	progress: number;
	/** The phase running now, e.g. 'table'; null before the first tick. */
	stage: string | null;
	/** Why it stopped, written for the user; null unless failed (or cancelled with a reason). */
	error: string | null;
	errorCode: string | null;
	/** The record the work produced, so the screen can link straight to it. */
	resultId: string | null;
	/** Incremented by every claim: a different value means a different attempt. */
	attempts: number;
	createdAt: Date;
	updatedAt: Date;
	startedAt: Date | null;
	finishedAt: Date | null;
	/**
	 * The worker of this running job missed the beats it declared at claim
	 * (set by `JobStore.watch`): show "not responding; it will be retried".
	 */
	workerSilent?: boolean;
	/** Not claimable before this: a queued job with a future start is scheduled. */
	availableAt?: Date | null;
	/** Claims allowed; with `attempts`, "retrying (attempt 2 of 3)". */
	maxAttempts?: number;
	/**
	 * When the worker expects the running attempt to end (the database's clock);
	 * before `updatedAt`: its current phase overran. Null or absent: no estimate.
	 */
	expectedEndAt?: Date | null;
	/** What the handler said about the work so far (`ctx.setMetadata`); null or absent until written. */
	metadata?: Record<string, unknown> | null;
	/**
	 * The row says it failed for good (`Job.failedForGood`, from a read: Realtime messages do not
	 * carry it): trying again would fail the same way, whatever kind the screen was given.
	 */
	failedForGood?: boolean;
}

/**
 * One piece of a job's streamed output (a `JobStore`'s `JobStreamChunk`):
 * numbered within its attempt; a later attempt's chunks start the output over.
 */
export interface JobStreamPiece {
	stream: string;
	attempt: number;
	seq: number;
	text: string;
}

/**
 * What a {@link WatchedJob} needs from the outside world. `JobStore` satisfies
 * it; so does anything that can yield snapshots of one job.
 *
 * `watch` must yield the current state first (so a page opened after the job
 * finished gets exactly one value), then one value per change, and end after a
 * terminal state. It must stop — and may end or throw an `AbortError` — once
 * `signal` aborts.
 *
 * `cancel` is idempotent: asking to cancel a finished job is not an error. When
 * it resolves to the updated row, the watched job shows it at once.
 *
 * A `JobStore` is one as it is: its `watch` yields on every change a bar shows
 * (status, progress, stage and the rest), so `WatchedJob.create(store, id)`
 * moves with each tick. A wrapper is for changing what is sent, e.g. a cancel
 * with a reason: `{ watch: (id, o) => store.watch(id, o), cancel: (id) =>
 * store.cancel(id, { reason }), queuePosition: (id) => store.queuePosition(id) }`.
 */
export interface JobWatchSource {
	watch(id: string, options: { signal: AbortSignal }): AsyncIterable<JobSnapshot>;
	cancel(id: string): Promise<unknown>;
	/** A job's children as they change (JobStore.watchChildren): WatchedJob follows them when asked to (`children: true`). */
	watchChildren?(id: string, options: { signal: AbortSignal }): AsyncIterable<readonly JobSnapshot[]>;
	/** Why queued jobs are held (a concurrency limit, a paused kind, a rate limit: JobStore.holdReasons): WatchedJob asks for a queued job. */
	holdReasons?(ids: readonly string[]): Promise<ReadonlyMap<string, HoldReason>>;
	/**
	 * How many of the same owner's queued jobs come before this queued one
	 * (null: not queued). Optional: without it a queued job shows no position.
	 */
	queuePosition?(id: string): Promise<number | null>;
	/** The open question of a waiting job (JobStore.question): WatchedJob asks when the job starts waiting. */
	question?(id: string): Promise<AskedQuestion | null>;
	/** Answers it (JobStore.answer); resolves to the updated row. */
	answer?(id: string, value: unknown): Promise<unknown>;
	/** Tries a failed or cancelled job again (JobStore.tryAgain); resolves to the new job. */
	tryAgain?(id: string): Promise<JobSnapshot>;
	/**
	 * The job's streamed output (JobStore.watchStreams): what was written so
	 * far, then each new piece, in order; ends after the job ended. Optional:
	 * without it `job.streams` stays empty.
	 */
	watchStreams?(id: string, options: { signal: AbortSignal }): AsyncIterable<readonly JobStreamPiece[]>;
}

/**
 * Filters for a job list. `statuses` is the "queued or running" question asked
 * as one query, so the two halves cannot disagree.
 */
export interface JobListFilter {
	kind?: string | null;
	status?: JobSnapshotStatus | null;
	statuses?: readonly JobSnapshotStatus[] | null;
}

/**
 * One request for a page of jobs, newest first.
 */
export interface ListRecentOptions extends JobListFilter {
	limit: number;
	/** Opaque: whatever the previous page returned as `nextCursor`; null for the first page. */
	cursor: string | null;
}

/**
 * One page of jobs, newest first. `nextCursor` is null on the last page.
 */
export interface JobListPage {
	jobs: readonly JobSnapshot[];
	nextCursor: string | null;
}

/**
 * What a {@link JobList} needs. `subscribe` is optional: without it the list is
 * a snapshot that `refresh()` updates. Its callback takes the changed row when
 * the transport carries one (a Realtime broadcast), or nothing to mean
 * "something changed, read the first page again".
 */
export interface JobListSource {
	listRecent(options: ListRecentOptions): Promise<JobListPage>;
	subscribe?(onChange: (job?: JobSnapshot) => void): () => void;
}

/**
 * A value, or a function that reads it. `create()` takes getters so a component
 * can pass its props without capturing only their first value (Svelte's
 * `state_referenced_locally`), and so a change of id or filter is followed.
 */
export type MaybeGetter<T> = T | (() => T);

/**
 * Options of {@link WatchedJob}.
 */
export interface WatchedJobOptions<M extends Record<string, unknown> = Record<string, unknown>> {
	/** Follow the job's children too (`job.children`): a parent's tree of bars. @default false */
	children?: boolean;
	/**
	 * The job's kind (from `defineJobKind`): `job.metadata` is checked by its
	 * `metadata` schema and typed from it. Without it, metadata is the row's JSON.
	 */
	kind?: { parseMetadata(value: unknown): M; readonly permanentErrors?: readonly string[] };
}
