/**
 * The hosted limits the stand-in imitates, through the unmodified supabase-js:
 * - PostgREST `db-max-rows` (supabase/config.toml `[api] max_rows`, 1000 on
 *   hosted): Plan.hs `treeRestrictRange` cuts every read, function results
 *   included, with RangeQuery.hs `restrictRange` (the offset kept, the limit
 *   lowered); the function still runs to its end; one json value is one row;
 * - the JWT role's own settings in each request (Config/Database.hs
 *   `queryRoleSettings`, Query/PreQuery.hs `txVarQuery`): statement_timeout
 *   anon 3 s, authenticated 8 s, authenticator 8 s (supabase/postgres init
 *   scripts), a custom role its own;
 * - anonymous sign-ins only with `[auth] enable_anonymous_sign_ins` (GoTrue
 *   internal/api/api.go: 422 anonymous_provider_disabled).
 */
import { createClient } from '@supabase/supabase-js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { describe, expect, it, vi } from 'vitest';
import { createStandin } from '../../src/local/standin/server.ts';
import { CLI_DEFAULTS, defaultConfigPath, readProjectConfig } from '../../src/local/standin/project-config.ts';
import { createUser } from '../helpers/db.ts';
import { client, JWT_SECRET, useStandin } from './helpers.ts';

const slowRole = `sj_slow_${randomUUID().slice(0, 8)}`;

const f = await useStandin(`
  create table public.calls (n int);
  grant insert, select on public.calls to anon, authenticated, service_role;
  create table public.many (n int primary key);
  insert into public.many select generate_series(1, 1500);
  grant select on public.many to anon;
  create function public.numbers(n int) returns setof int language sql volatile as $$
    insert into public.calls select generate_series(1, n) returning n $$;
  create function public.numbers_json(n int) returns jsonb language sql immutable as $$
    select jsonb_agg(i) from generate_series(1, n) i $$;
  create function public.timeout_now() returns text language sql stable as $$ select current_setting('statement_timeout') $$;
  create function public.nap(s float8) returns int language sql volatile as $$ select 1 from pg_sleep(s) $$;
  grant execute on function public.numbers, public.numbers_json, public.timeout_now, public.nap to anon, authenticated, service_role;
  create role ${slowRole} nologin inherit;
  grant authenticated to ${slowRole};
  grant ${slowRole} to authenticator;
  alter role ${slowRole} set statement_timeout = '150ms';
`);

describe('max_rows: every REST reply is cut as PostgREST cuts it', () => {
	it('reads [api] max_rows from supabase/config.toml, 1000 as the CLI template and hosted projects have it', () => {
		expect(readProjectConfig(defaultConfigPath()).maxRows).toBe(1000);
		expect(f.standin.maxRows).toBe(1000);
		expect(CLI_DEFAULTS).toEqual({ maxRows: 1000, anonymousSignIns: false });
		expect(readProjectConfig(join(tmpdir(), `absent-${randomUUID()}.toml`))).toEqual(CLI_DEFAULTS);
	});

	it('a set-returning function sends 1000 rows of 1500, and still ran to its end', async () => {
		await f.db.sql`truncate public.calls`;
		const { data, error, status, count } = await client(f, undefined, f.standin.serviceRoleKey)
			.rpc('numbers', { n: 1500 }, { count: 'exact' })
			.select('*');
		expect(error).toBeNull();
		expect(status).toBe(206);
		expect(count).toBe(1500);
		expect(data).toHaveLength(1000);
		expect(data).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
		const [{ n }] = await f.db.sql`select count(*)::int as n from public.calls`;
		expect(n).toBe(1500);
	});

	it('a function returning one json value is one row: never cut', async () => {
		const { data, error } = await client(f).rpc('numbers_json', { n: 1500 });
		expect(error).toBeNull();
		expect(data).toHaveLength(1500);
	});

	it('a table read is cut too; an offset is kept and a smaller limit stays', async () => {
		const all = await client(f).from('many').select('n').order('n');
		expect(all.data).toHaveLength(1000);
		const page = await client(f).from('many').select('n').order('n').range(1200, 1499);
		expect(page.data?.map((r) => r.n)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1201));
		const small = await client(f).from('many').select('n').order('n').limit(5);
		expect(small.data).toHaveLength(5);
	});
});

describe('each request runs with its role’s settings, as PostgREST applies them', () => {
	it('statement_timeout is 3 s for anon, 8 s for authenticated, 8 s (the authenticator’s) for service_role', async () => {
		const user = await createUser(f.db.sql);
		expect((await client(f).rpc('timeout_now')).data).toBe('3s');
		expect((await client(f, await f.standin.mintUserToken(user.sub)).rpc('timeout_now')).data).toBe('8s');
		expect((await client(f, undefined, f.standin.serviceRoleKey).rpc('timeout_now')).data).toBe('8s');
	});

	it('a custom role inheriting authenticated has its own settings, and a call over its timeout fails with 57014', async () => {
		const user = await createUser(f.db.sql);
		const token = await f.standin.mintUserToken(user.sub, { role: slowRole });
		expect((await client(f, token).rpc('timeout_now')).data).toBe('150ms');
		const { data, error, status } = await client(f, token).rpc('nap', { s: 2 });
		expect(data).toBeNull();
		expect(status).toBe(500);
		expect(error).toMatchObject({ code: '57014', message: 'canceling statement due to statement timeout' });
	});

	it('a changed setting applies after NOTIFY pgrst, ’reload config’, as PostgREST reads its configuration again', async () => {
		const role = `sj_cfg_${randomUUID().slice(0, 8)}`;
		await f.db.sql
			.unsafe(`create role ${role} nologin inherit; grant authenticated to ${role}; grant ${role} to authenticator;
		  alter role ${role} set statement_timeout = '5s'`);
		const user = await createUser(f.db.sql);
		const c = client(f, await f.standin.mintUserToken(user.sub, { role }));
		expect((await c.rpc('timeout_now')).data).toBe('8s'); // the authenticator's: not read yet
		await f.db.sql`notify pgrst, 'reload config'`;
		await vi.waitFor(async () => expect((await c.rpc('timeout_now')).data).toBe('5s'), { timeout: 5000, interval: 50 });
	});
});

describe('anonymous sign-ins follow [auth] enable_anonymous_sign_ins', () => {
	const signIn = async (url: string, anonKey: string) => {
		const c = createClient(url, anonKey, {
			realtime: { transport: WebSocket as never },
			auth: { persistSession: false, autoRefreshToken: false },
		});
		return await c.auth.signInAnonymously();
	};

	it('this project enables them (the demo signs visitors in anonymously)', () => {
		expect(readProjectConfig(defaultConfigPath()).anonymousSignIns).toBe(true);
	});

	it('off (the CLI default): refused as GoTrue refuses it, 422 anonymous_provider_disabled, and no user is made', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'sj-config-'));
		writeFileSync(join(dir, 'config.toml'), '[api]\nmax_rows = 1000\n[auth]\nenable_anonymous_sign_ins = false\n');
		const off = await createStandin({
			databaseUrl: f.db.url,
			jwtSecret: JWT_SECRET,
			configPath: join(dir, 'config.toml'),
		});
		try {
			const [{ n: before }] = await f.db.sql`select count(*)::int as n from auth.users`;
			const { data, error } = await signIn(off.url, off.anonKey);
			expect(data.session).toBeNull();
			expect(error).toMatchObject({
				status: 422,
				code: 'anonymous_provider_disabled',
				message: 'Anonymous sign-ins are disabled',
			});
			const [{ n: after }] = await f.db.sql`select count(*)::int as n from auth.users`;
			expect(after).toBe(before);
		} finally {
			await off.close();
		}
	});

	it('on: signInAnonymously gives a session', async () => {
		const { data, error } = await signIn(f.standin.url, f.standin.anonKey);
		expect(error).toBeNull();
		expect(data.user?.is_anonymous).toBe(true);
	});
});
