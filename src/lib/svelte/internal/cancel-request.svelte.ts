/**
 * The cancel request of a WatchedJob: whether a cancel was asked, why the
 * last one failed, and the one request in flight (a second click while it
 * is in flight sends nothing and gets the same promise).
 *
 * @internal
 */

/** @internal One job's cancel request, as {@link WatchedJob} shows it. */
export class CancelRequest {
	/** A cancel was asked and did not fail. */
	requested = $state(false);
	/** Why the last request failed, or null. */
	error = $state.raw<unknown>(null);
	#inFlight: Promise<void> | null = null;
	#token: object | null = null;

	/**
	 * Sends `request` unless one is in flight (its promise comes back) or `skip`
	 * (nothing to ask: resolved at once). Never rejects: a failure lands in
	 * `error`. `current` says whether the answer is still the watched job's;
	 * `apply` gets the answer.
	 */
	send(skip: boolean, request: () => Promise<unknown>, current: () => boolean, apply: (answer: unknown) => void) {
		if (this.#inFlight) return this.#inFlight;
		if (skip) return Promise.resolve();
		this.requested = true;
		this.error = null;
		const token = {};
		this.#token = token;
		const sent = this.#send(token, request, current, apply);
		// A source that throws synchronously has already settled the request.
		if (this.#token === token) this.#inFlight = sent;
		return sent;
	}

	async #send(token: object, request: () => Promise<unknown>, current: () => boolean, apply: (a: unknown) => void) {
		try {
			const answer = await request();
			if (!current()) return; // retargeted meanwhile: not this job's answer
			apply(answer);
		} catch (error) {
			if (!current()) return;
			this.requested = false;
			this.error = error;
		} finally {
			if (this.#token === token) {
				this.#token = null;
				this.#inFlight = null;
			}
		}
	}

	/** Forgets everything (the watch moved to another job). */
	reset(): void {
		this.requested = false;
		this.error = null;
		this.#inFlight = null;
		this.#token = null;
	}
}
