import { clampProgress, isNewAttempt } from './merge-snapshot.ts';
import type { HoldReason } from '../../store/job-store.ts';
import type { JobSnapshot, JobSnapshotStatus } from '../types.ts';

/**
 * What a progress bar reads. A `WatchedJob` and a `JobSnapshot` both fit.
 */
export interface JobProgressView {
	readonly status: JobSnapshotStatus | null;
	readonly progress: number;
	readonly stage: string | null;
	readonly attempts: number;
	readonly error?: string | null;
	readonly workerSilent?: boolean;
	readonly availableAt?: Date | null;
	readonly maxAttempts?: number;
	readonly startedAt?: Date | null;
	readonly updatedAt?: Date | null;
	/** A queued job held back: by a concurrency limit (which, and how many hold it), a paused kind or a spent rate limit. */
	readonly heldBy?: HoldReason | null;
	/** The job's children, each drawn as a bar of its own under this one. */
	readonly children?: readonly JobSnapshot[];
	/** The worker's estimate of the end (see WatchedJob.expectedEndAt). */
	readonly expectedEndAt?: Date | null;
	/** While queued: the owner's own jobs ahead of this one (see WatchedJob.queuedAhead). */
	readonly queuedAhead?: number | null;
	/** While waiting: the question it asked its owner, if any (see WatchedJob.question). */
	readonly question?: object | null;
	/** Failed with an error its kind declares permanent (see WatchedJob.failedForGood): the bar says trying again will not help. */
	readonly failedForGood?: boolean;
}

/**
 * @internal
 * The component-side guard of the same rule `mergeSnapshot` applies: whatever
 * the props say, the bar does not move backwards within one attempt. WatchedJob
 * and JobList already hold to it; this keeps a bar fed raw rows honest too.
 * It also keeps how far the last attempt got: while its retry waits (queued
 * again; the row keeps that value, and this bar may have seen more), `held`
 * is that value, so the bar can keep it, greyed, instead of dropping to nothing.
 */
export class MonotonicProgress {
	readonly #view: () => JobProgressView;
	// Plain (non-reactive) memory of what was last shown; only the derived writes it.
	#shown: { attempts: number; status: JobSnapshotStatus | null; value: number } | null = null;
	/** How far the last running attempt got (its attempt number and value). */
	#lastRun: { attempts: number; value: number } | null = null;

	constructor(view: () => JobProgressView) {
		this.#view = view;
	}

	readonly #state: { value: number; held: number | null } = $derived.by(() => {
		const { status, progress, attempts } = this.#view();
		// 100% only together with Done: a run's last tick never fills the bar before the row says so.
		let value = status === 'done' ? 100 : Math.min(99, clampProgress(progress));
		const prev = this.#shown;
		if (
			prev &&
			prev.status !== null &&
			status !== null &&
			!isNewAttempt({ attempts: prev.attempts, status: prev.status }, { attempts, status })
		) {
			value = Math.max(prev.value, value);
		}
		this.#shown = { attempts, status, value };
		if (status === 'running') this.#lastRun = { attempts, value };
		// A retry waits with the attempt count of the attempt that ended (the next claim adds one).
		// The row keeps it too (a page opened while the retry waits), and this bar may have seen more.
		const last = this.#lastRun;
		const reached = Math.max(value, last && last.attempts === attempts ? last.value : 0);
		const held = status === 'queued' && attempts > 0 && reached > 0 ? reached : null;
		return { value, held };
	});

	/** The value to draw: never backwards within one attempt. */
	get value(): number {
		return this.#state.value;
	}

	/** While a retry waits: how far the attempt that ended got (null otherwise). */
	get held(): number | null {
		return this.#state.held;
	}
}
