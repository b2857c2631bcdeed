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
	/**
	 * Called each time the loop asks again (every POSITION_REFRESH_MS) while the
	 * job stays queued: what holds it may change without a word to its watch (an
	 * operator pauses or resumes its kind, a rate window passes).
	 */
	stillQueued?(): void;
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
	 * to this job's watch), and then has the job ask again what holds it
	 * (`stillQueued`). Nothing is asked while it runs or once it ended.
	 */
	async follow(source: JobWatchSource, id: string, signal: AbortSignal, job: PositionWatch): Promise<void> {
		if (!source.queuePosition && !source.holdReasons) return;
		let again = false;
		while (job.open() && !job.ended()) {
			if (job.queued() && again) job.stillQueued?.();
			if (job.queued() && source.queuePosition) {
				try {
					const ahead = await source.queuePosition(id);
					if (job.open()) this.#ahead = ahead;
				} catch {
					// A position is a courtesy: the watch, not this, reports trouble.
				}
			}
			again = await new Promise<boolean>((resolve) => {
				const timer = setTimeout(() => done(true), POSITION_REFRESH_MS);
				function done(timedOut = false) {
					clearTimeout(timer);
					signal.removeEventListener('abort', aborted);
					resolve(timedOut);
				}
				const aborted = () => done();
				this.#nudge = aborted;
				signal.addEventListener('abort', aborted, { once: true });
			});
			this.#nudge = null;
		}
	}
}
