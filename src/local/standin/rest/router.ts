/**
 * /rest/v1: authentication (jwt.ts `verifyForRest`), schema negotiation with
 * Accept-Profile (GET/HEAD) / Content-Profile (others) as PostgREST's
 * ApiRequest.hs does, then RPC or table read. Writes to tables are not part
 * of the stand-in (the job API is functions): they answer 405.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { authenticatorMayBecome, verifyForRest, wwwAuthenticate } from '../jwt.ts';
import type { Sql } from '../db.ts';
import { parseCookies, type RestContext } from './context.ts';
import { invalidBody, RestError, restErrorFromDb, unacceptableSchema, unsupportedMethod } from './errors.ts';
import type { RestResponse } from './response.ts';
import { handleRpc } from './rpc.ts';
import type { SchemaCache } from './schema.ts';
import { handleTableRead } from './table.ts';

export interface RestConfig {
	sql: Sql;
	cache: SchemaCache;
	jwtSecret: string;
	exposedSchemas: readonly string[];
	extraSearchPath: readonly string[];
	anonRole: string;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
	const v = headers[name];
	return Array.isArray(v) ? v.join(', ') : v;
}

function errorResponse(e: RestError): RestResponse {
	return {
		status: e.status,
		headers: {
			'Content-Type': 'application/json; charset=utf-8',
			'Proxy-Status': `PostgREST; error=${e.body.code}`,
			...e.headers,
		},
		body: JSON.stringify(e.body),
	};
}

/** Handles a request whose path starts with /rest/v1 (`subPath` is what follows). */
export async function handleRest(
	config: RestConfig,
	method: string,
	subPath: string,
	query: URLSearchParams,
	headers: IncomingHttpHeaders,
	rawBody: string,
): Promise<RestResponse> {
	const auth = await verifyForRest(
		config.jwtSecret,
		header(headers, 'authorization'),
		config.anonRole,
		authenticatorMayBecome(config.sql),
	);
	if (!auth.ok)
		return errorResponse(new RestError(401, auth.error, { 'WWW-Authenticate': wwwAuthenticate(auth.error) }));
	const readMethod = method === 'GET' || method === 'HEAD';
	const profile = header(headers, readMethod ? 'accept-profile' : 'content-profile');
	const schema = profile ?? config.exposedSchemas[0] ?? 'public';
	const authed = auth.role !== config.anonRole;
	try {
		if (!config.exposedSchemas.includes(schema)) throw unacceptableSchema(schema, config.exposedSchemas);
		const ctx = restContext(config, {
			method,
			subPath,
			headers,
			role: auth.role,
			claims: auth.claims,
			schema,
			profile,
		});
		const prefer = (header(headers, 'prefer') ?? '').split(',').map((s) => s.trim());
		const countExact = prefer.some((p) => /^count=(exact|planned|estimated)$/.test(p));
		const wantsSingle = (header(headers, 'accept') ?? '').includes('application/vnd.pgrst.object+json');
		const rangeHeader = header(headers, 'range');
		const rpc = /^rpc\/([^/]+)$/.exec(subPath);
		if (rpc) {
			if (!readMethod && method !== 'POST') throw unsupportedMethod(method);
			return await handleRpc(config.sql, config.cache, {
				ctx,
				name: decodeURIComponent(rpc[1]!),
				query,
				body: readMethod ? undefined : rpcBody(rawBody),
				rawBody: rawBody.trim() === '' ? '{}' : rawBody,
				rangeHeader,
				countExact,
				wantsSingle,
			});
		}
		const table = /^([^/]+)$/.exec(subPath);
		if (table && readMethod) {
			return await handleTableRead(config.sql, config.cache, {
				ctx,
				table: decodeURIComponent(table[1]!),
				query,
				rangeHeader,
				countExact,
				wantsSingle,
			});
		}
		if (table) throw unsupportedMethod(method);
		throw new RestError(404, {
			code: 'PGRST125',
			message: 'Invalid path specified in request URL',
			details: null,
			hint: null,
		});
	} catch (e) {
		return errorResponse(e instanceof RestError ? e : restErrorFromDb(e, authed));
	}
}

/** What the request says that the handlers read: its method, path, headers, cookies, role and schema. */
function restContext(
	config: RestConfig,
	request: {
		method: string;
		subPath: string;
		headers: IncomingHttpHeaders;
		role: string;
		claims: RestContext['claims'];
		schema: string;
		profile: string | undefined;
	},
): RestContext {
	const { headers } = request;
	const flatHeaders: Record<string, string> = {};
	for (const [k, v] of Object.entries(headers))
		if (v !== undefined) flatHeaders[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
	return {
		method: request.method,
		path: `/${request.subPath}`,
		headers: flatHeaders,
		cookies: parseCookies(header(headers, 'cookie')),
		role: request.role,
		claims: request.claims,
		schema: request.schema,
		profileNegotiated: request.profile !== undefined,
		authed: request.role !== config.anonRole,
		extraSearchPath: config.extraSearchPath,
	};
}

/** A call's JSON body (an empty one is `{}`); one that does not parse is refused. */
function rpcBody(rawBody: string): unknown {
	try {
		return rawBody.trim() === '' ? {} : JSON.parse(rawBody);
	} catch {
		throw invalidBody();
	}
}
