/**
 * How much longer. First choice: the worker's own estimate, written with the
 * progress (`expectedEndAt`, from its PhasePlan; before `updatedAt` when the
 * current phase overran its measured time). Without one, from the row alone:
 * the bar is
 * time-proportional (a PhasePlan maps expected seconds to percent), so a job
 * that reached p% after t seconds of running is expected to need t·(100−p)/p
 * more. Both times are the database's (started_at, updated_at), so a browser
 * with a wrong clock still counts right; only the countdown since the row
 * arrived uses the local clock. The projected end is smoothed, so one late tick
 * does not make the estimate jump; once the projected end has passed with the
 * job still running, it is overrunning: the screen says "taking longer than
 * usual" rather than a number it no longer believes.
 *
 * @internal
 */
import type { JobMessages, PluralText } from '../messages.ts';

/** What the estimate reads from a snapshot. */
export interface EtaInput {
	status: string | null;
	progress: number;
	startedAt?: Date | null;
	updatedAt?: Date | null;
	/** The worker's estimate of the end (the database's clock). */
	expectedEndAt?: Date | null;
}

/** The estimate now: seconds left (null: unknown) and whether the job runs past it. */
export interface Eta {
	seconds: number | null;
	overrun: boolean;
}

/** Below this progress the rate says too little to promise anything. */
const MIN_PROGRESS = 2;
/** Weight of a new projection against the previous one. */
const SMOOTHING = 0.35;
/** Past the projected end by this share of the run (at least 5 s), the job is overrunning. */
const OVERRUN_SHARE = 0.15;

/**
 * Keeps one job's projected end across snapshots (local clock).
 *
 * @internal
 * @example
 * ```ts
 * const eta = new EtaEstimator();
 * eta.observe(snapshot, Date.now());
 * eta.at(Date.now()); // { seconds: 95, overrun: false }
 * ```
 */
export class EtaEstimator {
	#end: number | null = null;
	#run = 0;
	#key = '';
	/** This attempt has had an estimate from its worker: the row's pace no longer speaks. */
	#fromWorker = false;
	/** The worker said its current phase overran. */
	#workerOverrun = false;

	/** Takes a snapshot received at `receivedAt` (local ms). */
	observe(job: EtaInput, receivedAt: number): void {
		const { status, progress, startedAt, updatedAt, expectedEndAt } = job;
		const key = `${status}|${startedAt?.getTime() ?? ''}`;
		if (key !== this.#key) {
			// A new attempt (or a state without a run) starts the projection over.
			this.#key = key;
			this.#end = null;
			this.#fromWorker = false;
			this.#workerOverrun = false;
		}
		if (status !== 'running' || !startedAt || !updatedAt) return;
		const ran = Math.max(0, (updatedAt.getTime() - startedAt.getTime()) / 1000);
		if (expectedEndAt instanceof Date && !Number.isNaN(expectedEndAt.getTime())) {
			this.#fromWorker = true;
			const left = (expectedEndAt.getTime() - updatedAt.getTime()) / 1000;
			this.#workerOverrun = left < 0;
			if (this.#workerOverrun) {
				this.#end = null; // the next honest number starts afresh, not averaged with a stale one
				return;
			}
			this.#project(receivedAt, ran, left);
			return;
		}
		if (this.#fromWorker || !(progress >= MIN_PROGRESS) || progress >= 100) return;
		this.#project(receivedAt, ran, (ran * (100 - progress)) / progress);
	}

	#project(receivedAt: number, ran: number, left: number): void {
		const end = receivedAt + left * 1000;
		this.#run = ran + left;
		this.#end = this.#end === null ? end : this.#end + SMOOTHING * (end - this.#end);
	}

	/** The estimate at local time `now`. */
	at(now: number): Eta {
		if (this.#workerOverrun) return { seconds: null, overrun: true };
		if (this.#end === null) return { seconds: null, overrun: false };
		const left = (this.#end - now) / 1000;
		const grace = Math.max(5, this.#run * OVERRUN_SHARE);
		if (left < -grace) return { seconds: null, overrun: true };
		return { seconds: Math.max(0, left), overrun: false };
	}
}

/**
 * Below this many seconds of estimate the screen says "less than a minute".
 * Not 60: an estimate is an estimate, and "less than a minute" is a promise
 * people hold a screen to. With a quarter of margin, an estimate that is up to
 * 25% short still never says it with more than a minute left (what
 * `npm run bench:eta` measures: a few percent in a run's last minute).
 *
 * @internal
 */
export const LESS_THAN_A_MINUTE_BELOW = 45;

/**
 * "about 2 min left" in words: under {@link LESS_THAN_A_MINUTE_BELOW} seconds
 * "less than a minute", then whole minutes (at least 1, rounded), then hours
 * to a tenth.
 *
 * @internal
 * @example
 * ```ts
 * remainingText(95, JOB_MESSAGES.en.left); // 'about 2 min left'
 * remainingText(50, words); // 'about 1 min left': not yet "less than a minute"
 * ```
 */
export function remainingText(seconds: number, words: JobMessages['left']): string {
	if (seconds < LESS_THAN_A_MINUTE_BELOW) return words.lessThanMinute;
	if (seconds < 3600) return plural(words.minutes, Math.max(1, Math.round(seconds / 60)));
	return plural(words.hours, Math.round((seconds / 3600) * 10) / 10);
}

/** The sentence for `n`: its `one` form for exactly 1, else `other` with `{n}` replaced. */
function plural(text: PluralText, n: number): string {
	return (n === 1 ? text.one : text.other).replace('{n}', String(n));
}
