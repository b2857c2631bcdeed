/**
 * `/auth/v1`: the part of Supabase Auth (GoTrue) an app without a login uses,
 * so `@supabase/ssr` and supabase-js's own auth client work unmodified against
 * the stand-in: anonymous sign-in (`POST /signup` with no email or phone), the
 * user behind an access token (`GET /user`), refreshing a session (`POST
 * /token?grant_type=refresh_token`) and signing out (`POST /logout`).
 *
 * Shapes as GoTrue answers them (internal/api/signup.go, token.go, user.go):
 * a session is `{access_token, token_type, expires_in, expires_at,
 * refresh_token, user}`; errors are `{code, error_code, msg}`. Users are rows
 * of auth.users (`is_anonymous`), so RLS sees the same `auth.uid()`. Refresh
 * tokens live in memory, single use, like GoTrue's rotation. Not covered:
 * email, phone, OAuth, MFA, PKCE, admin endpoints, identities.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { compactVerify, decodeJwt } from 'jose';
import type { Sql } from './db.ts';
import { mintUserToken, secretKey } from './jwt.ts';

/** What GoTrue gives an access token by default (`GOTRUE_JWT_EXP`). */
const ACCESS_TOKEN_SECONDS = 3600;

export interface AuthResponse {
	status: number;
	headers: Record<string, string>;
	body: string;
}

export interface StandinAuth {
	handle(
		method: string,
		path: string,
		query: URLSearchParams,
		headers: IncomingHttpHeaders,
		body: string,
	): Promise<AuthResponse>;
}

interface User {
	id: string;
	created_at: string;
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

function answer(status: number, body: unknown): AuthResponse {
	return { status, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

function refused(status: number, errorCode: string, msg: string): AuthResponse {
	return answer(status, { code: status, error_code: errorCode, msg });
}

/** The user as GoTrue answers it: an anonymous, authenticated one. */
function userJson(user: User) {
	return {
		id: user.id,
		aud: 'authenticated',
		role: 'authenticated',
		email: '',
		phone: '',
		app_metadata: { provider: 'anonymous', providers: ['anonymous'] },
		user_metadata: {},
		identities: [],
		created_at: user.created_at,
		updated_at: user.created_at,
		is_anonymous: true,
	};
}

/** The user with id `id`, or null. */
async function findUser(sql: Sql, id: string): Promise<User | null> {
	const [row] = await sql.unsafe<{ id: string; created_at: string }[]>(
		`select id::text, to_json(created_at)#>>'{}' as created_at from auth.users where id = $1::uuid`,
		[id],
	);
	return row ?? null;
}

/** The `sub` claim of a token signed with the secret and not expired; else GoTrue's 403 refusal. */
async function verifiedSub(token: string, jwtSecret: string): Promise<{ sub: unknown } | AuthResponse> {
	try {
		const { payload } = await compactVerify(token, secretKey(jwtSecret));
		const claims = JSON.parse(new TextDecoder().decode(payload)) as { sub?: unknown; exp?: unknown };
		if (typeof claims.exp !== 'number' || claims.exp <= Date.now() / 1000) {
			return refused(
				403,
				'bad_jwt',
				'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired',
			);
		}
		return { sub: claims.sub };
	} catch {
		return refused(403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature, signature is invalid');
	}
}

/**
 * The stand-in's Auth endpoints over `admin` (a superuser connection), signing
 * tokens with the project's secret.
 *
 * @example
 * const auth = standinAuth({ sql: dbs.admin, jwtSecret, issuer: `${url}/auth/v1` });
 */
export function standinAuth(options: { sql: Sql; jwtSecret: string; issuer: () => string }): StandinAuth {
	const refreshTokens = new Map<string, string>();

	async function session(user: User) {
		const accessToken = await mintUserToken(options.jwtSecret, user.id, {
			issuer: options.issuer(),
			expiresIn: ACCESS_TOKEN_SECONDS,
			isAnonymous: true,
			email: '',
			claims: {
				app_metadata: { provider: 'anonymous', providers: ['anonymous'] },
				amr: [{ method: 'anonymous', timestamp: Math.floor(Date.now() / 1000) }],
			},
		});
		const refreshToken = randomBytes(12).toString('base64url');
		refreshTokens.set(refreshToken, user.id);
		return {
			access_token: accessToken,
			token_type: 'bearer',
			expires_in: ACCESS_TOKEN_SECONDS,
			expires_at: decodeJwt(accessToken).exp,
			refresh_token: refreshToken,
			user: userJson(user),
		};
	}

	async function bearerUser(headers: IncomingHttpHeaders): Promise<User | AuthResponse> {
		const token = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1];
		if (!token) return refused(401, 'no_authorization', 'This endpoint requires a Bearer token');
		const verified = await verifiedSub(token, options.jwtSecret);
		if ('status' in verified) return verified;
		const { sub } = verified;
		const user = typeof sub === 'string' ? await findUser(options.sql, sub) : null;
		return user ?? refused(403, 'user_not_found', 'User from sub claim in JWT does not exist');
	}

	return {
		async handle(method, path, query, headers, body) {
			if (method === 'POST' && path === 'signup') {
				const input = (body ? JSON.parse(body) : {}) as { email?: string; phone?: string };
				if (input.email || input.phone) {
					return refused(422, 'validation_failed', 'The stand-in signs users in anonymously only');
				}
				const id = randomUUID();
				const [row] = await options.sql.unsafe<{ id: string; created_at: string }[]>(
					`insert into auth.users (id, aud, role, is_anonymous, raw_app_meta_data)
					 values ($1::uuid, 'authenticated', 'authenticated', true, $2::jsonb)
					 returning id::text, to_json(created_at)#>>'{}' as created_at`,
					[id, JSON.stringify({ provider: 'anonymous', providers: ['anonymous'] })],
				);
				return answer(200, await session(row!));
			}
			if (method === 'GET' && path === 'user') {
				const user = await bearerUser(headers);
				return 'status' in user ? user : answer(200, userJson(user));
			}
			if (method === 'POST' && path === 'token' && query.get('grant_type') === 'refresh_token') {
				const { refresh_token: token } = (body ? JSON.parse(body) : {}) as { refresh_token?: string };
				const id = token ? refreshTokens.get(token) : undefined;
				if (!token || !id)
					return refused(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
				refreshTokens.delete(token);
				const user = await findUser(options.sql, id);
				if (!user) return refused(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
				return answer(200, await session(user));
			}
			if (method === 'POST' && path === 'logout') {
				const user = await bearerUser(headers);
				if ('status' in user) return user;
				for (const [token, id] of refreshTokens) if (id === user.id) refreshTokens.delete(token);
				return { status: 204, headers: {}, body: '' };
			}
			return refused(404, 'not_found', `The stand-in has no ${method} /auth/v1/${path}`);
		},
	};
}
