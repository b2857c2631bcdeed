/**
 * /rest/v1/rpc through the real supabase-js client against the stand-in.
 * Expected bodies and statuses are PostgREST's: src/library/PostgREST/Error.hs
 * (codes, messages, `mapSQLtoHTTP`), test/spec/Feature/Query/ErrorSpec.hs
 * (JWT errors), Response.hs (void -> 204) and Query/SqlFragment.hs `asJsonF`.
 */
import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { createUser } from '../helpers/db.ts';
import { client, useStandin, userClient } from './helpers.ts';

const f = await useStandin(`
  create table public.notes (id int primary key, owner_id uuid, body text, status text not null default 'draft', data bytea);
  alter table public.notes enable row level security;
  create policy notes_owner on public.notes for select to authenticated using (owner_id = (select auth.uid()));
  grant select on public.notes to authenticated, service_role;
  insert into public.notes (id, body, status) values (1, 'one', 'draft'), (2, 'two', 'done'), (3, 'three', 'done');

  create function public.whoami() returns jsonb language sql stable as $$
    select jsonb_build_object('uid', auth.uid(), 'role', current_user, 'claims', current_setting('request.jwt.claims', true)::jsonb,
      'method', current_setting('request.method', true), 'path', current_setting('request.path', true),
      'search_path', current_setting('search_path'), 'apikey', current_setting('request.headers', true)::jsonb ? 'apikey')
  $$;
  create function public.add(a int, b int default 1) returns int language sql immutable as $$ select a + b $$;
  create function public.noop() returns void language sql as $$ select $$;
  create function public.series(n int) returns setof int language sql immutable as $$ select generate_series(1, n) $$;
  create function public.notes_with(s text) returns setof public.notes language sql stable security definer set search_path = '' as $$
    select * from public.notes where status = s order by id $$;
  create function public.note(note_id int) returns public.notes language sql stable security definer set search_path = '' as $$
    select * from public.notes where id = note_id $$;
  create function public.pair(x int) returns table (x int, doubled int) language sql immutable as $$ select x, x * 2 $$;
  create function public.bytes() returns bytea language sql immutable as $$ select '\\x0102ff'::bytea $$;
  create function public.echo_args(t text, arr text[], j jsonb, i interval, b bytea) returns jsonb language sql immutable as $$
    select jsonb_build_object('t', t, 'arr', to_jsonb(arr), 'j', j, 'i', i::text, 'b', encode(b, 'hex')) $$;
  create function public.fail_with(state text, msg text default 'boom') returns void language plpgsql as $$
    begin raise exception using errcode = state, message = msg, detail = 'the detail', hint = 'the hint'; end $$;
  create function public.plain_raise() returns void language plpgsql as $$ begin raise exception 'plain'; end $$;
  create function public.ambiguous(x int) returns int language sql immutable as $$ select 1 $$;
  create function public.ambiguous(x text) returns int language sql immutable as $$ select 2 $$;
  create function public.service_only() returns int language sql immutable as $$ select 42 $$;
  revoke execute on function public.service_only() from public;
  grant execute on function public.service_only() to service_role;
  create function public.writes() returns int language sql volatile as $$ insert into public.notes (id, body) values (100, 'x') returning id $$;
  grant insert on public.notes to service_role;
`);

describe('rpc returns PostgREST shapes', () => {
	it('returns a scalar as a JSON scalar', async () => {
		const { data, error, status } = await client(f).rpc('add', { a: 2, b: 5 });
		expect(error).toBeNull();
		expect(status).toBe(200);
		expect(data).toBe(7);
	});

	it('fills optional arguments from their defaults', async () => {
		const { data } = await client(f).rpc('add', { a: 2 });
		expect(data).toBe(3);
	});

	it('answers 204 with no data for a void function', async () => {
		const { data, error, status } = await client(f).rpc('noop');
		expect(error).toBeNull();
		expect(status).toBe(204);
		expect(data).toBeNull();
	});

	it('returns a SETOF scalar as a JSON array', async () => {
		const { data } = await client(f).rpc('series', { n: 3 });
		expect(data).toEqual([1, 2, 3]);
	});

	it('returns SETOF rows as an array of objects, [] when empty, bytea as \\x hex', async () => {
		const anon = client(f);
		const { data } = await anon.rpc('notes_with', { s: 'done' });
		expect(data).toEqual([
			{ id: 2, owner_id: null, body: 'two', status: 'done', data: null },
			{ id: 3, owner_id: null, body: 'three', status: 'done', data: null },
		]);
		expect((await anon.rpc('notes_with', { s: 'none' })).data).toEqual([]);
		expect((await anon.rpc('bytes')).data).toBe('\\x0102ff');
	});

	it('returns a single composite as an object (all-null row when nothing matched)', async () => {
		const anon = client(f);
		expect((await anon.rpc('note', { note_id: 1 })).data).toEqual({
			id: 1,
			owner_id: null,
			body: 'one',
			status: 'draft',
			data: null,
		});
		expect((await anon.rpc('note', { note_id: 999 })).data).toEqual({
			id: null,
			owner_id: null,
			body: null,
			status: null,
			data: null,
		});
	});

	it('returns a RETURNS TABLE function as an array', async () => {
		expect((await client(f).rpc('pair', { x: 4 })).data).toEqual([{ x: 4, doubled: 8 }]);
	});

	it('passes text, arrays, jsonb, intervals and bytea arguments through json_to_record', async () => {
		const { data, error } = await client(f).rpc('echo_args', {
			t: 'hé',
			arr: ['a', 'b,c'],
			j: { k: [1] },
			i: '90 seconds',
			b: '\\x00ff',
		});
		expect(error).toBeNull();
		expect(data).toEqual({ t: 'hé', arr: ['a', 'b,c'], j: { k: [1] }, i: '00:01:30', b: '00ff' });
	});

	it('calls STABLE functions with GET and query arguments', async () => {
		const { data, error } = await client(f).rpc('add', { a: 40, b: 2 }, { get: true });
		expect(error).toBeNull();
		expect(data).toBe(42);
	});

	it('applies filters, order and range to SETOF results, with a count', async () => {
		const { data, count, status } = await client(f)
			.rpc('notes_with', { s: 'done' }, { count: 'exact' })
			.select('id')
			.order('id', { ascending: false })
			.range(0, 0);
		expect(status).toBe(206);
		expect(count).toBe(2);
		expect(data).toEqual([{ id: 3 }]);
	});

	it('runs POST for STABLE functions read-only and volatile ones read-write', async () => {
		const service = client(f, undefined, f.standin.serviceRoleKey);
		const { data, error } = await service.rpc('writes');
		expect(error).toBeNull();
		expect(data).toBe(100);
		const get = await service.rpc('writes', {}, { get: true });
		expect(get.status).toBe(405);
		expect(get.error?.code).toBe('25006');
	});
});

describe('rpc errors', () => {
	it('answers 404 PGRST202 when no function matches the argument names', async () => {
		const { error, status } = await client(f).rpc('add', { x: 1 });
		expect(status).toBe(404);
		expect(error).toEqual({
			code: 'PGRST202',
			message: 'Could not find the function public.add(x) in the schema cache',
			details:
				'Searched for the function public.add with parameter x or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
			hint: 'Perhaps you meant to call the function public.add(a, b)',
		});
	});

	it('answers PGRST202 without parameters, hinting a near function name', async () => {
		const { error, status } = await client(f).rpc('nop');
		expect(status).toBe(404);
		expect(error?.message).toBe('Could not find the function public.nop without parameters in the schema cache');
		expect(error?.details).toBe(
			'Searched for the function public.nop without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
		);
		expect(error?.hint).toBe('Perhaps you meant to call the function public.noop');
	});

	it('finds a function created after the stand-in started', async () => {
		await f.db.sql.unsafe(`create function public.late() returns int language sql immutable as $$ select 7 $$`);
		expect((await client(f).rpc('late')).data).toBe(7);
	});

	it('answers 300 PGRST203 for an ambiguous overload', async () => {
		const { error, status } = await client(f).rpc('ambiguous', { x: 1 });
		expect(status).toBe(300);
		expect(error?.code).toBe('PGRST203');
		expect(error?.message).toMatch(
			/^Could not choose the best candidate function between: public\.ambiguous\(x => (integer|text)\), public\.ambiguous\(x => (integer|text)\)$/,
		);
		expect(error?.hint).toBe(
			'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
		);
	});

	it.each([
		['PT404', 404],
		['PT409', 409],
		['PT410', 410],
		['P0001', 400],
		['P0002', 500],
		['55000', 500],
		['22023', 400],
		['22004', 400],
		['42P01', 404],
		['42883', 404],
		['23505', 409],
		['23503', 409],
		['SJ001', 400],
	])('maps SQLSTATE %s to HTTP %i with the error body', async (state, httpStatus) => {
		const { error, status } = await client(f).rpc('fail_with', { state });
		expect(status).toBe(httpStatus);
		expect(error).toEqual({ code: state, message: 'boom', details: 'the detail', hint: 'the hint' });
	});

	it('answers a plain RAISE as 400 P0001 with null details and hint', async () => {
		const { error, status } = await client(f).rpc('plain_raise');
		expect(status).toBe(400);
		expect(error).toEqual({ code: 'P0001', message: 'plain', details: null, hint: null });
	});

	it('maps 42501 to 401 for anon and 403 for an authenticated user', async () => {
		const anon = await client(f).rpc('service_only');
		expect(anon.status).toBe(401);
		expect(anon.error?.code).toBe('42501');
		const user = await userClient(f);
		const authed = await user.supabase.rpc('service_only');
		expect(authed.status).toBe(403);
		const service = await client(f, undefined, f.standin.serviceRoleKey).rpc('service_only');
		expect(service.data).toBe(42);
	});

	it('answers 406 PGRST106 for a schema that is not exposed', async () => {
		const { error, status } = await client(f).schema('private').rpc('add', { a: 1 });
		expect(status).toBe(406);
		expect(error).toEqual({
			code: 'PGRST106',
			message: 'Invalid schema: private',
			details: null,
			hint: 'Only the following schemas are exposed: public',
		});
	});
});

describe('role switching and JWTs', () => {
	it('runs as anon with claims {role: anon} when the anon key is the bearer', async () => {
		const { data } = await client(f).rpc('whoami');
		expect(data.role).toBe('anon');
		expect(data.uid).toBeNull();
		expect(data.claims.role).toBe('anon');
		expect(data.method).toBe('POST');
		expect(data.path).toBe('/rpc/whoami');
		expect(data.search_path).toBe('"public", "extensions"');
		expect(data.apikey).toBe(true);
	});

	it("sets auth.uid() to the user token's sub and the role to authenticated", async () => {
		const user = await userClient(f);
		const { data } = await user.supabase.rpc('whoami');
		expect(data.uid).toBe(user.id);
		expect(data.role).toBe('authenticated');
		expect(data.claims.sub).toBe(user.id);
		expect(data.claims.aud).toBe('authenticated');
	});

	it('runs as service_role with the service key', async () => {
		const { data } = await client(f, undefined, f.standin.serviceRoleKey).rpc('whoami');
		expect(data.role).toBe('service_role');
	});

	it('runs as a custom role the authenticator may switch to, as PostgREST does; one it may not is refused (401 PGRST301)', async () => {
		const granted = `plan_pro_${randomUUID().slice(0, 8)}`;
		const stranger = `plan_stranger_${randomUUID().slice(0, 8)}`;
		await f.db.sql
			.unsafe(`create role ${granted} nologin; grant authenticated to ${granted}; grant ${granted} to authenticator;
		                       create role ${stranger} nologin; grant authenticated to ${stranger}`);
		try {
			const user = await createUser(f.db.sql);
			const token = await f.standin.mintUserToken(user.sub, { role: granted });
			const { data, error } = await client(f, token).rpc('whoami');
			expect(error).toBeNull();
			expect([data.role, data.uid, data.claims.role]).toEqual([granted, user.sub, granted]);
			const refused = await f.standin.mintUserToken(user.sub, { role: stranger });
			const res = await fetch(`${f.standin.url}/rest/v1/rpc/whoami`, {
				method: 'POST',
				headers: { apikey: f.standin.anonKey, Authorization: `Bearer ${refused}`, 'Content-Type': 'application/json' },
				body: '{}',
			});
			expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([401, 'PGRST301']);
		} finally {
			await f.db.sql.unsafe(`drop role ${granted}; drop role ${stranger}`);
		}
	});

	it('refuses a signed token whose role is not anon, authenticated, service_role or one the authenticator may switch to: 401 PGRST301, nothing run', async () => {
		for (const role of ['postgres', 'supabase_admin', 'authenticator']) {
			const token = await f.standin.mintUserToken('00000000-0000-0000-0000-000000000009', { role });
			const res = await fetch(`${f.standin.url}/rest/v1/rpc/whoami`, {
				method: 'POST',
				headers: { apikey: f.standin.anonKey, Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
				body: '{}',
			});
			expect(res.status).toBe(401);
			expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
			expect(await res.json()).toEqual({
				code: 'PGRST301',
				message: `JWT role "${role}" is not allowed`,
				details: 'The role claim must be anon, authenticated, service_role or a role authenticator may switch to',
				hint: null,
			});
		}
	});

	it('refuses a token signed with another secret: 401 PGRST301', async () => {
		const forged = await new SignJWT({ role: 'service_role', exp: Math.floor(Date.now() / 1000) + 60 })
			.setProtectedHeader({ alg: 'HS256' })
			.sign(new TextEncoder().encode('not-the-secret-not-the-secret-not-the-secret'));
		const res = await fetch(`${f.standin.url}/rest/v1/rpc/whoami`, {
			method: 'POST',
			headers: { apikey: f.standin.anonKey, Authorization: `Bearer ${forged}`, 'Content-Type': 'application/json' },
			body: '{}',
		});
		expect(res.status).toBe(401);
		expect(await res.json()).toEqual({
			code: 'PGRST301',
			details: 'None of the keys was able to decode the JWT',
			hint: null,
			message: 'No suitable key or wrong key type',
		});
		const { error, status } = await client(f, forged).rpc('whoami');
		expect(status).toBe(401);
		expect(error?.code).toBe('PGRST301');
	});

	it('refuses an expired token (beyond the 30 s skew): 401 PGRST303 with WWW-Authenticate', async () => {
		const expired = await f.standin.mintUserToken('00000000-0000-0000-0000-000000000001', { expiresIn: -60 });
		const res = await fetch(`${f.standin.url}/rest/v1/rpc/whoami`, {
			method: 'POST',
			headers: { apikey: f.standin.anonKey, Authorization: `Bearer ${expired}`, 'Content-Type': 'application/json' },
			body: '{}',
		});
		expect(res.status).toBe(401);
		expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token", error_description="JWT expired"');
		expect(await res.json()).toEqual({ code: 'PGRST303', details: null, hint: null, message: 'JWT expired' });
	});

	it('refuses a token that is not three parts: 401 PGRST301', async () => {
		const res = await fetch(`${f.standin.url}/rest/v1/rpc/whoami`, {
			method: 'POST',
			headers: { apikey: f.standin.anonKey, Authorization: 'Bearer abc.def', 'Content-Type': 'application/json' },
			body: '{}',
		});
		expect(res.status).toBe(401);
		expect(await res.json()).toEqual({
			code: 'PGRST301',
			details: null,
			hint: null,
			message: 'Expected 3 parts in JWT; got 2',
		});
	});

	it('refuses requests without a known API key, as the gateway does', async () => {
		const none = await fetch(`${f.standin.url}/rest/v1/rpc/noop`, { method: 'POST', body: '{}' });
		expect(none.status).toBe(401);
		expect(await none.json()).toEqual({
			message: 'No API key found in request',
			hint: 'No `apikey` request header or url param was found.',
		});
		const token = await f.standin.mintUserToken('00000000-0000-0000-0000-000000000001');
		const wrong = await fetch(`${f.standin.url}/rest/v1/rpc/noop`, {
			method: 'POST',
			headers: { apikey: token },
			body: '{}',
		});
		expect(wrong.status).toBe(401);
	});

	it('counts the statements it sends', async () => {
		const before = f.standin.queryCount('rest');
		await client(f).rpc('add', { a: 1 });
		expect(f.standin.queryCount('rest')).toBeGreaterThan(before);
	});
});
