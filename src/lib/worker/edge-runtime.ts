/**
 * The two Supabase edge-runtime hooks the worker uses, guarded: under the
 * Deno CLI (and in Node) `EdgeRuntime` is undefined, and only Deno and
 * browsers have a global `addEventListener`.
 */

interface EdgeRuntimeLike {
	waitUntil(promise: Promise<unknown>): void;
}

/**
 * `EdgeRuntime.waitUntil` when running on Supabase's edge runtime, else null.
 *
 * @example
 * ```ts
 * const waitUntil = edgeWaitUntil();
 * if (waitUntil) waitUntil(work); else keep.add(work);
 * ```
 */
export function edgeWaitUntil(): ((promise: Promise<unknown>) => void) | null {
	const runtime = (globalThis as { EdgeRuntime?: Partial<EdgeRuntimeLike> }).EdgeRuntime;
	if (typeof runtime?.waitUntil !== 'function') return null;
	return (promise) => runtime.waitUntil!(promise);
}

/**
 * Listens for `beforeunload` on the global scope when there is one (the edge
 * runtime fires it near the wall-clock or CPU limit; it is a warning, not a
 * guarantee). Returns the function that stops listening.
 *
 * @example
 * ```ts
 * const stop = onBeforeUnload(() => void worker.releaseAll('isolate ending'));
 * ```
 */
export function onBeforeUnload(listener: (event: Event) => void): () => void {
	const scope = globalThis as {
		addEventListener?: (type: string, listener: (event: Event) => void) => void;
		removeEventListener?: (type: string, listener: (event: Event) => void) => void;
	};
	if (typeof scope.addEventListener !== 'function') return () => {};
	scope.addEventListener('beforeunload', listener);
	return () => scope.removeEventListener?.('beforeunload', listener);
}
