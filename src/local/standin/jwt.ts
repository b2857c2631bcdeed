/**
 * JWTs for the stand-in: minting Supabase-shaped anon / service_role / user
 * tokens (HS256 with the local secret), and verifying them the two ways
 * Supabase's services do, because they disagree on details:
 * - PostgREST (src/library/PostgREST/Auth/Jwt.hs, Error.hs): 401 PGRST301 for
 *   anything that fails to decode, PGRST303 for claim checks with 30 s skew.
 * - Realtime (lib/realtime_web/channels/auth/jwt_verification.ex and
 *   channels_authorization.ex): Joken, no skew, `role` and `exp` required.
 */
import { SignJWT, compactVerify, errors as joseErrors } from 'jose';
import { randomUUID } from 'node:crypto';

export type Claims = Record<string, unknown>;

/** The error body PostgREST answers with (Error.hs `errorPayload`). */
export interface PgrstErrorBody {
	code: string;
	message: string;
	details: string | null;
	hint: string | null;
}

export function secretKey(secret: string): Uint8Array {
	return new TextEncoder().encode(secret);
}

/** Signs `claims` with HS256, as GoTrue and the Supabase CLI do for their demo keys. */
export async function signToken(secret: string, claims: Claims): Promise<string> {
	return await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(secretKey(secret));
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * An API key exactly as the Supabase CLI mints its demo keys: `{iss:
 * 'supabase-demo', role, exp: 1983812996}`, so the same secret always gives
 * the same key (with the CLI's default secret, the CLI's well-known keys).
 */
export async function mintApiKey(secret: string, role: 'anon' | 'service_role'): Promise<string> {
	return await signToken(secret, { iss: 'supabase-demo', role, exp: 1983812996 });
}

export interface UserTokenOptions {
	email?: string;
	/** Seconds from now; negative mints an already expired token. Default 3600. */
	expiresIn?: number;
	isAnonymous?: boolean;
	role?: string;
	/** Extra or overriding claims. */
	claims?: Claims;
	issuer?: string;
}

/** A GoTrue-shaped access token for `sub`. */
export async function mintUserToken(secret: string, sub: string, options: UserTokenOptions = {}): Promise<string> {
	const iat = nowSeconds();
	const claims: Claims = {
		iss: options.issuer ?? 'http://127.0.0.1/auth/v1',
		sub,
		aud: 'authenticated',
		exp: iat + (options.expiresIn ?? 3600),
		iat,
		email: options.email ?? `${sub}@example.test`,
		phone: '',
		app_metadata: { provider: 'email', providers: ['email'] },
		user_metadata: {},
		role: options.role ?? 'authenticated',
		aal: 'aal1',
		amr: [{ method: 'password', timestamp: iat }],
		session_id: randomUUID(),
		is_anonymous: options.isAnonymous ?? false,
		...options.claims,
	};
	return await signToken(secret, claims);
}

function pgrst301(message: string, details: string | null = null): PgrstErrorBody {
	return { code: 'PGRST301', message, details, hint: null };
}

function pgrst303(message: string): PgrstErrorBody {
	return { code: 'PGRST303', message, details: null, hint: null };
}

/**
 * The roles a signed token may name: these three, and any other role the
 * `authenticator` login may switch to (a custom role such as `plan_pro`,
 * granted to authenticator), as PostgREST accepts. Realtime sets the role on
 * a superuser connection, where `set role` to anything (postgres, say) would
 * succeed, so the stand-in asks the same question there.
 */
const API_ROLES: readonly string[] = ['anon', 'authenticated', 'service_role'];

/** Whether `authenticator` may switch to `role` (asked only for roles outside the three). */
export type RoleCheck = (role: string) => Promise<boolean>;

/** The RoleCheck of a database: a role authenticator is a member of, other than authenticator itself. */
export function authenticatorMayBecome(sql: {
	unsafe: (query: string, params: string[]) => PromiseLike<readonly { ok: boolean }[]>;
}): RoleCheck {
	return async (role) => {
		const rows = await sql.unsafe(
			`select exists (select 1 from pg_catalog.pg_roles r
			                 where r.rolname = $1 and r.rolname <> 'authenticator'
			                   and pg_catalog.pg_has_role('authenticator', r.oid, 'MEMBER')) as ok`,
			[role],
		);
		return rows[0]?.ok === true;
	};
}

const ROLE_RULE = `${API_ROLES.join(', ')} or a role authenticator may switch to`;

function roleRefused(role: string): PgrstErrorBody {
	return pgrst301(`JWT role ${JSON.stringify(role)} is not allowed`, `The role claim must be ${ROLE_RULE}`);
}

async function roleAllowed(role: string, mayBecome: RoleCheck | undefined): Promise<boolean> {
	return API_ROLES.includes(role) || (mayBecome !== undefined && (await mayBecome(role)));
}

export type RestAuth = { ok: true; role: string; claims: Claims } | { ok: false; error: PgrstErrorBody };

const HMAC_ALGS = ['HS256', 'HS384', 'HS512'];

function decodeHeader(token: string): Record<string, unknown> | null {
	try {
		return JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
	} catch {
		return null;
	}
}

/**
 * PostgREST's `parseToken` + `parseClaims`: no token means the anon role;
 * otherwise the signature must verify with the secret and exp/nbf/iat pass
 * with 30 seconds of allowed skew. Messages are upstream's (Error.hs).
 */
export async function verifyForRest(
	secret: string,
	authorization: string | undefined,
	anonRole = 'anon',
	mayBecome?: RoleCheck,
): Promise<RestAuth> {
	if (authorization === undefined) return { ok: true, role: anonRole, claims: {} };
	const match = /^bearer\s+(.*)$/i.exec(authorization.trim());
	if (!match) return { ok: true, role: anonRole, claims: {} };
	const token = (match[1] ?? '').trim();
	if (token === '') return { ok: false, error: pgrst301('Empty JWT is sent in Authorization header') };
	const parts = token.split('.').length;
	if (parts !== 3) return { ok: false, error: pgrst301(`Expected 3 parts in JWT; got ${parts}`) };
	const header = decodeHeader(token);
	if (header && header.alg === 'none') {
		return {
			ok: false,
			error: pgrst301('Wrong or unsupported encoding algorithm', "JWT is unsecured but expected 'alg' was not 'none'"),
		};
	}
	let payload: Uint8Array;
	try {
		({ payload } = await compactVerify(token, secretKey(secret), { algorithms: HMAC_ALGS }));
	} catch (e) {
		if (e instanceof joseErrors.JWSSignatureVerificationFailed || e instanceof joseErrors.JOSEAlgNotAllowed) {
			return {
				ok: false,
				error: pgrst301('No suitable key or wrong key type', 'None of the keys was able to decode the JWT'),
			};
		}
		return { ok: false, error: pgrst301('JWT cryptographic operation failed') };
	}
	let claims: Claims;
	try {
		const parsed: unknown = JSON.parse(new TextDecoder().decode(payload));
		if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
		claims = parsed as Claims;
	} catch {
		return { ok: false, error: pgrst303('Parsing claims failed') };
	}
	const now = nowSeconds();
	const skew = 30;
	const checks: [string, string, (n: number) => boolean, string][] = [
		['exp', "The JWT 'exp' claim must be a number", (n) => now - skew > n, 'JWT expired'],
		['nbf', "The JWT 'nbf' claim must be a number", (n) => now + skew < n, 'JWT not yet valid'],
		['iat', "The JWT 'iat' claim must be a number", (n) => now + skew < n, 'JWT issued at future'],
	];
	for (const [key, notNumber, invalid, message] of checks) {
		const value = claims[key];
		if (value === undefined || value === null) continue;
		if (typeof value !== 'number') return { ok: false, error: pgrst303(notNumber) };
		if (invalid(Math.floor(value))) return { ok: false, error: pgrst303(message) };
	}
	const role =
		typeof claims.role === 'string' ? claims.role : claims.role === undefined ? anonRole : JSON.stringify(claims.role);
	if (!(role === anonRole || (await roleAllowed(role, mayBecome)))) return { ok: false, error: roleRefused(role) };
	return { ok: true, role, claims };
}

/** The `WWW-Authenticate` value PostgREST sends with a JWT error (Error.hs `invalidTokenHeader`). */
export function wwwAuthenticate(error: PgrstErrorBody): string {
	return `Bearer error="invalid_token", error_description=${JSON.stringify(error.message)}`;
}

export type RealtimeTokenError =
	| { kind: 'expired'; message: string }
	| { kind: 'missing_claims'; message: string }
	| { kind: 'malformed'; message: string }
	| { kind: 'signature'; message: string }
	| { kind: 'signer'; message: string }
	| { kind: 'role'; message: string };

export type RealtimeAuth = { ok: true; claims: Claims } | { ok: false; error: RealtimeTokenError };

/**
 * Realtime's `ChannelsAuthorization.authorize_conn/3`: Joken verification
 * (exp must be in the future with no skew, iat a number when present), then
 * `role` and `exp` must both be present.
 */
export async function verifyForRealtime(
	secret: string,
	rawToken: string,
	mayBecome?: RoleCheck,
): Promise<RealtimeAuth> {
	const token = decodeURIComponent(rawToken).replace(/\s|\n/g, '');
	const parts = token.split('.');
	let claims: Claims;
	try {
		const parsed: unknown = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'));
		if (parts.length !== 3 || !parsed || typeof parsed !== 'object') throw new Error('malformed');
		claims = parsed as Claims;
	} catch {
		return { ok: false, error: { kind: 'malformed', message: 'The token provided is not a valid JWT' } };
	}
	const header = decodeHeader(token);
	if (!header || typeof header.alg !== 'string' || !HMAC_ALGS.includes(header.alg)) {
		return {
			ok: false,
			error: { kind: 'signer', message: 'Failed to generate JWT signer, check your JWT secret or JWKS configuration' },
		};
	}
	try {
		await compactVerify(token, secretKey(secret), { algorithms: [header.alg] });
	} catch {
		return { ok: false, error: { kind: 'signature', message: 'Failed to validate JWT signature' } };
	}
	const now = nowSeconds();
	if (claims.exp !== undefined && !(typeof claims.exp === 'number' && claims.exp > now)) {
		const exp = typeof claims.exp === 'number' ? Math.round(claims.exp) : 0;
		return { ok: false, error: { kind: 'expired', message: `Token has expired ${now - exp} seconds ago` } };
	}
	if (claims.iat !== undefined && typeof claims.iat !== 'number') {
		return { ok: false, error: { kind: 'malformed', message: 'The token provided is not a valid JWT' } };
	}
	if (claims.role === undefined || claims.exp === undefined) {
		return { ok: false, error: { kind: 'missing_claims', message: 'Fields `role` and `exp` are required in JWT' } };
	}
	if (!(typeof claims.role === 'string' && (await roleAllowed(claims.role, mayBecome)))) {
		const role = JSON.stringify(claims.role);
		return { ok: false, error: { kind: 'role', message: `JWT role ${role} is not allowed; it must be ${ROLE_RULE}` } };
	}
	return { ok: true, claims: { ...claims, exp: Math.round(claims.exp as number) } };
}
