/**
 * A counting semaphore: at most `size` jobs run at once in one worker,
 * however many wake-ups arrive.
 *
 * @internal
 * @example
 * ```ts
 * const slots = new Slots(2);
 * await slots.acquire();
 * try { await run(job); } finally { slots.release(); }
 * ```
 */
export class Slots {
	readonly size: number;
	#used = 0;
	readonly #waiters: Array<() => void> = [];

	constructor(size: number) {
		if (!(Number.isInteger(size) && size >= 1))
			throw new RangeError(`concurrency must be a positive integer; got ${String(size)}`);
		this.size = size;
	}

	get used(): number {
		return this.#used;
	}

	get free(): number {
		return this.size - this.#used;
	}

	acquire(): Promise<void> {
		if (this.#used < this.size) {
			this.#used++;
			return Promise.resolve();
		}
		return new Promise((resolve) => this.#waiters.push(resolve));
	}

	release(): void {
		const next = this.#waiters.shift();
		if (next)
			next(); // the slot passes straight to the next waiter
		else this.#used = Math.max(0, this.#used - 1);
	}
}
