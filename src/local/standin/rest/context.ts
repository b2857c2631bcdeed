/**
 * One REST request's database transaction, set up as PostgREST >= 12 does
 * (src/library/PostgREST/Query/PreQuery.hs `txVarQuery`): search_path, the
 * role's own settings (role-settings.ts: statement_timeout...), role,
 * request.jwt.claims (with `role` inserted), request.method, request.path,
 * request.headers and request.cookies, all transaction-local.
 */
import type { Claims } from '../jwt.ts';
import type { Sql, Tx } from '../db.ts';
import { ident } from './schema.ts';

export interface RestContext {
	method: string;
	path: string;
	/** Lower-cased header names, as PostgREST exposes them in request.headers. */
	headers: Record<string, string>;
	cookies: Record<string, string>;
	role: string;
	claims: Claims;
	/** The schema chosen by Accept-Profile / Content-Profile. */
	schema: string;
	/** Whether the client named the schema (then Content-Profile is echoed). */
	profileNegotiated: boolean;
	/** True unless the request runs as the anon role (Error.hs: 42501 -> 403 vs 401). */
	authed: boolean;
	extraSearchPath: readonly string[];
	/** The role's `ALTER ROLE ... SET` settings, set before the role as PostgREST does. */
	roleSettings: readonly (readonly [string, string])[];
}

export function parseCookies(header: string | undefined): Record<string, string> {
	const out: Record<string, string> = {};
	for (const part of (header ?? '').split(';')) {
		const eq = part.indexOf('=');
		if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
	}
	return out;
}

/** Runs `fn` in a transaction whose settings are the request's. */
export async function inRequestTransaction<T>(
	sql: Sql,
	ctx: RestContext,
	readOnly: boolean,
	fn: (tx: Tx) => Promise<T>,
): Promise<T> {
	const searchPath = [...new Set([ctx.schema, ...ctx.extraSearchPath])].map(ident).join(', ');
	const claims = { ...ctx.claims, role: ctx.role };
	const settings = ctx.roleSettings.map((_, i) => `set_config($${8 + 2 * i}, $${9 + 2 * i}, true), `).join('');
	const run = async (tx: Tx) => {
		await tx.unsafe(
			`select set_config('search_path', $1, true), ${settings}set_config('role', $2, true), set_config('request.jwt.claims', $3, true),
			        set_config('request.method', $4, true), set_config('request.path', $5, true),
			        set_config('request.headers', $6, true), set_config('request.cookies', $7, true)`,
			[
				searchPath,
				ctx.role,
				JSON.stringify(claims),
				ctx.method,
				ctx.path,
				JSON.stringify(ctx.headers),
				JSON.stringify(ctx.cookies),
				...ctx.roleSettings.flat(),
			],
		);
		return await fn(tx);
	};
	return (await (readOnly ? sql.begin('read only', run) : sql.begin(run))) as T;
}
