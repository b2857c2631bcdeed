/**
 * An anonymous session per visitor, kept in an httpOnly cookie.
 *
 * On a real project this is GoTrue's anonymous sign-in
 * (`supabase.auth.signInAnonymously()`, here called server-side so the
 * session can live in a cookie) and its refresh-token flow. In embedded mode
 * there is no GoTrue: the demo-only stand-in below creates the user in
 * auth.users and mints a GoTrue-shaped access token with the stand-in's
 * secret (src/local/standin/jwt.ts) — a stand-in for anonymous sign-in,
 * nothing more. Either way each visitor is a distinct user, and RLS keeps
 * their jobs to themselves.
 */
import { createClient, type SupabaseClientOptions } from '@supabase/supabase-js';
import { serverRealtime } from 'supabase-jobs';
import { decodeJwt, jwtVerify } from 'jose';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { mintUserToken } from '../../local/standin/jwt.ts';
import type { Cookies } from '@sveltejs/kit';
import type { DemoConfig } from './config.server.ts';

export const SESSION_COOKIE = 'sj_demo_session';

/** What the cookie holds. */
export interface DemoSession {
	accessToken: string;
	/** GoTrue's refresh token; null for stand-in sessions (re-minted instead). */
	refreshToken: string | null;
	userId: string;
	/** Seconds since the epoch. */
	expiresAt: number;
}

/** Stand-in sessions last a week: long enough for a demo, and nothing refreshes them. */
const STANDIN_TTL_SECONDS = 7 * 24 * 3600;

let standinSql: postgres.Sql | null = null;

async function standinSignIn(
	config: Extract<DemoConfig['auth'], { mode: 'standin' }>,
	supabaseUrl: string,
	userId?: string,
) {
	standinSql ??= postgres(config.databaseUrl, { max: 2, onnotice: () => {} });
	const id = userId ?? randomUUID();
	await standinSql`
		insert into auth.users (id, aud, role, is_anonymous, raw_app_meta_data)
		values (${id}, 'authenticated', 'authenticated', true, ${standinSql.json({ provider: 'anonymous', providers: ['anonymous'] })})
		on conflict (id) do nothing`;
	// The token carries the user's app_metadata as stored, as GoTrue's does (a local admin stays one on refresh).
	const [user] = await standinSql<{ app_metadata: Record<string, unknown> | null }[]>`
		select raw_app_meta_data as app_metadata from auth.users where id = ${id}`;
	const accessToken = await mintUserToken(config.jwtSecret, id, {
		issuer: `${supabaseUrl}/auth/v1`,
		expiresIn: STANDIN_TTL_SECONDS,
		isAnonymous: true,
		email: '',
		claims: { app_metadata: user?.app_metadata ?? { provider: 'anonymous', providers: ['anonymous'] } },
	});
	return { accessToken, refreshToken: null, userId: id, expiresAt: decodeJwt(accessToken).exp! };
}

/**
 * Whether this demo may offer "sign in as admin": only on the local stack,
 * where the server itself mints the tokens (the stand-in's secret) and the
 * Supabase it talks to is on this machine. A deploy against a hosted project
 * has neither, so the offer never appears there.
 *
 * @example
 * if (offersLocalAdmin(locals.config)) await signInAsLocalAdmin(locals.config, locals.session);
 */
export function offersLocalAdmin(config: DemoConfig): boolean {
	if (config.auth.mode !== 'standin') return false;
	const host = new URL(config.supabaseUrl).hostname;
	return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Makes the visitor an admin on the local stack: app_metadata.role = 'admin'
 * stored on their user (what the Auth admin API does on a hosted project),
 * and a new token that says so. Refused anywhere {@link offersLocalAdmin} is false.
 *
 * @example
 * setSessionCookie(cookies, await signInAsLocalAdmin(locals.config, locals.session));
 */
export async function signInAsLocalAdmin(config: DemoConfig, session: DemoSession): Promise<DemoSession> {
	if (!offersLocalAdmin(config) || config.auth.mode !== 'standin')
		throw new Error('Signing in as admin is offered on the local stack only');
	// Signed in first: the visitor's user row exists before it is changed.
	await standinSignIn(config.auth, config.supabaseUrl, session.userId);
	await standinSql!`
		update auth.users set raw_app_meta_data = coalesce(raw_app_meta_data, '{}'::jsonb) || '{"role": "admin"}'::jsonb
		 where id = ${session.userId}`;
	return await standinSignIn(config.auth, config.supabaseUrl, session.userId);
}

/**
 * supabase-js on the server. Node 20 has no WebSocket, and the client builds
 * its Realtime half eagerly: `serverRealtime` lets it be created there (the
 * server never subscribes).
 */
function serverClient(config: DemoConfig, options: SupabaseClientOptions<'public'>) {
	return createClient(config.supabaseUrl, config.anonKey, { ...options, realtime: serverRealtime });
}

function goTrue(config: DemoConfig) {
	return serverClient(config, {
		auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
	});
}

/**
 * Signs a new visitor in anonymously: a new user each time.
 *
 * @example
 * const session = await signInAnonymously(config);
 */
export async function signInAnonymously(config: DemoConfig): Promise<DemoSession> {
	if (config.auth.mode === 'standin') return await standinSignIn(config.auth, config.supabaseUrl);
	const { data, error } = await goTrue(config).auth.signInAnonymously();
	if (error || !data.session)
		throw new Error(
			`Anonymous sign-in failed (${error?.message ?? 'no session'}). Enable it in the dashboard: Authentication -> Sign In / Providers -> Allow anonymous sign-ins.`,
		);
	const s = data.session;
	return { accessToken: s.access_token, refreshToken: s.refresh_token, userId: s.user.id, expiresAt: s.expires_at! };
}

/**
 * The session, refreshed when it expires within five minutes; null when it
 * cannot be (the visitor then signs in anew).
 *
 * @example
 * const fresh = await keepFresh(config, session);
 */
export async function keepFresh(config: DemoConfig, session: DemoSession): Promise<DemoSession | null> {
	if (session.expiresAt - Date.now() / 1000 > 300) return session;
	if (config.auth.mode === 'standin') return await standinSignIn(config.auth, config.supabaseUrl, session.userId);
	if (!session.refreshToken) return null;
	const { data, error } = await goTrue(config).auth.refreshSession({ refresh_token: session.refreshToken });
	if (error || !data.session) return null;
	const s = data.session;
	return { accessToken: s.access_token, refreshToken: s.refresh_token, userId: s.user!.id, expiresAt: s.expires_at! };
}

export function encodeSession(session: DemoSession): string {
	return Buffer.from(JSON.stringify(session), 'utf8').toString('base64url');
}

export function decodeSession(value: string | undefined): DemoSession | null {
	if (!value) return null;
	try {
		const s = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<DemoSession>;
		if (typeof s.accessToken !== 'string' || typeof s.userId !== 'string' || typeof s.expiresAt !== 'number')
			return null;
		// The cookie is the visitor's own; the token inside must still be for the user it claims.
		if (decodeJwt(s.accessToken).sub !== s.userId) return null;
		return {
			accessToken: s.accessToken,
			refreshToken: s.refreshToken ?? null,
			userId: s.userId,
			expiresAt: s.expiresAt,
		};
	} catch {
		return null;
	}
}

/**
 * A server-side client that acts as the visitor (their token decides the role; RLS applies).
 *
 * @example
 * const job = await new JobStore(supabaseAdapter(clientFor(config, session))).get(id);
 */
export function clientFor(config: DemoConfig, session: DemoSession) {
	return serverClient(config, { accessToken: async () => session.accessToken });
}

/**
 * The demo's own admin check: the visitor's token, verified (the stand-in's
 * secret, or GoTrue), says app_metadata.role = 'admin'. The cookie is the
 * visitor's to edit, so its token is never trusted unverified.
 *
 * @example
 * if (!(await isAdminSession(locals.config, locals.session))) error(403);
 */
export async function isAdminSession(config: DemoConfig, session: DemoSession): Promise<boolean> {
	try {
		if (config.auth.mode === 'standin') {
			const { payload } = await jwtVerify(session.accessToken, new TextEncoder().encode(config.auth.jwtSecret), {
				algorithms: ['HS256'],
			});
			return (payload.app_metadata as { role?: unknown } | undefined)?.role === 'admin';
		}
		const { data, error } = await goTrue(config).auth.getUser(session.accessToken);
		return !error && data.user.app_metadata.role === 'admin';
	} catch {
		return false;
	}
}

/**
 * Stores the session in its httpOnly cookie.
 *
 * @example
 * setSessionCookie(event.cookies, await signInAnonymously(config));
 */
export function setSessionCookie(cookies: Cookies, session: DemoSession): void {
	cookies.set(SESSION_COOKIE, encodeSession(session), {
		path: '/',
		httpOnly: true,
		sameSite: 'lax',
		// The demo is served over http on localhost; a deployed app keeps secure: true.
		secure: false,
		maxAge: 30 * 24 * 3600,
	});
}
