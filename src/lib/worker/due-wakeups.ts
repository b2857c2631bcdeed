/**
 * Jobs announced as claimable later (run_at, a retry's backoff) wake the Node
 * runner then rather than at the next poll: one timer, armed for the nearest
 * of their times; when it fires it calls `onDue` and re-arms for the next.
 * The farthest times beyond `kept` are dropped: the poll finds those.
 */
export class DueWakeups {
	readonly #due: number[] = [];
	readonly #onDue: () => void;
	readonly #kept: number;
	#timer: ReturnType<typeof setTimeout> | undefined;
	#closed = false;

	constructor(onDue: () => void, kept: number) {
		this.#onDue = onDue;
		this.#kept = kept;
	}

	/** Keeps a wake-up at `at` (epoch milliseconds); the same time twice is one. */
	add(at: number): void {
		const due = this.#due;
		let i = due.length;
		while (i > 0 && due[i - 1]! > at) i--;
		if (due[i - 1] === at) return;
		due.splice(i, 0, at);
		if (due.length > this.#kept) due.pop();
		if (i === 0) this.#arm();
	}

	/** Clears the timer; nothing arms again. */
	close(): void {
		this.#closed = true;
		clearTimeout(this.#timer);
	}

	#arm(): void {
		clearTimeout(this.#timer);
		this.#timer = undefined;
		const due = this.#due;
		const now = Date.now();
		while (due.length && due[0]! <= now) due.shift();
		if (!due.length || this.#closed) return;
		this.#timer = setTimeout(
			() => {
				this.#timer = undefined;
				this.#onDue();
				this.#arm();
			},
			Math.min(due[0]! - now + 5, 2 ** 31 - 1),
		);
	}
}
