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

/**
 * A checker for `Authorization: Bearer <secret>`. Refuses secrets shorter
 * than 16 characters at construction: a guessable secret is no secret.
 *
 * @example
 * ```ts
 * const authorized = bearerChecker(Deno.env.get('JOBS_WORKER_SECRET')!);
 * if (!(await authorized(req))) return new Response('unauthorized', { status: 401 });
 * ```
 */
export function bearerChecker(secret: string): (req: Request) => Promise<boolean> {
	if (typeof secret !== 'string' || secret.length < 16) {
		throw new TypeError('the worker secret must be a string of at least 16 characters (set JOBS_WORKER_SECRET)');
	}
	return async (req) => {
		const header = req.headers.get('authorization') ?? '';
		const match = /^Bearer[ ]+(.+)$/i.exec(header.trim());
		// Compare something even when the header is malformed, so the answer takes as long either way.
		const ok = await timingSafeEqualText(match?.[1] ?? '', secret);
		return ok && match !== null;
	};
}
