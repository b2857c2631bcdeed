/**
 * The supabase-js transport for JobStore: browsers, edge functions, anything
 * holding a Supabase client. Calls go through PostgREST (`client.rpc`), so the
 * caller's JWT decides the role and RLS applies.
 */
import { adapterError } from '../internal/map-sql-error.ts';
import {
	JOB_FUNCTIONS,
	definedArgs,
	type JobAdapter,
	type JobArgValue,
	type JobCallArgs,
	type JobCallResult,
	type JobFunctionName,
	type RawRow,
} from '../store/adapter.ts';
import { supabaseRealtime, type SupabaseRealtimeClient } from './supabase-realtime.ts';

/** What a PostgREST call resolves to (supabase-js never throws without throwOnError). */
interface RpcResponse {
	data: unknown;
	error: unknown;
}

interface RpcCaller {
	rpc(fn: string, args?: Record<string, unknown>): PromiseLike<RpcResponse>;
}

/**
 * The part of a supabase-js `SupabaseClient` the adapter uses: `rpc`, and
 * `schema` when the job functions live outside `public`.
 */
export interface SupabaseRpcClient extends RpcCaller {
	schema(name: string): RpcCaller;
}

/**
 * Options of {@link supabaseAdapter}.
 */
export interface SupabaseAdapterOptions {
	/**
	 * Schema holding the job_* functions (sent as Content-Profile). It must be
	 * one of the API's exposed schemas.
	 * @default 'public'
	 */
	schema?: string;
	/**
	 * Follow jobs over Realtime (private Broadcast topics) when the client has
	 * it: `watch` then costs no query per tick, and `subscribeList` pushes list
	 * changes. `false` makes the store poll, as it does over postgres.js.
	 * @default true
	 */
	realtime?: boolean;
	/**
	 * The project's PostgREST `max_rows` (supabase/config.toml `[api] max_rows`;
	 * dashboard: API settings, "Max rows"): no reply carries more rows, RPC
	 * results included. Batches larger than this are sent as several calls, so
	 * every id and job comes back. Set it when the project lowered it; a higher
	 * project value works with the default too.
	 * @default 1000
	 */
	maxRows?: number;
}

/** Hosted Supabase's PostgREST `max_rows` (the Supabase CLI's config.toml default too). */
export const HOSTED_MAX_ROWS = 1000;

const HEX_DIGITS = new TextEncoder().encode('0123456789abcdef');

/**
 * PostgreSQL's `\x` hex form. The digits are written into a byte array and
 * decoded once: appending two characters per byte to a string took ~18 s for
 * the documented 10 MiB payload (found by test/chaos/bad-input.test.ts). No
 * Buffer: browsers and Deno have none.
 */
const hex = (bytes: Uint8Array) => {
	const out = new Uint8Array(2 + bytes.length * 2);
	out[0] = 0x5c; // '\'
	out[1] = 0x78; // 'x'
	for (let i = 0; i < bytes.length; i++) {
		const b = bytes[i]!;
		out[2 + 2 * i] = HEX_DIGITS[b >> 4]!;
		out[3 + 2 * i] = HEX_DIGITS[b & 15]!;
	}
	return new TextDecoder().decode(out);
};

/** JSON for PostgREST: bytea as its `\x` hex input, everything else as JSON already is. */
function encode(type: string, value: JobArgValue): unknown {
	if (value === null) return null;
	if (type === 'bytea') return hex(value instanceof Uint8Array ? value : new TextEncoder().encode(String(value)));
	return value;
}

/**
 * A {@link JobAdapter} over a supabase-js client: each store call is one
 * `client.rpc('job_...', args)` request. PostgREST error bodies go through the
 * same SQLSTATE table as postgres.js errors, so the same error class comes out
 * (PT410 -> JobCancelledError, 22023 -> InvalidJobInputError naming the
 * TypeScript field...); an error of no known code is a DatabaseError.
 * When the client has Realtime (a full `SupabaseClient` does), the adapter
 * also carries the Realtime capability: `watch` and `subscribeList` listen on
 * private Broadcast topics and fall back to polling where Realtime is refused
 * or unreachable.
 *
 * @example
 * ```ts
 * import { createClient } from '@supabase/supabase-js';
 * import { JobStore, supabaseAdapter } from 'supabase-jobs';
 *
 * const supabase = createClient(PUBLIC_SUPABASE_URL, PUBLIC_SUPABASE_PUBLISHABLE_KEY);
 * const store = new JobStore(supabaseAdapter(supabase));
 * const job = await store.enqueue('extract', { params: { filename: 'tender.pdf' } });
 *
 * // Over Realtime: the bar moves as the worker ticks, with no query per tick.
 * for await (const j of store.watch(job.id, { emitOn: ['status', 'progress', 'stage'] })) render(j);
 * ```
 */
export function supabaseAdapter(
	client: SupabaseRpcClient & Partial<SupabaseRealtimeClient>,
	options: SupabaseAdapterOptions = {},
): JobAdapter {
	const schema = options.schema ?? 'public';
	const maxRows = options.maxRows ?? HOSTED_MAX_ROWS;
	if (!Number.isInteger(maxRows) || maxRows < 1)
		throw new RangeError(
			`supabaseAdapter: maxRows must be a positive integer (the project's [api] max_rows); got ${maxRows}`,
		);
	const target: RpcCaller = schema === 'public' ? client : client.schema(schema);
	const hasRealtime =
		options.realtime !== false &&
		typeof client.channel === 'function' &&
		typeof client.removeChannel === 'function' &&
		typeof client.realtime?.setAuth === 'function';

	return {
		name: 'supabase',
		maxRows,
		...(hasRealtime ? { realtime: supabaseRealtime(client as SupabaseRealtimeClient) } : {}),
		async call<F extends JobFunctionName>(fn: F, args: JobCallArgs<F>, answer?: 'ids'): Promise<JobCallResult<F>> {
			const body: Record<string, unknown> = {};
			for (const [name, type, value] of definedArgs(fn, args)) body[name] = encode(type, value);
			let response: RpcResponse;
			try {
				response = await target.rpc(fn, body);
			} catch (e) {
				throw adapterError(e, fn);
			}
			const { data, error } = response;
			// Always a JobError: a PostgREST body is a plain object, never an Error, even when its code is unknown.
			if (error) throw adapterError(error, fn);
			const returns = JOB_FUNCTIONS[fn].returns;
			if (returns === 'status' || returns === 'value') return data as JobCallResult<F>;
			// One composite comes back as an object, a set as an array ([] when empty).
			const rows: RawRow[] = data == null ? [] : Array.isArray(data) ? data : [data];
			// PostgREST sends the whole rows either way; the caller asked for their ids.
			if (answer === 'ids') return rows.map((r) => ({ id: r.id })) as JobCallResult<F>;
			return rows as JobCallResult<F>;
		},
	};
}
