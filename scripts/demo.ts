/**
 * `npm run demo`: the demo app with everything it needs, on this machine.
 *
 * Local (default): embedded PostgreSQL with its data under .local/ (survives
 * restarts), the compat bootstrap and migrations, the Deno worker, the
 * stand-in for Supabase's REST/Realtime/functions, the Vault secrets and the
 * dispatcher (so an insert kicks the worker, as pg_net does), then the
 * SvelteKit app. With SUPABASE_URL and SUPABASE_ANON_KEY (or
 * SUPABASE_PUBLISHABLE_KEY) set, only the app runs, against that project.
 *
 * Environment: DEMO_PORT (app port, default 5180: the same across restarts,
 * so an open tab survives one; a free one when 5180 is taken, and it says so), DEMO_MODEL_MS (the
 * model-call stand-in per chunk, default 300), DEMO_VERBOSE=1 (children's output),
 * DEMO_PLAN=paid (the worker's isolates under the paid plans' Edge Functions
 * limits, 400 s of wall clock, instead of the Free plan's 150 s).
 * Ctrl-C stops everything it started.
 */
import {
	DEMO_PORTS,
	duration,
	portOrFree,
	startLocalDemo,
	startRemoteDemo,
	type DemoStack,
} from '../src/local/demo/stack.ts';
import { HOSTED_FUNCTION_LIMITS } from '../src/local/standin/function-limits.ts';

const t0 = performance.now();
const log = (message: string) => console.log(`  ${message}`);
const echo = process.env.DEMO_VERBOSE ? (name: string, line: string) => console.log(`[${name}] ${line}`) : undefined;
const remoteUrl = process.env.SUPABASE_URL;
const remoteKey = process.env.SUPABASE_ANON_KEY ?? process.env.SUPABASE_PUBLISHABLE_KEY;

let stack: DemoStack | null = null;
let stopping = false;

async function shutdown(code: number): Promise<void> {
	if (stopping) return;
	stopping = true;
	console.log('\nStopping…');
	// Signals first, synchronously: even if this process is cut short, no child is left behind.
	stack?.killChildren();
	await stack?.stop();
	process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(0));

try {
	const appPort = process.env.DEMO_PORT
		? Number(process.env.DEMO_PORT)
		: await portOrFree(DEMO_PORTS.app, 'the app', log);
	if (remoteUrl && remoteKey) {
		console.log(`supabase-jobs demo against ${remoteUrl}`);
		stack = await startRemoteDemo({ supabaseUrl: remoteUrl, anonKey: remoteKey, appPort, log, echo });
	} else {
		if (remoteUrl)
			console.log('SUPABASE_URL is set without SUPABASE_ANON_KEY / SUPABASE_PUBLISHABLE_KEY: running locally.');
		console.log('supabase-jobs demo (local: embedded PostgreSQL + stand-ins; data in .local/demo-postgres)');
		const standinPort = await portOrFree(DEMO_PORTS.standin, 'the Supabase stand-in', log);
		const functionLimits = HOSTED_FUNCTION_LIMITS[process.env.DEMO_PLAN === 'paid' ? 'paid' : 'free'];
		stack = await startLocalDemo({ appPort, standinPort, log, echo, functionLimits });
	}
} catch (e) {
	console.error('The demo could not start:', e instanceof Error ? e.message : e);
	await shutdown(1);
}

if (stack && !stopping) {
	// The steps on the way to "ready" add up to it; the build ran alongside them (only the wait for it counts).
	const total = performance.now() - t0;
	const onTheWay = stack.steps.filter((s) => !s.parallel).reduce((sum, s) => sum + s.ms, 0);
	if (total - onTheWay >= 50) log(`other (ports, secrets, start-up) (${duration(total - onTheWay)})`);
	console.log(`
  Demo ready in ${duration(total)}:  ${stack.url}
`);
	if (stack.mode === 'local')
		console.log(`  Supabase stand-in: ${stack.supabaseUrl} (anon key ${stack.anonKey.slice(0, 16)}…)
  Database:          ${stack.databaseUrl}
  Admin:             ${stack.url}/admin  (press "Sign in as admin" there: local stack only)
  Each browser is its own anonymous visitor. Ctrl-C stops everything.`);
	else
		console.log(`  Needs, on the project: the migrations (supabase db push), the jobs-worker function deployed,
  the two Vault secrets, and anonymous sign-ins enabled. Ctrl-C stops the app.`);
	const app = stack.app!;
	void app.exited.then(({ code, signal }) => {
		if (!stopping) {
			console.error(`The app exited (${code ?? signal}):\n${app.lines.slice(-20).join('\n')}`);
			void shutdown(1);
		}
	});
}
