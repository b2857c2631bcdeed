/**
 * The fields a WatchedJob derives from the snapshot it shows: status,
 * progress, stage, error, the dates, the attempts, metadata and the is*
 * flags. Each is derived from `snapshot` alone, so they cannot disagree.
 *
 * @internal
 */
import { isTerminalStatus } from '../../state.ts';
import type { JobSnapshot, JobSnapshotStatus } from '../types.ts';

/** @internal What {@link WatchedJob} shows of its snapshot. */
export class JobSnapshotFields<M extends Record<string, unknown> = Record<string, unknown>> {
	readonly #parseMetadata: ((value: unknown) => M) | undefined;

	constructor(parseMetadata: ((value: unknown) => M) | undefined) {
		this.#parseMetadata = parseMetadata;
	}

	/** The snapshot as displayed, or null before the first one arrives (WatchedJob's own). */
	get snapshot(): JobSnapshot | null {
		return null;
	}

	/**
	 * What the handler said about the work so far (`ctx.setMetadata`), from the
	 * same message as the tick that wrote it; typed (and checked) by the `kind`
	 * option. Null until written, or when it does not fit the kind's schema.
	 */
	readonly metadata: Partial<M> | null = $derived.by(() => {
		const raw = this.snapshot?.metadata ?? null;
		if (raw === null || !this.#parseMetadata) return raw as Partial<M> | null;
		try {
			return this.#parseMetadata(raw);
		} catch {
			return null;
		}
	});

	/** The job's status; null until the first snapshot arrives. */
	readonly status: JobSnapshotStatus | null = $derived(this.snapshot?.status ?? null);

	/**
	 * The percentage to display, 0..100. Never lower than before within one
	 * attempt; 100 once done.
	 */
	readonly progress: number = $derived(this.snapshot?.progress ?? 0);

	/** The phase running now (e.g. 'table'), or null. */
	readonly stage: string | null = $derived(this.snapshot?.stage ?? null);

	/** The sentence for the user when the job failed (or a reason it was cancelled). */
	readonly error: string | null = $derived(this.snapshot?.error ?? null);

	/** The stable code of the failure, for branching; not for display. */
	readonly errorCode: string | null = $derived(this.snapshot?.errorCode ?? null);

	/** The id of what the job produced, once done. */
	readonly resultId: string | null = $derived(this.snapshot?.resultId ?? null);

	/**
	 * True while the job is running but its worker has missed the heartbeats
	 * it declared: it may have died, and the job will be retried if so.
	 */
	readonly workerSilent: boolean = $derived(this.snapshot?.status === 'running' && this.snapshot.workerSilent === true);

	/** When a queued job may start: in the future for a scheduled run. */
	readonly availableAt: Date | null = $derived(this.snapshot?.availableAt ?? null);

	/**
	 * When the running attempt's worker expects it to end (the database's
	 * clock, from its phase plan); earlier than `updatedAt` when its current
	 * phase overran. Null: no estimate (JobProgress then reads the row's pace).
	 */
	readonly expectedEndAt: Date | null = $derived(
		this.snapshot?.status === 'running' ? (this.snapshot.expectedEndAt ?? null) : null,
	);

	/** When the current attempt started (the database's clock); null unless running or ended. */
	readonly startedAt: Date | null = $derived(this.snapshot?.startedAt ?? null);

	/** When the row last changed (the database's clock). */
	readonly updatedAt: Date | null = $derived(this.snapshot?.updatedAt ?? null);

	/** How many claims the job is allowed (0 before the first snapshot). */
	readonly maxAttempts: number = $derived(this.snapshot?.maxAttempts ?? 0);

	/** How many times the job was claimed; a change means a new attempt. */
	readonly attempts: number = $derived(this.snapshot?.attempts ?? 0);

	/** done, failed or cancelled: nothing more will happen. */
	readonly isTerminal: boolean = $derived(isTerminalStatus(this.snapshot?.status));

	/** Finished successfully. */
	readonly isDone: boolean = $derived(this.snapshot?.status === 'done');

	/** Stopped with an error (highlight it; `error` says why). */
	readonly isFailed: boolean = $derived(this.snapshot?.status === 'failed');

	/** Stopped because someone asked: terminal, but not a failure — show it neutrally. */
	readonly isCancelled: boolean = $derived(this.snapshot?.status === 'cancelled');

	/** Queued or running. */
	readonly isActive: boolean = $derived(
		this.snapshot?.status === 'queued' || this.snapshot?.status === 'running' || this.snapshot?.status === 'waiting',
	);
}
