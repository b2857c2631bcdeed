/**
 * How the Node runner's claim loop sleeps and is woken: a notification, a
 * finished job, the poll timer or stop() pokes it. A poke that arrives while
 * the loop is claiming is kept (`pending`), so the next wait returns at once
 * and no wake-up is lost.
 */
export class WakeSignal {
	#pending = false;
	#wake: (() => void) | null = null;

	/** Wakes the waiting loop, or makes its next wait return at once. */
	poke(): void {
		this.#pending = true;
		this.#wake?.();
	}

	/** Waits for a poke, or `ms`; `onTimeout` runs when the timer ended the wait. */
	async wait(ms: number, onTimeout: () => void): Promise<void> {
		if (!this.#pending) {
			let timer: ReturnType<typeof setTimeout> | undefined;
			await new Promise<void>((resolve) => {
				this.#wake = resolve;
				timer = setTimeout(() => {
					onTimeout();
					resolve();
				}, ms);
			});
			clearTimeout(timer);
			this.#wake = null;
		}
		this.#pending = false;
	}
}
