/**
 * /functions/v1/<name> through supabase-js `functions.invoke` to a local
 * target, with verify_jwt as supabase/cli internal/functions/serve/templates/main.ts.
 */
import { createServer } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createStandin } from '../../src/local/standin/server.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { JWT_SECRET } from './helpers.ts';
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';

const target = createServer(async (req, res) => {
	const chunks: Buffer[] = [];
	for await (const c of req) chunks.push(c as Buffer);
	if (req.url?.startsWith('/stream')) {
		res.writeHead(200, { 'content-type': 'text/plain' });
		res.write('one\n');
		setImmediate(() => res.end('two\n'));
		return;
	}
	res.writeHead(201, { 'content-type': 'application/json', 'x-target': 'yes' });
	res.end(
		JSON.stringify({
			method: req.method,
			url: req.url,
			auth: req.headers.authorization ?? null,
			body: Buffer.concat(chunks).toString(),
		}),
	);
});
await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
const address = target.address();
const targetUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

const db = await useTestDatabase();
const standin = await createStandin({
	databaseUrl: db.url,
	jwtSecret: JWT_SECRET,
	functions: { worker: { url: targetUrl, verifyJwt: false }, secure: targetUrl, stream: targetUrl },
});
afterAll(async () => {
	await standin.close();
	target.close();
});

describe('functions proxy', () => {
	it('forwards method, path /<name>/..., headers and body, and returns status, headers and body', async () => {
		const supabase = createClient(standin.url, standin.anonKey, { realtime: { transport: WebSocket as never } });
		const { data, error } = await supabase.functions.invoke('secure/sub?x=1', { body: { hello: 'world' } });
		expect(error).toBeNull();
		expect(data).toEqual({
			method: 'POST',
			url: '/secure/sub?x=1',
			auth: `Bearer ${standin.anonKey}`,
			body: '{"hello":"world"}',
		});
	});

	it('refuses a missing or invalid JWT when verify_jwt is on, as the edge runtime does', async () => {
		const missing = await fetch(`${standin.url}/functions/v1/secure`, { method: 'POST' });
		expect(missing.status).toBe(401);
		expect(await missing.json()).toEqual({ msg: 'Error: Missing authorization header' });
		const invalid = await fetch(`${standin.url}/functions/v1/secure`, {
			method: 'POST',
			headers: { Authorization: 'Bearer nope' },
		});
		expect(invalid.status).toBe(401);
		expect(await invalid.json()).toEqual({ msg: 'Invalid JWT' });
	});

	it('passes requests without a JWT when verify_jwt is off, and 404s unknown functions', async () => {
		const res = await fetch(`${standin.url}/functions/v1/worker`, { method: 'POST', body: 'kick' });
		expect(res.status).toBe(201);
		expect(res.headers.get('x-target')).toBe('yes');
		expect((await res.json()).body).toBe('kick');
		const unknown = await fetch(`${standin.url}/functions/v1/nope`);
		expect(unknown.status).toBe(404);
		expect(await unknown.text()).toBe('Function not found');
	});

	it('streams the response body', async () => {
		const res = await fetch(`${standin.url}/functions/v1/stream`, {
			headers: { Authorization: `Bearer ${standin.anonKey}` },
		});
		expect(await res.text()).toBe('one\ntwo\n');
	});
});
