/**
 * A read a WatchedJob asks beside the watch, for one state of its job: why a
 * queued job is held, the question a waiting job asked. Asked when the job
 * enters that state (or changes in it), forgotten when it leaves it; a
 * failure leaves the last value (a nicety: the watch, not this, reports
 * trouble).
 *
 * @internal
 */
export class SideRead<T> {
	#value = $state.raw<T | null>(null);

	/** The last value read for the job's current state; null when none, or not in that state. */
	get value(): T | null {
		return this.#value;
	}

	reset(): void {
		this.#value = null;
	}

	/**
	 * Asks `fetch` when `wanted` (the job is in this read's state and the source
	 * can answer), else forgets the value. The answer lands only while
	 * `current()` still holds (same job, same state).
	 */
	ask(wanted: boolean, fetch: () => Promise<T | null | undefined>, current: () => boolean): void {
		if (!wanted) {
			this.#value = null;
			return;
		}
		fetch().then(
			(value) => {
				if (current()) this.#value = value ?? null;
			},
			() => {},
		);
	}
}
