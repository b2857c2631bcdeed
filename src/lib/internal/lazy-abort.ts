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
	/** Listeners, and the aborts this one passes its abort on to (see {@link link}). */
	#listeners: Array<((reason: unknown) => void) | LazyAbort> | null = null;
	#settle: ((reason: unknown) => void) | null = null;
	#aborting: Promise<unknown> | null = null;

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
		this.#settle?.(reason);
		this.#settle = null;
		const listeners = this.#listeners;
		this.#listeners = null;
		if (listeners)
			for (const listener of listeners) {
				if (listener instanceof LazyAbort) listener.abort(reason);
				else listener(reason);
			}
	}

	/**
	 * Aborts `next` too when this aborts (at once when already aborted), with
	 * the same reason, until {@link unlink}: as `onAbort`, without a closure.
	 */
	link(next: LazyAbort): void {
		if (this.#aborted) next.abort(this.#reason);
		else (this.#listeners ??= []).push(next);
	}

	/** Undoes {@link link}. */
	unlink(next: LazyAbort): void {
		const index = this.#listeners?.indexOf(next) ?? -1;
		if (index >= 0) this.#listeners!.splice(index, 1);
	}

	/** Resolves with the reason on abort (never rejects); one promise, made on first use. */
	whenAborted(): Promise<unknown> {
		if (this.#aborting) return this.#aborting;
		if (this.#aborted) return (this.#aborting = Promise.resolve(this.#reason));
		return (this.#aborting = new Promise((resolve) => (this.#settle = resolve)));
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
