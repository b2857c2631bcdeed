/**
 * For `npm run check` only (tsc/svelte-check type-check functions/ with the
 * app, under Node's types): the few Deno APIs the functions use, and the
 * `npm:` specifiers mapped to the same packages in node_modules. Deno never
 * loads this file (nothing imports it); `deno check` uses the real Deno types.
 */
declare namespace Deno {
	interface ServeOptions {
		port?: number;
		hostname?: string;
		onListen?: (address: { hostname: string; port: number }) => void;
	}
	const env: { get(name: string): string | undefined };
	function serve(options: ServeOptions, handler: (req: Request) => Response | Promise<Response>): unknown;
	function serve(handler: (req: Request) => Response | Promise<Response>): unknown;
	function exit(code?: number): never;
	const pid: number;
}

declare module 'npm:zod@^4' {
	export * from 'zod';
}
