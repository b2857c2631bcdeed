/**
 * Forwards aborts from outside signals into a controller, and can be undone.
 * AbortSignal.any() would do the forwarding, but a worker-wide shutdown signal
 * outlives thousands of runs and would collect a listener per run; `unlink()`
 * removes them when the run settles.
 */
export interface SignalLink {
	unlink(): void;
}

export function linkSignals(controller: AbortController, signals: ReadonlyArray<AbortSignal | undefined>): SignalLink {
	const undo: Array<() => void> = [];
	for (const signal of signals) {
		if (!signal) continue;
		if (signal.aborted) {
			controller.abort(signal.reason);
			break;
		}
		const onAbort = () => controller.abort(signal.reason);
		signal.addEventListener('abort', onAbort, { once: true });
		undo.push(() => signal.removeEventListener('abort', onAbort));
	}
	return { unlink: () => undo.splice(0).forEach((f) => f()) };
}

/** The first aborted signal among these, if any. */
export function firstAborted(signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
	return signals.find((s) => s?.aborted);
}
