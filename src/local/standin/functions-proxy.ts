/**
 * /functions/v1/<name>/... -> a local target (e.g. `deno run` of the
 * function), streamed both ways. The target sees the path `/<name>/...`, as
 * the edge runtime's main service does behind the gateway. `verify_jwt`
 * (default on, as in config.toml) is checked like supabase/cli
 * internal/functions/serve/templates/main.ts: 404 "Function not found",
 * 401 `{msg: "Error: Missing authorization header"}` / `{msg: "Invalid JWT"}`.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { jwtVerify } from 'jose';
import { secretKey } from './jwt.ts';

export type FunctionTarget = string | { url: string; verifyJwt?: boolean };

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

function json(res: ServerResponse, status: number, body: unknown): void {
	res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
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
	const { url, verifyJwt = true } = typeof target === 'string' ? { url: target } : target;
	if (req.method !== 'OPTIONS' && verifyJwt) {
		const auth = req.headers.authorization;
		if (!auth) return json(res, 401, { msg: 'Error: Missing authorization header' });
		const [bearer, token] = auth.split(' ');
		if (bearer !== 'Bearer') return json(res, 401, { msg: "Error: Auth header is not 'Bearer {token}'" });
		try {
			await jwtVerify(token ?? '', secretKey(jwtSecret));
		} catch {
			return json(res, 401, { msg: 'Invalid JWT' });
		}
	}
	const base = new URL(url);
	const forward = new URL(`${base.pathname.replace(/\/$/, '')}/${subPath}${search}`, base);
	const headers: Record<string, string | string[]> = {};
	for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
	headers.host = forward.host;
	const send = forward.protocol === 'https:' ? httpsRequest : httpRequest;
	await new Promise<void>((resolve) => {
		const upstream = send(forward, { method: req.method, headers }, (up) => {
			const out: Record<string, string | string[]> = {};
			for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
			res.writeHead(up.statusCode ?? 502, out);
			up.pipe(res);
			up.on('end', resolve);
			up.on('error', () => resolve());
		});
		upstream.on('error', (e) => {
			if (!res.headersSent)
				json(res, 502, { code: 'BAD_GATEWAY', message: `function target unreachable: ${e.message}` });
			else res.destroy(e);
			resolve();
		});
		req.pipe(upstream);
	});
}
