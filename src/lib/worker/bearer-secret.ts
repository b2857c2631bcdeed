/**
 * The worker's own secret. A function called by a trigger or by cron runs
 * with verify_jwt off, so it authenticates its caller itself: a Bearer token
 * compared in constant time, never parsed as a JWT, never the publishable key.
 */

const encoder = new TextEncoder();

async function digest(text: string): Promise<Uint8Array> {
	return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

/**
 * Compares two strings in time that depends on neither: both are hashed
 * first, so even their lengths stay hidden, then every byte is compared.
 *
 * @example
 * ```ts
 * if (!(await timingSafeEqualText(given, expected))) return new Response(null, { status: 401 });
 * ```
 */
export async function timingSafeEqualText(a: string, b: string): Promise<boolean> {
	const [x, y] = await Promise.all([digest(a), digest(b)]);
	let diff = 0;
	for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
	return diff === 0;
}

/** How long a signed wake-up token is accepted, in seconds (either side of now, for clock skew). */
const TOKEN_TTL_SECONDS = 300;

async function hmacHex(secret: string, message: string): Promise<string> {
	const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
		'sign',
	]);
	const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
	return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The token the database's kick signs for one wake-up
 * (`supabase_jobs.kick_token`): `v1.<unix seconds>.<hex HMAC-SHA256(secret,
 * "v1.<unix seconds>")>`. pg_net keeps its queue, headers included, in a
 * table until it sends: a token that expires in minutes is all that ever sits
 * there, never the secret.
 *
 * @example
 * ```ts
 * const token = await signWakeUpToken(secret, Math.floor(Date.now() / 1000));
 * await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
 * ```
 */
export async function signWakeUpToken(secret: string, atSeconds: number): Promise<string> {
	return `v1.${atSeconds}.${await hmacHex(secret, `v1.${atSeconds}`)}`;
}

/**
 * A checker for `Authorization: Bearer <secret>`, or a wake-up token signed
 * with that secret (see {@link signWakeUpToken}) no older than 5 minutes.
 * Refuses secrets shorter than 16 characters at construction: a guessable
 * secret is no secret.
 *
 * @example
 * ```ts
 * const authorized = bearerChecker(Deno.env.get('JOBS_WORKER_SECRET')!);
 * if (!(await authorized(req))) return new Response('unauthorized', { status: 401 });
 * ```
 */
export function bearerChecker(
	secret: string,
	now: () => number = () => Date.now(),
): (req: Request) => Promise<boolean> {
	if (typeof secret !== 'string' || secret.length < 16) {
		throw new TypeError('the worker secret must be a string of at least 16 characters (set JOBS_WORKER_SECRET)');
	}
	return async (req) => {
		const header = req.headers.get('authorization') ?? '';
		const match = /^Bearer[ ]+(.+)$/i.exec(header.trim());
		const given = match?.[1] ?? '';
		const token = /^v1\.(\d{1,12})\.[0-9a-f]{64}$/.exec(given);
		if (token) {
			const at = Number(token[1]);
			const fresh = Math.abs(now() / 1000 - at) <= TOKEN_TTL_SECONDS;
			const ok = await timingSafeEqualText(given, await signWakeUpToken(secret, at));
			return ok && fresh;
		}
		// Compare something even when the header is malformed, so the answer takes as long either way.
		const ok = await timingSafeEqualText(given, secret);
		return ok && match !== null;
	};
}
