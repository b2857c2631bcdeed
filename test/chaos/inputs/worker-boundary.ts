/**
 * The worker endpoint: functions/jobs-worker under real Deno, reached through
 * the stand-in's functions gateway (/functions/v1/jobs-worker, verify_jwt off
 * as deployed: the worker checks its own secret). Wrong, forged and expired
 * secrets and wake-up tokens, JWTs where the secret belongs, wrong methods,
 * malformed and huge bodies, wrong types, and well-formed wake-ups naming
 * nothing it may run (unknown kinds, tables and ids, another user's job).
 */
import { signWakeUpToken } from '../../../src/lib/worker/bearer-secret.ts';
import { NIL_UUID } from './hostile.ts';
import { describeInput, type Tally } from './tally.ts';

export interface WorkerCase {
	name: string;
	method?: string;
	authorization?: string | null;
	body?: string;
	status: number;
	/** The `error` field of the answer. */
	error?: string;
	/** What the message must name. */
	names?: RegExp;
}

const BOUNDARY = 'worker';

export async function sendWorkerCase(url: string, c: WorkerCase, tally: Tally): Promise<void> {
	tally.count(BOUNDARY);
	const headers: Record<string, string> = { 'content-type': 'application/json' };
	if (c.authorization) headers.authorization = c.authorization;
	let res: Response;
	try {
		res = await fetch(url, { method: c.method ?? 'POST', headers, body: c.method === 'GET' ? undefined : c.body });
	} catch (e) {
		tally.problem(BOUNDARY, c.name, `no answer: ${String(e)}`);
		return;
	}
	const text = await res.text();
	if (res.status !== c.status) {
		tally.problem(BOUNDARY, c.name, `status ${res.status} (wanted ${c.status}): ${text.slice(0, 200)}`);
		return;
	}
	let body: { error?: unknown; message?: unknown; accepted?: unknown } = {};
	try {
		body = JSON.parse(text) as typeof body;
	} catch {
		tally.problem(BOUNDARY, c.name, `answer is not JSON: ${text.slice(0, 120)}`);
		return;
	}
	if (c.error !== undefined && body.error !== c.error)
		tally.problem(BOUNDARY, c.name, `error ${String(body.error)} (wanted ${c.error})`);
	if (c.names && !c.names.test(String(body.message)))
		tally.problem(BOUNDARY, c.name, `message does not name ${String(c.names)}: ${String(body.message)}`);
}

export interface WorkerIdentities {
	secret: string;
	anonKey: string;
	serviceRoleKey: string;
	userToken: string;
	otherUsersJob: string;
}

export async function workerCases(ids: WorkerIdentities): Promise<WorkerCase[]> {
	const now = Math.floor(Date.now() / 1000);
	const secret = `Bearer ${ids.secret}`;
	const kick = JSON.stringify({ job_id: NIL_UUID });
	const unauthorized = (name: string, authorization: string | null): WorkerCase => ({
		name,
		authorization,
		body: kick,
		status: 401,
		error: 'unauthorized',
	});
	const bad = (name: string, body: string, names: RegExp): WorkerCase => ({
		name,
		authorization: secret,
		body,
		status: 400,
		error: 'bad_request',
		names,
	});
	const accepted = (name: string, body: unknown): WorkerCase => ({
		name,
		authorization: secret,
		body: JSON.stringify(body),
		status: 202,
	});
	return [
		// Who may wake it: the secret, or a fresh token signed with it. Nothing else.
		unauthorized('no authorization', null),
		unauthorized('a wrong secret', 'Bearer not-the-secret-0123456789'),
		unauthorized('the secret with one character more', `${secret}x`),
		unauthorized('the secret as Basic', `Basic ${Buffer.from(`x:${ids.secret}`).toString('base64')}`),
		unauthorized('the secret without Bearer', ids.secret),
		unauthorized('the anon key (a JWT of the wrong role)', `Bearer ${ids.anonKey}`),
		unauthorized('the service role key (a JWT is not the secret)', `Bearer ${ids.serviceRoleKey}`),
		unauthorized("a user's access token", `Bearer ${ids.userToken}`),
		unauthorized('an expired wake-up token', `Bearer ${await signWakeUpToken(ids.secret, now - 3600)}`),
		unauthorized('a wake-up token from the future', `Bearer ${await signWakeUpToken(ids.secret, now + 3600)}`),
		unauthorized('a forged wake-up token', `Bearer v1.${now}.${'0'.repeat(64)}`),
		unauthorized(
			'a token signed with another secret',
			`Bearer ${await signWakeUpToken('another-secret-0123456789', now)}`,
		),
		unauthorized('a hostile header', "Bearer ' or 1=1 --"),
		{ name: 'GET', method: 'GET', authorization: secret, status: 405, error: 'method_not_allowed' },
		{ name: 'PUT', method: 'PUT', authorization: secret, body: kick, status: 405, error: 'method_not_allowed' },
		{ name: 'DELETE', method: 'DELETE', authorization: secret, status: 405, error: 'method_not_allowed' },
		// What it may be asked: malformed JSON, wrong types and sizes are named.
		...['{', '{"job_id": }', "{'job_id': 1}", 'nul\u0000', '[{]'].map((b) =>
			bad(`malformed JSON ${describeInput(b)}`, b, /JSON/),
		),
		bad('a 12 MB body that is not JSON', '['.repeat(12 * 1024 * 1024), /JSON/),
		bad('an array', '[]', /body/),
		bad('null', 'null', /body/),
		bad('a string', '"wake up"', /body/),
		bad('a non-UUID job_id', JSON.stringify({ job_id: 'not-a-uuid' }), /job_id/),
		bad('a numeric job_id', JSON.stringify({ job_id: 42 }), /job_id/),
		bad('an SQL job_id', JSON.stringify({ job_id: "'; drop table jobs; --" }), /job_id/),
		bad('a job_id with a NUL byte', JSON.stringify({ job_id: `${NIL_UUID}\u0000` }), /job_id/),
		bad('an empty job_table', JSON.stringify({ job_table: '' }), /job_table/),
		bad('a 300-character job_table', JSON.stringify({ job_table: 't'.repeat(300) }), /job_table/),
		bad('job_table as an object', JSON.stringify({ job_table: { a: 1 } }), /job_table/),
		bad('kind as a number', JSON.stringify({ kind: 5 }), /kind/),
		bad('an empty kind', JSON.stringify({ kind: '' }), /kind/),
		bad('a negative count', JSON.stringify({ count: -1 }), /count/),
		bad('a fractional count', JSON.stringify({ count: 1.5 }), /count/),
		bad('count as a word', JSON.stringify({ count: 'many' }), /count/),
		bad('a 200-character reason', JSON.stringify({ reason: 'r'.repeat(200) }), /reason/),
		// Well formed, naming nothing it may run: accepted (the wake-up is asynchronous) and nothing changes.
		accepted('an unknown job', { job_id: NIL_UUID }),
		accepted("another user's job of a kind it has no handler for", { job_id: ids.otherUsersJob }),
		accepted('an unknown kind', { kind: 'chaos.unknown' }),
		accepted('a hostile kind', { kind: "x'; drop table jobs; --" }),
		accepted('an unknown job table', { job_table: 'no_such_table' }),
		accepted('a hostile job table', { job_table: 'jobs; drop table jobs' }),
		accepted('an unknown job in a hostile table', { job_id: NIL_UUID, job_table: '"jobs"' }),
	];
}
