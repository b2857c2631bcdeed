/**
 * An abort that costs an AbortController only when someone asks for its
 * signal. A runner draining no-op jobs needs to know whether each run was
 * stopped, and why, but most handlers never look at a signal: creating the
 * controllers (and their event listeners) up front was most of the runner's
 * CPU per job.
 *
 * @example
 * const stop = new LazyAbort();
 * const off = stop.onAbort((reason) => console.log('stopped:', reason));
 * stop.abort(new Error('shutdown')); // listeners run; a signal taken later is already aborted
 * off();
 */
export class LazyAbort {
	#aborted = false;
	#reason: unknown = undefined;
	#controller: AbortController | null = null;
	#listeners: Array<(reason: unknown) => void> | null = null;

	get aborted(): boolean {
		return this.#aborted;
	}

	/** What abort() was given; undefined until then. */
	get reason(): unknown {
		return this.#reason;
	}

	/** A real AbortSignal, created on first use (already aborted when the abort came first). */
	get signal(): AbortSignal {
		if (!this.#controller) {
			this.#controller = new AbortController();
			if (this.#aborted) this.#controller.abort(this.#reason);
		}
		return this.#controller.signal;
	}

	/** Aborts once: later calls are ignored, like AbortController.abort(). */
	abort(reason: unknown): void {
		if (this.#aborted) return;
		this.#aborted = true;
		this.#reason = reason;
		this.#controller?.abort(reason);
		const listeners = this.#listeners;
		this.#listeners = null;
		if (listeners) for (const listener of listeners) listener(reason);
	}

	/** Calls `listener` once on abort (at once when already aborted); returns its removal. */
	onAbort(listener: (reason: unknown) => void): () => void {
		if (this.#aborted) {
			listener(this.#reason);
			return noop;
		}
		(this.#listeners ??= []).push(listener);
		return () => {
			const index = this.#listeners?.indexOf(listener) ?? -1;
			if (index >= 0) this.#listeners!.splice(index, 1);
		};
	}
}

const noop = () => {};
