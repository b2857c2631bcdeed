/**
 * Waiting that honours cancellation: the smallest piece of work a handler can
 * give an AbortSignal to.
 */

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as it
 * aborts (at once when it already has). The timer is cleared either way, so a
 * cancelled job leaves nothing pending.
 *
 * @example
 * ```ts
 * await tracker.run('polling', async (signal) => {
 *   while (!(await isReady())) await delay(1000, signal);
 * });
 * ```
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) return reject(signal.reason);
		const onAbort = () => {
			clearTimeout(timer);
			reject(signal!.reason);
		};
		const timer = setTimeout(() => {
			signal?.removeEventListener('abort', onAbort);
			resolve();
		}, ms);
		signal?.addEventListener('abort', onAbort, { once: true });
	});
}
