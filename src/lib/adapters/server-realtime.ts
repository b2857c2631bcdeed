/**
 * The `realtime` option of a supabase-js client made on a server, where
 * nothing subscribes (SvelteKit hooks, `load`, form actions): supabase-js
 * builds its Realtime client eagerly, and realtime-js refuses to construct
 * one without a WebSocket, which Node 20 does not have. Without a transport,
 * `createClient` and @supabase/ssr's `createServerClient` throw on Node 20
 * for every request.
 */
import type { WebSocketLikeConstructor } from '@supabase/realtime-js';

/** Said when something does try to open Realtime on a runtime without WebSocket. */
const NO_WEBSOCKET =
	'supabase-jobs: this runtime has no WebSocket (Node 20), so this client cannot open Realtime. ' +
	'A server renders from the row its load read and never subscribes; to follow jobs from a Node 20 ' +
	"process, give supabase-js a transport yourself (realtime: { transport: WebSocket } from the 'ws' package), or run Node 22 or later.";

/** A transport that refuses to connect, saying why: realtime-js only constructs it when a channel joins. */
class NoWebSocket {
	constructor() {
		throw new Error(NO_WEBSOCKET);
	}
}

/**
 * `realtime` options for a server's supabase-js client. Where the runtime has
 * a WebSocket (Node 22 and later, Deno, browsers) it is that one, unchanged;
 * on Node 20 it is a transport that refuses to connect with a sentence saying
 * why, so the client can be created (for `rpc`, auth, storage) and only a
 * Realtime join fails. A server that renders a job page needs no Realtime:
 * `WatchedJob` reads its source only in the browser.
 *
 * The same option suits a client created at module level in a module the
 * server imports too (a `$lib/supabase.ts` that pages import): in the browser
 * it is the browser's own WebSocket, so the page's watch is unchanged.
 *
 * @example
 * ```ts
 * // src/hooks.server.ts
 * import { createServerClient } from '@supabase/ssr';
 * import { serverRealtime } from 'supabase-jobs';
 *
 * event.locals.supabase = createServerClient(PUBLIC_SUPABASE_URL, PUBLIC_SUPABASE_PUBLISHABLE_KEY, {
 * 	cookies: { getAll: () => event.cookies.getAll(), setAll: (all) => all.forEach(({ name, value, options }) => event.cookies.set(name, value, { ...options, path: '/' })) },
 * 	realtime: serverRealtime,
 * });
 * ```
 */
export const serverRealtime: { readonly transport: WebSocketLikeConstructor } = Object.freeze({
	transport: ((globalThis as { WebSocket?: unknown }).WebSocket ?? NoWebSocket) as WebSocketLikeConstructor,
});
