/**
 * Forwards aborts from outside signals into a controller, and can be undone.
 * AbortSignal.any() would do the forwarding, but a worker-wide shutdown signal
 * outlives thousands of runs and would collect a listener per run; `unlink()`
 * removes them when the run settles.
 */
export interface SignalLink {
	unlink(): void;
}

/**
 *
 *
 * @example
 * const link = linkSignals(controller, [shutdown, phaseSignal], (why) => new StageInterruptedError('stopped', { cause: why }));
 */
export function linkSignals(
	controller: AbortController,
	signals: ReadonlyArray<AbortSignal | undefined>,
	reasonOf: (outsideReason: unknown) => unknown = (r) => r,
): SignalLink {
	const undo: Array<() => void> = [];
	for (const signal of signals) {
		if (!signal) continue;
		const onAbort = () => controller.abort(reasonOf(signal.reason));
		if (signal.aborted) {
			onAbort();
			break;
		}
		signal.addEventListener('abort', onAbort, { once: true });
		undo.push(() => signal.removeEventListener('abort', onAbort));
	}
	return { unlink: () => undo.splice(0).forEach((f) => f()) };
}

/**
 * A promise that rejects with the signal's reason once it aborts; never unhandled.
 *
 * @example
 * const value = await Promise.race([work, rejectOnAbort(controller.signal)]);
 */
export function rejectOnAbort(signal: AbortSignal): Promise<never> {
	const aborted = new Promise<never>((_, reject) => {
		const fail = () => reject(signal.reason);
		if (signal.aborted) fail();
		else signal.addEventListener('abort', fail, { once: true });
	});
	aborted.catch(() => {}); // observed by whoever races it
	return aborted;
}
