/**
 * /functions/v1/<name>/... -> a local target (e.g. `deno run` of the
 * function), streamed both ways. The target sees the path `/<name>/...`, as
 * the edge runtime's main service does behind the gateway. `verify_jwt`
 * (default on, as in config.toml) is checked like supabase/cli
 * internal/functions/serve/templates/main.ts: 404 "Function not found",
 * 401 `{msg: "Error: Missing authorization header"}` / `{msg: "Invalid JWT"}`.
 *
 * A target given as `{isolates}` runs under the hosted limits
 * (function-isolates.ts): a request whose isolate is killed at its wall clock
 * or CPU limit before it answered gets 546 with `sb-error-code:
 * WORKER_RESOURCE_LIMIT` and the JSON body the hosted gateway sends; one
 * killed while its answer streams is cut off. An isolate that cannot start
 * answers 503 BOOT_ERROR.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { jwtVerify } from 'jose';
import { secretKey } from './jwt.ts';
import type { FunctionIsolates, IsolateLease } from './function-isolates.ts';
import { WORKER_RESOURCE_LIMIT } from './function-limits.ts';

export type FunctionTarget =
	string | { url: string; verifyJwt?: boolean } | { isolates: Pick<FunctionIsolates, 'enter'>; verifyJwt?: boolean };

const HOP_BY_HOP = new Set([
	'connection',
	'keep-alive',
	'transfer-encoding',
	'upgrade',
	'proxy-connection',
	'te',
	'trailer',
	'host',
]);

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
	res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** The hosted gateway's answer for an error of its own: the code in `sb-error-code` and in the body. */
function gatewayError(res: ServerResponse, status: number, code: string, message: string): void {
	json(res, status, { code, message }, { 'sb-error-code': code });
}

/** The verify_jwt check; answers and returns false when it refuses. */
async function verified(req: IncomingMessage, res: ServerResponse, jwtSecret: string): Promise<boolean> {
	const auth = req.headers.authorization;
	if (!auth) return (json(res, 401, { msg: 'Error: Missing authorization header' }), false);
	const [bearer, token] = auth.split(' ');
	if (bearer !== 'Bearer') return (json(res, 401, { msg: "Error: Auth header is not 'Bearer {token}'" }), false);
	try {
		await jwtVerify(token ?? '', secretKey(jwtSecret));
		return true;
	} catch {
		return (json(res, 401, { msg: 'Invalid JWT' }), false);
	}
}

export async function proxyFunction(
	functions: Record<string, FunctionTarget>,
	jwtSecret: string,
	req: IncomingMessage,
	res: ServerResponse,
	subPath: string,
	search: string,
): Promise<void> {
	const name = subPath.split('/')[0] ?? '';
	const target = functions[name];
	if (!name || !target) {
		res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Function not found');
		return;
	}
	const verifyJwt = typeof target === 'string' || target.verifyJwt !== false;
	if (req.method !== 'OPTIONS' && verifyJwt && !(await verified(req, res, jwtSecret))) return;
	if (typeof target === 'string' || 'url' in target) {
		return forward(req, res, typeof target === 'string' ? target : target.url, `${subPath}${search}`, null);
	}
	let lease: IsolateLease;
	try {
		lease = await target.isolates.enter();
	} catch {
		return gatewayError(res, 503, 'BOOT_ERROR', 'Function failed to start (please check logs)');
	}
	return forward(req, res, lease.url, `${subPath}${search}`, lease);
}

/** Streams the request to `url` + path and the answer back; a lease's kill answers as the hosted gateway does. */
async function forward(
	req: IncomingMessage,
	res: ServerResponse,
	url: string,
	path: string,
	lease: IsolateLease | null,
): Promise<void> {
	const base = new URL(url);
	const forwardTo = new URL(`${base.pathname.replace(/\/$/, '')}/${path}`, base);
	const headers: Record<string, string | string[]> = {};
	for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
	headers.host = forwardTo.host;
	const send = forwardTo.protocol === 'https:' ? httpsRequest : httpRequest;
	await new Promise<void>((resolve) => {
		// The kill wins over the socket error it causes: the caller reads why its isolate ended.
		let over = false;
		const killed = () => {
			if (over) return;
			over = true;
			if (!res.headersSent)
				gatewayError(res, WORKER_RESOURCE_LIMIT.status, WORKER_RESOURCE_LIMIT.code, WORKER_RESOURCE_LIMIT.message);
			else res.destroy();
			upstream.destroy();
			resolve();
		};
		const upstream = send(forwardTo, { method: req.method, headers }, (up) => {
			lease?.answered();
			const out: Record<string, string | string[]> = {};
			for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
			res.writeHead(up.statusCode ?? 502, out);
			up.pipe(res);
			up.on('end', resolve);
			up.on('error', () => (lease?.kill ? killed() : resolve()));
		});
		upstream.on('error', (e) => {
			if (lease?.kill) return killed();
			if (!res.headersSent)
				json(res, 502, { code: 'BAD_GATEWAY', message: `function target unreachable: ${e.message}` });
			else res.destroy(e);
			resolve();
		});
		void lease?.killed.then(() => {
			if (!res.writableEnded) killed();
		});
		req.pipe(upstream);
	});
}
