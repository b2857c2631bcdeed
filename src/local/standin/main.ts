/**
 * Runs the stand-in from the command line against DATABASE_URL and prints the
 * URL and keys to use with supabase-js. Local development tooling only.
 *
 * @example
 * DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres \
 *   STANDIN_PORT=54321 STANDIN_FUNCTIONS='{"worker":"http://127.0.0.1:8000"}' \
 *   npx tsx src/local/standin/main.ts
 */
import { createStandin } from './server.ts';
import type { FunctionTarget } from './functions-proxy.ts';

const DEFAULT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';

async function main(): Promise<void> {
	const databaseUrl = process.env.DATABASE_URL;
	if (!databaseUrl) {
		console.error(
			'DATABASE_URL is required (a superuser connection string of the database with the compat bootstrap applied).',
		);
		process.exit(2);
	}
	const functions = process.env.STANDIN_FUNCTIONS
		? (JSON.parse(process.env.STANDIN_FUNCTIONS) as Record<string, FunctionTarget>)
		: {};
	const standin = await createStandin({
		databaseUrl,
		jwtSecret: process.env.JWT_SECRET ?? DEFAULT_SECRET,
		port: Number(process.env.STANDIN_PORT ?? 54321),
		functions,
		// Realtime's quotas and timings as JSON, e.g. STANDIN_REALTIME='{"maxEventsPerSecond":500}'.
		...(process.env.STANDIN_REALTIME ? { realtime: JSON.parse(process.env.STANDIN_REALTIME) as object } : {}),
	});
	console.log(`supabase-jobs stand-in (local development only) listening
  SUPABASE_URL=${standin.url}
  SUPABASE_ANON_KEY=${standin.anonKey}
  SUPABASE_SERVICE_ROLE_KEY=${standin.serviceRoleKey}
  JWT_SECRET=${standin.jwtSecret}
  REST:      ${standin.url}/rest/v1
  Realtime:  ${standin.url.replace(/^http/, 'ws')}/realtime/v1/websocket
  Functions: ${
		Object.keys(functions)
			.map((n) => `${standin.url}/functions/v1/${n}`)
			.join(', ') || '(none: set STANDIN_FUNCTIONS)'
	}`);
	const shutdown = () => {
		standin.close().then(
			() => process.exit(0),
			() => process.exit(1),
		);
	};
	process.on('SIGINT', shutdown);
	process.on('SIGTERM', shutdown);
}

await main();
