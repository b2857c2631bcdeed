/**
 * The REST boundary: raw HTTP to the stand-in's /rest/v1 (PostgREST's
 * contract), so nothing in a client library smooths the input. The gateway and
 * JWT checks, every public job_* function found in pg_proc with values of the
 * wrong JSON type, and named cases: malformed JSON, missing and unknown
 * fields, huge bodies, unknown kinds, non-UUID and other users' ids, the
 * table endpoint's filters. Each answer must be a 4xx with PostgREST's
 * `{code, message}` body naming the problem.
 */
import { SignJWT } from 'jose';
import type { Standin } from '../../../src/local/standin/server.ts';
import { HOSTILE_STRINGS, NIL_UUID } from './hostile.ts';
import type { JobFunction } from './sql-boundary.ts';
import { FREE_TEXT_PARAMS } from './sql-values.ts';
import { describeInput, type Tally } from './tally.ts';

export interface RestCase {
	name: string;
	method?: string;
	path: string;
	headers?: Record<string, string>;
	body?: string;
	/** The expected status (default: any 4xx). */
	status?: number;
	/** The expected `code` of the body (string or pattern). */
	code?: string | RegExp;
	/** What the message (or details/hint) must name. */
	names?: RegExp;
	/** A read may answer 200 (an empty result) instead of an error. */
	readMayAnswer?: boolean;
	/** The HTTP server answers before PostgREST (e.g. 431 for an oversized URL): no JSON body. */
	raw?: boolean;
}

export interface RestIdentities {
	userToken: string;
	userId: string;
	ownJob: string;
	otherUsersJob: string;
	jwtSecret: string;
}

const BOUNDARY = 'rest';

/** Sends one case and checks the answer; problems go to the tally. */
export async function sendCase(standin: Standin, c: RestCase, tally: Tally, boundary = BOUNDARY): Promise<void> {
	tally.count(boundary);
	const headers: Record<string, string> = { apikey: standin.anonKey, 'content-type': 'application/json', ...c.headers };
	for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
	let res: Response;
	try {
		res = await fetch(`${standin.url}/rest/v1/${c.path}`, { method: c.method ?? 'POST', headers, body: c.body });
	} catch (e) {
		tally.problem(boundary, c.name, `no answer: ${String(e)}`);
		return;
	}
	const text = await res.text();
	if (c.raw) {
		if (res.status !== c.status) tally.problem(boundary, c.name, `status ${res.status} (wanted ${c.status})`);
		return;
	}
	let body: { code?: unknown; message?: unknown; details?: unknown; hint?: unknown } = {};
	try {
		body = JSON.parse(text) as typeof body;
	} catch {
		tally.problem(boundary, c.name, `${res.status} with a body that is not JSON: ${text.slice(0, 120)}`);
		return;
	}
	const ok =
		c.status !== undefined
			? res.status === c.status
			: (res.status >= 400 && res.status < 500) || (c.readMayAnswer === true && res.status === 200);
	if (!ok) {
		tally.problem(boundary, c.name, `status ${res.status} (wanted ${c.status ?? '4xx'}): ${text.slice(0, 200)}`);
		return;
	}
	if (res.status < 400) return;
	const message = typeof body.message === 'string' ? body.message : '';
	if (message.trim() === '') tally.problem(boundary, c.name, `no message: ${text.slice(0, 200)}`);
	if (c.code !== undefined) {
		const code = String(body.code);
		const matches = typeof c.code === 'string' ? code === c.code : c.code.test(code);
		if (!matches) tally.problem(boundary, c.name, `code ${code} (wanted ${String(c.code)}): ${message}`);
	}
	const said = [message, body.details, body.hint].filter((s) => typeof s === 'string').join(' | ');
	if (c.names && !c.names.test(said)) tally.problem(boundary, c.name, `does not name ${String(c.names)}: ${said}`);
	if (body.code === '22023' && !/field=/.test(String(body.details)))
		tally.problem(boundary, c.name, `22023 without field: ${said}`);
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function sign(secret: string, claims: Record<string, unknown>, alg = 'HS256'): Promise<string> {
	return await new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

/** Tokens that must not get in: forged, expired, not yet valid, wrong role, malformed. */
export async function badTokens(secret: string, sub: string): Promise<[string, string, RegExp][]> {
	const now = Math.floor(Date.now() / 1000);
	const user = { sub, aud: 'authenticated', role: 'authenticated', iat: now, exp: now + 3600 };
	const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
	return [
		['forged (another secret)', await sign('another-secret-with-at-least-32-characters!!', user), /PGRST301/],
		['expired', await sign(secret, { ...user, iat: now - 7200, exp: now - 3600 }), /PGRST303/],
		['not yet valid', await sign(secret, { ...user, nbf: now + 3600 }), /PGRST303/],
		['issued in the future', await sign(secret, { ...user, iat: now + 3600 }), /PGRST303/],
		['exp not a number', await sign(secret, { ...user, exp: 'tomorrow' }), /PGRST303/],
		['role postgres', await sign(secret, { ...user, role: 'postgres' }), /PGRST301/],
		['role supabase_admin', await sign(secret, { ...user, role: 'supabase_admin' }), /PGRST301/],
		['role authenticator', await sign(secret, { ...user, role: 'authenticator' }), /PGRST301/],
		['role with SQL', await sign(secret, { ...user, role: "authenticated'; drop table jobs; --" }), /PGRST301/],
		['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${b64(user)}.`, /PGRST301/],
		['two parts', `${b64({ alg: 'HS256' })}.${b64(user)}`, /PGRST301/],
		['garbage', 'not.a.jwt', /PGRST301/],
		[
			'claims not an object',
			await sign(secret, { ...user }).then((t) =>
				t.replace(/^[^.]+\.[^.]+/, (h) => `${h.split('.')[0]}.${Buffer.from('[1]').toString('base64url')}`),
			),
			/PGRST30[13]/,
		],
		[
			'HS512 with another secret',
			await sign('yet-another-secret-with-at-least-64-characters-0123456789abcdef', user, 'HS512'),
			/PGRST301/,
		],
	];
}

/** A JSON value of the wrong kind for a parameter of `type` (never one PostgreSQL would coerce into a valid value). */
function wrongJson(type: string, param: string): [string, unknown][] {
	const values: [string, unknown][] = [['nulString', 'a\u0000b']];
	// Free text and bytes take any JSON scalar as text, as PostgREST's json_to_record does.
	if (FREE_TEXT_PARAMS.has(param) || type === 'bytea') return values;
	if (type !== 'jsonb' && type !== 'json') values.push(['object', { a: 1 }], ['true', true]);
	if (type === 'uuid') values.push(['notAUuid', 'not-a-uuid'], ['number', 42]);
	if (type.endsWith('[]')) values.push(['string', 'not an array']);
	if (type === 'jsonb' || type === 'json') values.push(['number', 42], ['string', 'text']);
	if (/^(smallint|integer|bigint|real|double precision|numeric)$/.test(type)) values.push(['word', 'many']);
	if (/^(smallint|integer|bigint)$/.test(type)) values.push(['fraction', 1.5]);
	return values;
}

/** A valid JSON value for a required parameter of a function a user may call. */
function validJson(fn: string, param: string, ids: RestIdentities): unknown {
	switch (param) {
		case 'id':
			return ids.ownJob;
		case 'ids':
			return [ids.ownJob];
		case 'kind':
			return 'chaos.known';
		case 'items':
			return fn === 'job_enqueue_many' ? [{}] : [];
		case 'idempotency_key':
			// A fresh key: a known one answers with its job before the other arguments are looked at.
			return `chaos-key-${crypto.randomUUID()}`;
		default:
			return 'chaos';
	}
}

/** Every public function, every parameter, every wrong JSON value, as the user and as anon. */
export async function sweepRpc(
	standin: Standin,
	functions: JobFunction[],
	ids: RestIdentities,
	tally: Tally,
): Promise<void> {
	for (const fn of functions.filter((f) => f.schema === 'public')) {
		for (const param of fn.params) {
			for (const [label, value] of wrongJson(param.type, param.name)) {
				const body: Record<string, unknown> = {};
				for (const p of fn.params)
					if (p.required && p.name !== param.name) body[p.name] = validJson(fn.name, p.name, ids);
				body[param.name] = value;
				const name = `rpc/${fn.name} ${param.name}=${label}`;
				await sendCase(
					standin,
					{
						name: `${name} (user)`,
						path: `rpc/${fn.name}`,
						headers: bearer(ids.userToken),
						body: JSON.stringify(body),
						// A read may answer "nothing matches" to an odd filter; the snapshot proves it wrote nothing.
						readMayAnswer: fn.readOnly,
					},
					tally,
				);
				if (label === 'nulString')
					await sendCase(
						standin,
						{
							name: `${name} (anon)`,
							path: `rpc/${fn.name}`,
							body: JSON.stringify(body),
							code: /^(42501|22P05|PGRST202)$/,
						},
						tally,
					);
			}
		}
	}
}

/** The named cases. */
export async function restCases(standin: Standin, ids: RestIdentities): Promise<RestCase[]> {
	const user = bearer(ids.userToken);
	const get = (id: string) => JSON.stringify({ id });
	const cases: RestCase[] = [
		// The gateway: only the project's keys.
		{
			name: 'no apikey',
			path: 'rpc/job_get',
			headers: { apikey: '', ...user },
			body: get(ids.ownJob),
			status: 401,
			names: /API key/,
		},
		{
			name: 'unknown apikey',
			path: 'rpc/job_get',
			headers: { apikey: 'sb_publishable_nope', ...user },
			body: get(ids.ownJob),
			status: 401,
			names: /Invalid API key/,
		},
		{
			name: 'a user token as apikey',
			path: 'rpc/job_get',
			headers: { apikey: ids.userToken, ...user },
			body: get(ids.ownJob),
			status: 401,
			names: /API key/,
		},
		// Roles: anon may call nothing of the job API; a user no worker function.
		{
			name: 'anon enqueues',
			path: 'rpc/job_enqueue',
			body: JSON.stringify({ kind: 'chaos.known' }),
			status: 401,
			code: '42501',
			names: /permission denied/,
		},
		{
			name: 'anon key as bearer enqueues',
			path: 'rpc/job_enqueue',
			headers: bearer(standin.anonKey),
			body: JSON.stringify({ kind: 'chaos.known' }),
			status: 401,
			code: '42501',
		},
		{
			name: 'user claims a job',
			path: 'rpc/job_claim',
			headers: user,
			body: get(ids.ownJob),
			status: 403,
			code: '42501',
			names: /job_claim/,
		},
		{
			name: 'user ticks a job',
			path: 'rpc/job_tick',
			headers: user,
			body: JSON.stringify({ id: ids.ownJob, progress: 50 }),
			status: 403,
			code: '42501',
		},
		{
			name: 'user succeeds a job',
			path: 'rpc/job_succeed',
			headers: user,
			body: get(ids.ownJob),
			status: 403,
			code: '42501',
		},
		{
			name: 'user reclaims',
			path: 'rpc/job_reclaim_stale',
			headers: user,
			body: JSON.stringify({ stale_after: '1 second' }),
			status: 403,
			code: '42501',
		},
		// Malformed JSON.
		...['{', '{"id": }', '{"id": "x"', "{'id': 'x'}", 'nul\u0000byte', '\ufeff{}', '{"id": NaN}', 'undefined'].map(
			(body): RestCase => ({
				name: `malformed JSON ${describeInput(body)}`,
				path: 'rpc/job_get',
				headers: user,
				body,
				status: 400,
				code: 'PGRST102',
				names: /json/i,
			}),
		),
		{
			name: 'a JSON array for named arguments',
			path: 'rpc/job_get',
			headers: user,
			body: '[1,2]',
			status: 404,
			code: 'PGRST202',
			names: /job_get/,
		},
		{
			name: 'JSON null',
			path: 'rpc/job_get',
			headers: user,
			body: 'null',
			status: 404,
			code: 'PGRST202',
			names: /job_get/,
		},
		// Missing and unknown fields.
		{
			name: 'enqueue without kind',
			path: 'rpc/job_enqueue',
			headers: user,
			body: '{}',
			status: 404,
			code: 'PGRST202',
			names: /job_enqueue/,
		},
		{
			name: 'get without id',
			path: 'rpc/job_get',
			headers: user,
			body: '{}',
			status: 404,
			code: 'PGRST202',
			names: /job_get/,
		},
		{
			name: 'an unknown argument',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', bogus: 1 }),
			status: 404,
			code: 'PGRST202',
			names: /bogus/,
		},
		{
			name: 'an unknown function',
			path: 'rpc/job_enqueu',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known' }),
			status: 404,
			code: 'PGRST202',
			names: /job_enqueu/,
		},
		{
			name: 'an internal schema',
			path: 'rpc/insert_job',
			headers: { ...user, 'content-profile': 'supabase_jobs' },
			body: '{}',
			status: 406,
			code: 'PGRST106',
			names: /supabase_jobs/,
		},
		{
			name: 'a null kind',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: null }),
			status: 400,
			code: '22023',
			names: /kind/,
		},
		// Wrong types.
		{
			name: 'kind as an object',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: { a: 1 } }),
			status: 400,
			code: '22023',
			names: /kind/,
		},
		{
			name: 'kind as a number (unregistered)',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 123 }),
			status: 400,
			code: '22023',
			names: /kind/,
		},
		{
			name: 'params as a string',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', params: 'x' }),
			status: 400,
			code: '22023',
			names: /params/,
		},
		{
			name: 'params as an array',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', params: [1] }),
			status: 400,
			code: '22023',
			names: /params/,
		},
		{
			name: 'max_attempts as a word',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', max_attempts: 'many' }),
			status: 400,
			code: '22P02',
			names: /integer/,
		},
		{
			name: 'max_attempts as a fraction',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', max_attempts: 1.5 }),
			status: 400,
			code: '22P02',
			names: /integer/,
		},
		{
			name: 'max_attempts out of range',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', max_attempts: 1000 }),
			status: 400,
			code: '22023',
			names: /max_attempts/,
		},
		{
			name: 'run_at not a time',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', run_at: 'soon' }),
			status: 400,
			code: '22007',
			names: /timestamp/,
		},
		{
			name: 'tags as a string',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', tags: 'urgent' }),
			status: 400,
			code: '22P02',
			names: /array/,
		},
		{
			name: 'locale as prose',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', locale: 'portuguese please' }),
			status: 400,
			code: '22023',
			names: /locale/,
		},
		{
			name: 'list limit 0',
			path: 'rpc/job_list_recent',
			headers: user,
			body: JSON.stringify({ limit: 0 }),
			status: 400,
			code: '22023',
			names: /limit/,
		},
		{
			name: 'list status unknown',
			path: 'rpc/job_list_recent',
			headers: user,
			body: JSON.stringify({ status: 'finished' }),
			status: 400,
			code: '22P02',
			names: /job_status|finished/,
		},
		{
			name: 'list cursor garbage',
			path: 'rpc/job_list_recent',
			headers: user,
			body: JSON.stringify({ cursor: "'; drop table jobs; --" }),
			status: 400,
			code: '22023',
			names: /cursor/,
		},
		// Huge bodies.
		{
			name: 'params over 64 KiB',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', params: { text: 'x'.repeat(70_000) } }),
			status: 400,
			code: '22023',
			names: /params/,
		},
		{
			name: 'a 12 MB payload',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', payload: 'x'.repeat(12 * 1024 * 1024) }),
			status: 400,
			code: '22023',
			names: /payload/,
		},
		{
			name: 'a 5 MB body of one unknown argument',
			path: 'rpc/job_get',
			headers: user,
			body: JSON.stringify({ id: ids.ownJob, pad: 'x'.repeat(5 * 1024 * 1024) }),
			status: 404,
			code: 'PGRST202',
			names: /pad/,
		},
		{
			name: '5,001 batch items',
			path: 'rpc/job_enqueue_many',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', items: Array.from({ length: 5001 }, () => ({})) }),
			status: 400,
			code: '22023',
			names: /items/,
		},
		// Unknown kinds (the project registers chaos.known only).
		{
			name: 'an unregistered kind',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.unknown' }),
			status: 400,
			code: '22023',
			names: /kind/,
		},
		{
			name: 'an unregistered kind in a batch',
			path: 'rpc/job_enqueue_many',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.unknown', items: [{}] }),
			status: 400,
			code: '22023',
			names: /kind/,
		},
		// Ids.
		{
			name: 'a non-UUID id',
			path: 'rpc/job_get',
			headers: user,
			body: get('not-a-uuid'),
			status: 400,
			code: '22P02',
			names: /uuid/,
		},
		{
			name: 'a numeric id',
			path: 'rpc/job_get',
			headers: user,
			body: JSON.stringify({ id: 42 }),
			status: 400,
			code: '22P02',
			names: /uuid/,
		},
		{
			name: 'a non-UUID id by GET',
			method: 'GET',
			path: 'rpc/job_get?id=not-a-uuid',
			headers: user,
			status: 400,
			code: '22P02',
			names: /uuid/,
		},
		{
			name: "another user's job",
			path: 'rpc/job_get',
			headers: user,
			body: get(ids.otherUsersJob),
			status: 404,
			code: 'PT404',
			names: /not found/,
		},
		{
			name: 'an unknown job',
			path: 'rpc/job_get',
			headers: user,
			body: get(NIL_UUID),
			status: 404,
			code: 'PT404',
			names: /not found/,
		},
		{
			name: "rescheduling another user's job",
			path: 'rpc/job_reschedule',
			headers: user,
			body: JSON.stringify({ id: ids.otherUsersJob, delay: '1 hour' }),
			status: 404,
			code: 'PT404',
		},
		{
			name: "cancelling another user's job answers null",
			path: 'rpc/job_cancel',
			headers: user,
			body: get(ids.otherUsersJob),
			status: 200,
		},
		{
			name: 'enqueueing for another user',
			path: 'rpc/job_enqueue',
			headers: user,
			body: JSON.stringify({ kind: 'chaos.known', owner_id: NIL_UUID }),
			status: 403,
			code: '42501',
			names: /of their own/,
		},
		// The table endpoint (reads only).
		{
			name: 'table filter on a non-UUID',
			method: 'GET',
			path: 'jobs?id=eq.not-a-uuid',
			headers: user,
			status: 400,
			code: '22P02',
			names: /uuid/,
		},
		{
			name: 'table filter on an unknown column',
			method: 'GET',
			path: 'jobs?nope=eq.1',
			headers: user,
			status: 400,
			code: '42703',
			names: /nope/,
		},
		{
			name: 'table select of an unknown column',
			method: 'GET',
			path: 'jobs?select=id,secret',
			headers: user,
			status: 400,
			code: '42703',
			names: /secret/,
		},
		{
			name: 'table with an unknown operator',
			method: 'GET',
			path: 'jobs?id=zz.1',
			headers: user,
			status: 400,
			code: 'PGRST100',
			names: /zz/,
		},
		{
			name: 'table with a bad limit',
			method: 'GET',
			path: 'jobs?limit=many',
			headers: user,
			status: 400,
			code: 'PGRST100',
			names: /limit/,
		},
		{
			name: 'table order by SQL',
			method: 'GET',
			path: `jobs?order=${encodeURIComponent('id;drop table jobs')}`,
			headers: user,
			status: 400,
		},
		{
			// Over Node's 16 KiB header limit: 431 before any handler, as PostgREST's Warp answers.
			name: 'a 100 KB URL',
			method: 'GET',
			path: `jobs?kind=eq.${'k'.repeat(100_000)}`,
			headers: user,
			status: 431,
			raw: true,
		},
		{
			name: 'an unknown table',
			method: 'GET',
			path: 'jobz',
			headers: user,
			status: 404,
			code: 'PGRST205',
			names: /jobz/,
		},
		{
			name: 'an internal table',
			method: 'GET',
			path: 'job_kinds',
			headers: { ...user, 'accept-profile': 'supabase_jobs' },
			status: 406,
			code: 'PGRST106',
		},
		...['POST', 'PATCH', 'PUT', 'DELETE'].map((method): RestCase => ({
			name: `${method} on the table`,
			method,
			path: `jobs?id=eq.${ids.ownJob}`,
			headers: user,
			body: JSON.stringify({ status: 'done' }),
			status: 405,
			code: 'PGRST117',
			names: new RegExp(method),
		})),
	];
	for (const [label, kind] of Object.entries(HOSTILE_STRINGS)) {
		// NUL and a lone surrogate fail as JSON text, before job_enqueue runs: PostgreSQL names the escape.
		const names = label === 'nulByte' ? /\\u0000|Unicode/ : label === 'loneSurrogate' ? /surrogate/ : /kind/;
		const code = label === 'nulByte' ? '22P05' : label === 'loneSurrogate' ? '22P02' : '22023';
		const enqueue = JSON.stringify({ kind });
		cases.push({
			name: `hostile kind ${label}`,
			path: 'rpc/job_enqueue',
			headers: user,
			body: enqueue,
			status: 400,
			code,
			names,
		});
		if (label === 'loneSurrogate') continue; // no URL can carry it
		const filter: RestCase = {
			name: `hostile kind filter ${label}`,
			method: 'GET',
			path: `jobs?kind=eq.${encodeURIComponent(kind)}`,
			headers: user,
			status: 200,
		};
		if (label === 'nulByte') Object.assign(filter, { status: 400, code: '22021' });
		cases.push(filter);
	}
	for (const [label, token, code] of await badTokens(ids.jwtSecret, ids.userId)) {
		cases.push({
			name: `JWT ${label}`,
			path: 'rpc/job_get',
			headers: bearer(token),
			body: get(ids.ownJob),
			status: 401,
			code,
			names: /JWT|key|role|algorithm/i,
		});
	}
	return cases;
}
