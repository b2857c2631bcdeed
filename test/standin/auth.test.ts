/**
 * /auth/v1 through supabase-js's own auth client against the stand-in: an
 * anonymous sign-in makes a user of auth.users whose requests RLS sees as
 * `auth.uid()`; the token's user is read back, a session refreshes once per
 * refresh token (GoTrue's rotation), sign-out ends it, and the gateway asks
 * for the project's key first.
 */
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { useStandin } from './helpers.ts';

const f = await useStandin(`
  create function public.my_uid() returns uuid language sql stable as $$ select auth.uid() $$;
  grant execute on function public.my_uid() to authenticated;
`);

function authClient() {
	const c = createClient(f.standin.url, f.standin.anonKey, {
		realtime: { transport: WebSocket as never },
		auth: { persistSession: false, autoRefreshToken: false },
	});
	f.clients.push(c);
	return c;
}

describe('the stand-in’s Auth (anonymous sign-ins)', () => {
	it('signInAnonymously makes an anonymous user of auth.users, and REST calls then run as that user', async () => {
		const supabase = authClient();
		const { data, error } = await supabase.auth.signInAnonymously();
		expect(error).toBeNull();
		const user = data.user!;
		expect(user).toMatchObject({ aud: 'authenticated', role: 'authenticated', is_anonymous: true });
		expect(data.session).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
		const [row] = await f.db.sql`select is_anonymous from auth.users where id = ${user.id}`;
		expect(row).toEqual({ is_anonymous: true });
		expect((await supabase.rpc('my_uid')).data).toBe(user.id);
		expect((await supabase.auth.getUser()).data.user?.id).toBe(user.id);
	});

	it('a refresh token gives a new session once; a second use is refused', async () => {
		const supabase = authClient();
		const { data } = await supabase.auth.signInAnonymously();
		const refreshToken = data.session!.refresh_token;
		const first = await supabase.auth.refreshSession({ refresh_token: refreshToken });
		expect(first.error).toBeNull();
		expect(first.data.user?.id).toBe(data.user!.id);
		const again = await authClient().auth.refreshSession({ refresh_token: refreshToken });
		expect(again.error?.message).toMatch(/Invalid Refresh Token/);
	});

	it('getUser refuses a token signed with another secret, and the gateway refuses a request without the key', async () => {
		const supabase = authClient();
		expect((await supabase.auth.getUser('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bad')).error?.status).toBe(403);
		const res = await fetch(`${f.standin.url}/auth/v1/signup`, { method: 'POST', body: '{}' });
		expect(res.status).toBe(401);
		expect(await res.json()).toMatchObject({ message: 'No API key found in request' });
	});

	it('signOut ends the session: its refresh token no longer works', async () => {
		const supabase = authClient();
		const { data } = await supabase.auth.signInAnonymously();
		expect((await supabase.auth.signOut()).error).toBeNull();
		const after = await authClient().auth.refreshSession({ refresh_token: data.session!.refresh_token });
		expect(after.error).not.toBeNull();
	});
});
