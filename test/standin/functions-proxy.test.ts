/**
 * /functions/v1/<name> through supabase-js `functions.invoke` to a local
 * target, with verify_jwt as supabase/cli internal/functions/serve/templates/main.ts;
 * and a real Deno function held to the hosted Edge Functions limits (wall
 * clock, CPU per request) as supabase/edge-runtime's per-worker supervisor
 * holds an isolate, answered as the hosted gateway answers (546, 503).
 */
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild } from '../../src/local/demo/processes.ts';
import { FunctionIsolates, type IsolateKill } from '../../src/local/standin/function-isolates.ts';
import { type FunctionLimits } from '../../src/local/standin/function-limits.ts';
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

/**
 * A real Deno function under limits far shorter than hosted ones (150 s wall
 * clock, 2 s CPU): the same kills, in seconds, so the tests are short.
 */
function limited(limits: FunctionLimits): FunctionIsolates {
	return new FunctionIsolates({
		name: 'limits-function',
		limits,
		ready: /limits-function listening on (http:\/\/\S+)/,
		start: (echo) =>
			startChild(
				'limits-function',
				resolve('node_modules/.bin/deno'),
				['run', '-A', '--config', 'functions/jobs-worker/deno.json', 'test/standin/fixtures/limits-function.ts'],
				{ cwd: resolve('.'), env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', PORT: '0' }, echo },
			),
	});
}
const cpuLimited = limited({ wallClockMs: Infinity, cpuMs: 1000 });
const clockLimited = limited({ wallClockMs: 6000, cpuMs: Infinity });
/** A function that exits before it listens. */
const broken = new FunctionIsolates({
	name: 'broken',
	limits: { wallClockMs: 6000, cpuMs: 1000 },
	ready: /listening on (http:\/\/\S+)/,
	start: (echo) =>
		startChild('broken', resolve('node_modules/.bin/deno'), ['eval', 'Deno.exit(3)'], {
			cwd: resolve('.'),
			env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
			echo,
		}),
});

const db = await useTestDatabase();
const standin = await createStandin({
	databaseUrl: db.url,
	jwtSecret: JWT_SECRET,
	functions: {
		worker: { url: targetUrl, verifyJwt: false },
		secure: targetUrl,
		stream: targetUrl,
		cpu: { isolates: cpuLimited, verifyJwt: false },
		clock: { isolates: clockLimited, verifyJwt: false },
		broken: { isolates: broken, verifyJwt: false },
	},
});
afterAll(async () => {
	await Promise.all([cpuLimited.stop(), clockLimited.stop(), broken.stop()]);
	await standin.close();
	target.close();
});

const call = (path: string) => fetch(`${standin.url}/functions/v1/${path}`, { method: 'POST' });
const pidOf = async (res: Response) => ((await res.json()) as { pid: number }).pid;

/** The next kill of `pid` (already made, or still to come), within `timeoutMs`. */
async function killOf(pool: FunctionIsolates, pid: number, timeoutMs: number): Promise<IsolateKill> {
	await pool.waitForLine(new RegExp(`isolate ${pid} killed`), timeoutMs);
	return pool.kills.find((k) => k.pid === pid)!;
}

/** The pid of a just-started isolate: the newest is ended, so the next request starts one. */
async function freshIsolate(pool: FunctionIsolates, name: string): Promise<number> {
	const newest = pool.current;
	newest.kill();
	await newest.exited;
	return pidOf(await call(`${name}/pid`));
}

async function expectWorkerLimit(res: Response): Promise<void> {
	expect(res.status).toBe(546);
	expect(res.headers.get('sb-error-code')).toBe('WORKER_RESOURCE_LIMIT');
	expect(await res.json()).toEqual({
		code: 'WORKER_RESOURCE_LIMIT',
		message: 'Function failed due to not having enough compute resources (please check logs)',
	});
}

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

describe('hosted limits on a function (real Deno)', () => {
	it('a request that uses more CPU than the limit gets 546 WORKER_RESOURCE_LIMIT; its isolate is SIGKILLed and the next request gets a fresh one', async () => {
		const first = await pidOf(await call('cpu/pid'));
		const burnt = cpuLimited.current;
		await expectWorkerLimit(await call('cpu/burn?ms=20000'));
		expect((await burnt.exited).signal).toBe('SIGKILL');
		const kill = await killOf(cpuLimited, first, 1000);
		expect(kill).toMatchObject({ limit: 'cpu' });
		// Sampled every 50 ms at 10 ms resolution: killed just past the limit, far before the burn's end.
		expect(kill.cpuMs).toBeGreaterThan(1000);
		expect(kill.cpuMs).toBeLessThan(3000);
		const next = await pidOf(await call('cpu/pid'));
		expect(next).not.toBe(first);
	});

	it('work after the answer is charged to its request, as waitUntil work is: the isolate is killed at the CPU limit', async () => {
		const res = await call('cpu/burn-after?ms=20000');
		expect(res.status).toBe(200);
		const pid = await pidOf(res);
		expect(await killOf(cpuLimited, pid, 15_000)).toMatchObject({ limit: 'cpu' });
	});

	it('a request still waiting at the wall clock gets 546, its finally never runs, and the next request gets a fresh isolate', async () => {
		const pid = await freshIsolate(clockLimited, 'clock');
		const doomed = clockLimited.current;
		expect(doomed.process.pid).toBe(pid);
		await expectWorkerLimit(await call('clock/sleep?ms=60000'));
		const answeredAt = Date.now();
		const kill = await killOf(clockLimited, pid, 1000);
		expect(kill.limit).toBe('wall_clock');
		expect(kill.ageMs).toBeGreaterThanOrEqual(6000);
		// The 546 came from this kill (not from another isolate's).
		expect(answeredAt - kill.at).toBeLessThan(1000);
		expect((await doomed.exited).signal).toBe('SIGKILL');
		expect(clockLimited.lines.some((l) => l.includes(`finally ran in ${pid}`))).toBe(false);
		expect(await pidOf(await call('clock/pid'))).not.toBe(pid);
	});

	it('an isolate past half its wall clock answers what it holds but takes no new request; it is killed at its wall clock', async () => {
		const pid = await freshIsolate(clockLimited, 'clock');
		// Answered past half its wall clock (3 s of 6), by the same isolate.
		expect(await pidOf(await call('clock/sleep?ms=3500'))).toBe(pid);
		const next = await pidOf(await call('clock/pid'));
		expect(next).not.toBe(pid);
		expect(clockLimited.kills.some((k) => k.pid === pid)).toBe(false);
		expect((await killOf(clockLimited, pid, 6000)).limit).toBe('wall_clock');
	});

	it('a function that cannot start answers 503 BOOT_ERROR', async () => {
		const res = await call('broken');
		expect(res.status).toBe(503);
		expect(res.headers.get('sb-error-code')).toBe('BOOT_ERROR');
		expect(await res.json()).toMatchObject({ code: 'BOOT_ERROR' });
	});
});
