/**
 * Where a queued job stands, as a WatchedJob shows it: how many of the same
 * owner's queued jobs start before it, asked of the source while the job
 * waits in the queue.
 *
 * @internal
 */
import type { JobWatchSource } from '../types.ts';

/** How often a queued job asks again where it stands. */
const POSITION_REFRESH_MS = 5000;

/** @internal What the position loop reads of the job it follows. */
export interface PositionWatch {
	/** The watch that started the loop is still open, on the same job. */
	open(): boolean;
	/** The job is queued now. */
	queued(): boolean;
	/** The job ended: the loop stops. */
	ended(): boolean;
}

/** @internal */
export class QueuePosition {
	#ahead = $state<number | null>(null);
	/** Wakes the position loop early: the job just became queued. */
	#nudge: (() => void) | null = null;

	/** The last position read; null before one, or after `reset()`. */
	get ahead(): number | null {
		return this.#ahead;
	}

	/** Wakes the loop now: the job just became queued (ask at once), or ended (let the loop end). */
	nudge(): void {
		this.#nudge?.();
	}

	reset(): void {
		this.#ahead = null;
	}

	/**
	 * Asks where the job stands while it is queued: at once when it becomes
	 * queued, then every POSITION_REFRESH_MS (jobs ahead start without a word
	 * to this job's watch). Nothing is asked while it runs or once it ended.
	 */
	async follow(source: JobWatchSource, id: string, signal: AbortSignal, job: PositionWatch): Promise<void> {
		if (!source.queuePosition) return;
		while (job.open() && !job.ended()) {
			if (job.queued()) {
				try {
					const ahead = await source.queuePosition(id);
					if (job.open()) this.#ahead = ahead;
				} catch {
					// A position is a courtesy: the watch, not this, reports trouble.
				}
			}
			await new Promise<void>((resolve) => {
				const timer = setTimeout(done, POSITION_REFRESH_MS);
				function done() {
					clearTimeout(timer);
					signal.removeEventListener('abort', done);
					resolve();
				}
				this.#nudge = done;
				signal.addEventListener('abort', done, { once: true });
			});
			this.#nudge = null;
		}
	}
}
