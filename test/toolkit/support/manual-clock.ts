/**
 * A clock and timers driven by hand: time moves only when a test says so.
 * `nextTimer()` resolves when something schedules a timer, so a test waits on
 * that event instead of sleeping.
 */
import type { Timers } from '../../../src/lib/internal/timers.ts';

interface Pending {
	id: number;
	at: number;
	fn: () => void;
}

export class ManualClock implements Timers {
	time = 0;
	#pending: Pending[] = [];
	#nextId = 1;
	#waiters: Array<() => void> = [];

	readonly now = (): number => this.time;

	setTimeout = (fn: () => void, ms: number): unknown => {
		const id = this.#nextId++;
		this.#pending.push({ id, at: this.time + ms, fn });
		this.#waiters.splice(0).forEach((w) => w());
		return id;
	};

	clearTimeout = (handle: unknown): void => {
		this.#pending = this.#pending.filter((p) => p.id !== handle);
	};

	get pendingTimers(): number {
		return this.#pending.length;
	}

	/** Resolves once at least one timer is pending. */
	nextTimer(): Promise<void> {
		if (this.#pending.length) return Promise.resolve();
		return new Promise((resolve) => this.#waiters.push(resolve));
	}

	/** Moves time forward by `ms`, firing every timer that falls due, in order. */
	advance(ms: number): void {
		const until = this.time + ms;
		for (;;) {
			const due = this.#pending.filter((p) => p.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
			if (!due) break;
			this.#pending = this.#pending.filter((p) => p !== due);
			this.time = due.at;
			due.fn();
		}
		this.time = until;
	}

	/** Waits for the next timer to be scheduled, then moves time to it and fires it. */
	async fireNext(): Promise<void> {
		await this.nextTimer();
		const first = [...this.#pending].sort((a, b) => a.at - b.at || a.id - b.id)[0]!;
		this.advance(first.at - this.time);
	}
}
