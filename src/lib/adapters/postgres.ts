/**
 * The postgres.js transport for JobStore: Node servers, SvelteKit server routes,
 * Deno functions via SUPABASE_DB_URL.
 */
import type postgres from 'postgres';
import { adapterError } from '../internal/map-sql-error.ts';
import {
	JOB_FUNCTIONS,
	definedArgs,
	type JobAdapter,
	type JobArgValue,
	type JobCallArgs,
	type JobCallResult,
	type JobFunctionName,
	type JobFunctionSpec,
	type RawRow,
} from '../store/adapter.ts';

/**
 * JWT claims as a Supabase access token carries them (`sub`, `role`, ...).
 */
export type JwtClaims = Record<string, unknown>;

/**
 * Options of {@link postgresAdapter}.
 */
export interface PostgresAdapterOptions {
	/**
	 * Run every call "as a user": in a transaction that sets `role` and
	 * `request.jwt.claims` exactly as PostgREST does, so RLS and the grants apply
	 * as they would through supabase-js. A function is called per call (a
	 * refreshed session's claims are picked up). Without claims, calls run as the
	 * connection's own role (a worker connecting as postgres/service role).
	 */
	claims?: JwtClaims | (() => JwtClaims | Promise<JwtClaims>);
	/**
	 * The role to assume with `claims`.
	 * @default claims.role, else 'authenticated'
	 */
	role?: string;
	/**
	 * Schema holding the job_* functions.
	 * @default 'public'
	 */
	schema?: string;
}

// A postgres.js client of any type configuration: the adapter only uses unsafe() and begin().
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySql = postgres.Sql<any>;

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Array literal text, so the parameter travels untyped and the cast in SQL decides (text[], job_status[]). */
const arrayLiteral = (items: readonly string[]) =>
	`{${items.map((s) => `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;

function encode(type: string, value: JobArgValue): unknown {
	if (value === null) return null;
	// jsonb travels as the object: postgres.js learns the parameter type from the
	// server and serializes it once (stringifying here would store a JSON string).
	if (type === 'jsonb') return value;
	if (type === 'bytea') return value instanceof Uint8Array ? value : new TextEncoder().encode(String(value));
	if (type.endsWith('[]')) return arrayLiteral(value as readonly string[]);
	return typeof value === 'number' ? String(value) : value;
}

/** The functions whose rows carry the payload (the claims); the others return it null. */
const RETURNS_PAYLOAD: ReadonlySet<JobFunctionName> = new Set(['job_claim', 'job_claim_next']);

/** Builds `select ... from public.fn(name => $1::type, ...)`: one unnamed statement, fit for a transaction pooler. */
function statement<F extends JobFunctionName>(
	schema: string,
	fn: F,
	args: JobCallArgs<F>,
	returns: JobFunctionSpec['returns'],
): { text: string; params: unknown[] } {
	const params: unknown[] = [];
	const named = definedArgs(fn, args).map(([name, type, value]) => {
		params.push(encode(type, value));
		// postgres.js sends a boolean typed bool, which has no cast to jsonb (an answer may be one).
		if (type === 'jsonb' && typeof value === 'boolean')
			return `${quoteIdent(name)} => to_jsonb($${params.length}::boolean)`;
		return `${quoteIdent(name)} => $${params.length}::${type}`;
	});
	const call = `${quoteIdent(schema)}.${quoteIdent(fn)}(${named.join(', ')})`;
	switch (returns) {
		case 'status':
			return { text: `select ${call}::text as value`, params };
		case 'value':
			// As JSON, so a boolean or an object comes back exactly as PostgREST renders it.
			return { text: `select to_jsonb(${call}) as value`, params };
		case 'rows':
			return { text: `select to_jsonb(t) as row from ${call} as t`, params };
		case 'ids':
			// One text of the ids, in the function's order: one row to send and read, not one per id.
			return { text: `select string_agg(t.id::text, ',') as ids from ${call} as t`, params };
		default:
			// Everything as PostgREST would render it (timestamps keep their
			// microseconds for cursors). A claim returns the payload: it stays
			// binary, out of the JSON. Every other function returns rows whose
			// payload is null, as plain json: cheaper to build than jsonb (no key
			// sorting), ~16% off a 500-row enqueueMany through postgres.js.
			if (RETURNS_PAYLOAD.has(fn))
				return { text: `select to_jsonb(t) - 'payload' as row, t.payload from ${call} as t`, params };
			return { text: `select to_json(t) as row from ${call} as t`, params };
	}
}

/**
 * A {@link JobAdapter} over a postgres.js client. Each call is one statement
 * (or, with `claims`, one short transaction): nothing holds a connection
 * between calls, and only unnamed statements are sent, so it works through
 * Supabase's transaction pooler (create the client with `prepare: false`).
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * import { JobStore, postgresAdapter } from 'supabase-jobs';
 *
 * const sql = postgres(process.env.SUPABASE_DB_URL!, { prepare: false, max: 1 });
 * const store = new JobStore(postgresAdapter(sql), { staleAfterMs: 300_000 });
 * ```
 * @example
 * ```ts
 * // In a SvelteKit server route, as the signed-in user (RLS applies):
 * const { data } = await locals.supabase.auth.getClaims();
 * const store = new JobStore(postgresAdapter(sql, { claims: data!.claims }));
 * await store.enqueue('extract', { params: { filename } });
 * ```
 */
export function postgresAdapter(sql: AnySql, options: PostgresAdapterOptions = {}): JobAdapter {
	const schema = options.schema ?? 'public';
	const { claims } = options;

	// Named statements, prepared once per connection, when the client allows it
	// (postgres.js' default): a call is then one round trip. An unnamed statement
	// with parameters costs two (postgres.js describes it first to learn the
	// parameter types). A client made with `prepare: false` (transaction pooler)
	// keeps unnamed statements: the client's setting wins.
	const prepared = { prepare: true } as const;

	async function run(text: string, params: unknown[]): Promise<Record<string, unknown>[]> {
		if (claims === undefined)
			return (await sql.unsafe(text, params as never[], prepared)) as unknown as Record<string, unknown>[];
		const resolved = typeof claims === 'function' ? await claims() : claims;
		const role = options.role ?? (typeof resolved.role === 'string' ? resolved.role : 'authenticated');
		return (await sql.begin(async (tx) => {
			// Both statements are written at once (pipelined): the call waits for no answer to
			// set_config. If set_config fails, its error (not "transaction aborted") is the one thrown.
			const setup = tx
				.unsafe(
					`select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`,
					[role, JSON.stringify(resolved)],
					prepared,
				)
				.then(
					() => null,
					(e: unknown) => ({ e }),
				);
			try {
				return await tx.unsafe(text, params as never[], prepared);
			} catch (e) {
				throw (await setup)?.e ?? e;
			}
		})) as unknown as Record<string, unknown>[];
	}

	return {
		name: 'postgres',
		async call<F extends JobFunctionName>(fn: F, args: JobCallArgs<F>, answer?: 'ids'): Promise<JobCallResult<F>> {
			const returns = answer ?? JOB_FUNCTIONS[fn].returns;
			const { text, params } = statement(schema, fn, args, returns);
			let rows: Record<string, unknown>[];
			try {
				rows = await run(text, params);
			} catch (e) {
				throw adapterError(e, fn);
			}
			if (returns === 'status' || returns === 'value') return rows[0]?.value as JobCallResult<F>;
			if (returns === 'rows') return rows.map((r) => r.row as RawRow) as JobCallResult<F>;
			if (returns === 'ids') {
				const ids = rows[0]?.ids;
				return (typeof ids === 'string' ? ids.split(',').map((id) => ({ id })) : []) as JobCallResult<F>;
			}
			// A claim's payload comes apart as bytes; elsewhere it is in the row (null, or PostgREST's hex).
			// The row is this call's own (just parsed from JSON), so the bytes are set in place and
			// only when there are some (an absent payload reads as null): copying its ~35 keys, or even
			// adding a key to every row, cost the Node runner several us per claimed job.
			return rows.map((r) => {
				const row = r.row as RawRow;
				if (r.payload !== null && r.payload !== undefined) row.payload = r.payload;
				return row;
			}) as JobCallResult<F>;
		},
	};
}
