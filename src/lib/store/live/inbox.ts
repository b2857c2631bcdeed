/**
 * Events pushed synchronously by a transport, taken one at a time by an async
 * loop, with a timeout and an abort signal. A thousand watches each hold one:
 * it keeps no closure of its own (it is its own abort listener, its timer
 * calls a shared function) and no queue while nothing is waiting in it.
 */
import { MAX_TIMER_MS } from '../../internal/timers.ts';

/**
 * The queue behind a watch loop: `push` from a transport callback, `next` from the loop.
 *
 * @internal
 * @example
 * ```ts
 * const inbox = new Inbox<number>();
 * inbox.push(1);
 * await inbox.next(1000, signal); // 1
 * ```
 */
export class Inbox<T> {
	/** Events not taken yet; null while there are none (most of a watch's life). */
	#queue: T[] | null = null;
	/** Set while `next` waits (the queue is then empty). */
	#resolve: ((value: T | 'elapsed' | 'aborted') => void) | null = null;
	#timer: ReturnType<typeof setTimeout> | undefined = undefined;
	#signal: AbortSignal | undefined = undefined;

	push(event: T): void {
		if (this.#resolve !== null) this.#finish(event);
		else (this.#queue ??= []).push(event);
	}

	/** Removes and returns the queued events that `match`, in order, leaving the others queued. */
	take(match: (event: T) => boolean): T[] {
		const queue = this.#queue;
		if (queue === null) return [];
		const taken = queue.filter(match);
		const kept = queue.filter((e) => !match(e));
		this.#queue = kept.length > 0 ? kept : null;
		return taken;
	}

	/** The next event, or 'elapsed' after `ms` (Infinity: never), or 'aborted'. One wait at a time. */
	next(ms: number, signal: AbortSignal | undefined): Promise<T | 'elapsed' | 'aborted'> {
		if (signal?.aborted) return Promise.resolve('aborted');
		const queue = this.#queue;
		if (queue !== null) {
			const event = queue.shift()!;
			if (queue.length === 0) this.#queue = null;
			return Promise.resolve(event);
		}
		return new Promise((resolve) => {
			this.#resolve = resolve;
			if (ms < MAX_TIMER_MS)
				this.#timer = setTimeout(Inbox.#elapse, Math.max(0, ms), this as unknown as Inbox<unknown>);
			if (signal) {
				this.#signal = signal;
				signal.addEventListener('abort', this, { once: true });
			}
		});
	}

	/** The abort listener (the inbox itself, so a wait makes no closure for it). */
	handleEvent(): void {
		this.#finish('aborted');
	}

	static #elapse(this: void, inbox: Inbox<unknown>): void {
		inbox.#finish('elapsed');
	}

	#finish(value: T | 'elapsed' | 'aborted'): void {
		const resolve = this.#resolve;
		if (resolve === null) return;
		this.#resolve = null;
		if (this.#timer !== undefined) {
			clearTimeout(this.#timer);
			this.#timer = undefined;
		}
		if (this.#signal !== undefined) {
			this.#signal.removeEventListener('abort', this);
			this.#signal = undefined;
		}
		resolve(value);
	}
}
