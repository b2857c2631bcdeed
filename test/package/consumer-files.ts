/**
 * The sources of the throwaway consumer project the packed package is tried
 * in: a plain Node script, a TypeScript file type-checked under the strictest
 * options, a minimal SvelteKit app, and a config.toml as `supabase init` leaves
 * it. Kept as strings (not files under test/) so the repository's own
 * svelte-check and eslint, which resolve `supabase-jobs` to this repository,
 * never see them.
 */

/**
 * The consumer's other dependencies: the driver and zod as the README's npm i
 * line installs them (the registry's latest), the rest at the versions the
 * repository itself uses (already in the npm cache).
 */
export const CONSUMER_DEPENDENCIES = [
	'postgres',
	'zod',
	'svelte',
	'@sveltejs/kit',
	'@sveltejs/adapter-node',
	'@sveltejs/vite-plugin-svelte',
	'vite',
	'typescript',
	'@types/node',
	'@supabase/ssr',
] as const;

/**
 * Plain `node`, no loader: every Node-facing entry imports, one job goes
 * through enqueue → claim → succeed → get on DATABASE_URL, and a server's
 * supabase-js client (@supabase/ssr) is created with `serverRealtime`.
 * Prints one JSON line.
 */
export const NODE_CHECK = `import postgres from 'postgres';
import { z } from 'zod';
import * as main from 'supabase-jobs';
import * as worker from 'supabase-jobs/worker';
import * as node from 'supabase-jobs/node';
import * as kit from 'supabase-jobs/kit';
import * as adapter from 'supabase-jobs/adapter';

const { JobStore, defineJobKind, postgresAdapter, serverRealtime, supabaseAdapter } = main;
const { PhasePlan } = worker;
const sql = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
const kind = defineJobKind({
	name: 'consumer.node-check',
	params: z.object({ n: z.number() }),
	plan: PhasePlan.fromSeconds({ work: 1 }),
});
const store = new JobStore(postgresAdapter(sql));
const queued = await store.enqueue(kind, { params: { n: 7 } });
const claimed = await store.claim(queued.id);
const done = await store.succeed(queued.id, { attempt: claimed.attempts });
const got = await store.get(queued.id);
await sql.end();
// A server's supabase-js client: realtime-js refuses to construct one without a WebSocket (Node 20) unless given a transport.
const { createServerClient } = await import('@supabase/ssr');
const server = createServerClient('http://127.0.0.1:9', 'publishable-key', {
	cookies: { getAll: () => [], setAll: () => {} },
	realtime: serverRealtime,
});
new JobStore(supabaseAdapter(server));
console.log(JSON.stringify({
	node: process.version,
	entries: {
		main: Object.keys(main).length,
		worker: typeof worker.createWorker,
		node: typeof node.runWorkers,
		kit: typeof kit.toHttpError,
		adapter: typeof adapter.fromPostgresError,
	},
	id: queued.id,
	statuses: [queued.status, claimed.status, done.status, got.status],
	params: got.params,
}));
`;

/**
 * Deno, through the function's import map (deno.json as init writes it):
 * every entry an edge function may load imports, by its bare name. Prints one JSON line.
 */
export const DENO_CHECK = `import * as main from 'supabase-jobs';
import * as worker from 'supabase-jobs/worker';
import * as adapter from 'supabase-jobs/adapter';
import * as kit from 'supabase-jobs/kit';
console.log(JSON.stringify({
	main: typeof main.JobStore,
	worker: typeof worker.createWorker,
	adapter: typeof adapter.parseJobRow,
	kit: typeof kit.httpStatusOf,
}));
`;

/** Every entry's public API as a TypeScript user writes it. */
export const TYPED_CONSUMER = `import postgres from 'postgres';
import { z } from 'zod';
import {
	JobStore,
	defineJobKind,
	isJobError,
	postgresAdapter,
	serverRealtime,
	supabaseAdapter,
	type Job,
	type JobAdapter,
} from 'supabase-jobs';
import { JobUserError, PhasePlan, createWorker, defineJobHandler, type JobHandler } from 'supabase-jobs/worker';
import { runWorkers, type WorkerRunner } from 'supabase-jobs/node';
import { httpStatusOf, toHttpError } from 'supabase-jobs/kit';
import { CancelButton, JobProgress, WatchedJob, type JobSnapshot } from 'supabase-jobs/svelte';
import { JOB_FUNCTIONS, fromPostgresError, parseJobRow, type RawRow } from 'supabase-jobs/adapter';
import { createServerClient } from '@supabase/ssr';

export const extract = defineJobKind({
	name: 'extract',
	params: z.object({ filename: z.string().min(1) }),
	plan: PhasePlan.fromSeconds({ read: 1, table: 30 }, { perKilochar: { table: 0.5 } }),
});

const sql = postgres('postgres://localhost/none', { prepare: false, max: 1 });
export const store = new JobStore(postgresAdapter(sql), { staleAfterMs: 300_000 });

export async function enqueue(filename: string): Promise<Job<{ filename: string }>> {
	return await store.enqueue(extract, { params: { filename }, payload: new Uint8Array([1, 2]) });
}

export const handler: JobHandler = defineJobHandler(
	extract,
	async ({ params, tracker }) => {
		const text = await tracker.run('read', async () => params.filename.toUpperCase());
		if (!text) throw new JobUserError({ en: 'Empty.', 'pt-BR': 'Vazio.' });
		return null;
	},
	{ size: ({ job }) => job.payload?.byteLength ?? null },
);

export const worker = createWorker({ store, handlers: [handler], secret: 'a-secret-of-sixteen-chars' });
export const runner: WorkerRunner = runWorkers({ sql, store, handlers: [handler], concurrency: 2 });

export function status(e: unknown): number | null {
	if (isJobError(e, 'job_not_found')) toHttpError(e);
	return httpStatusOf(e);
}

/** An adapter written against supabase-jobs/adapter: it wraps another one, as a logging layer would. */
export function logged(inner: JobAdapter): JobAdapter {
	return {
		name: \`logged(\${inner.name})\`,
		async call(fn, args) {
			if (!(fn in JOB_FUNCTIONS)) throw new Error(fn);
			try {
				return await inner.call(fn, args);
			} catch (e) {
				throw fromPostgresError(e);
			}
		},
	};
}
export const firstRow = (rows: RawRow[]) => (rows[0] ? parseJobRow(rows[0]) : null);

export function watched(snapshot: JobSnapshot): WatchedJob {
	return new WatchedJob(store, snapshot.id, snapshot);
}
export const components = [JobProgress, CancelButton];

// A server's client, as hooks.server.ts makes it: creatable on Node 20 too.
export const serverClient = createServerClient('http://localhost:54321', 'publishable-key', {
	cookies: { getAll: () => [], setAll: () => {} },
	realtime: serverRealtime,
});
export const serverStore = new JobStore(supabaseAdapter(serverClient));
`;

/** The strict options of the issue, for one moduleResolution. */
export function consumerTsconfig(resolution: 'nodenext' | 'bundler'): string {
	return JSON.stringify({
		compilerOptions: {
			target: 'es2022',
			module: resolution === 'nodenext' ? 'nodenext' : 'esnext',
			moduleResolution: resolution,
			strict: true,
			exactOptionalPropertyTypes: true,
			noPropertyAccessFromIndexSignature: true,
			noUncheckedIndexedAccess: true,
			// The package's declarations are checked too: that is the point.
			skipLibCheck: false,
			noEmit: true,
			types: ['node'],
		},
		files: ['typed.ts'],
	});
}

/** A config.toml as `supabase init` writes it (abridged). */
export const SUPABASE_CONFIG = `project_id = "consumer"

[api]
enabled = true
port = 54321
schemas = ["public", "graphql_public"]

[db]
port = 54322
major_version = 17

[edge_runtime]
enabled = true
policy = "oneshot"
`;

/**
 * A minimal SvelteKit app (adapter-node) in the README's shape: hooks create
 * the request's client with @supabase/ssr's `createServerClient` (and
 * `serverRealtime`, without which it throws on Node 20), the page watches
 * through a getter that creates the browser's client (`createBrowserClient`)
 * on first use, which server rendering never calls. The server load builds a
 * snapshot of a job of the kind declared in init's kinds module (the one the
 * Deno function imports too); the page shows it through WatchedJob and
 * <JobProgress>.
 */
export const KIT_APP: Record<string, string> = {
	'svelte.config.js': `import adapter from '@sveltejs/adapter-node';
export default { kit: { adapter: adapter() } };
`,
	'vite.config.js': `import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vite';
export default defineConfig({ plugins: [sveltekit()] });
`,
	'src/app.html': `<!doctype html>
<html lang="en">
	<head><meta charset="utf-8" />%sveltekit.head%</head>
	<body><div>%sveltekit.body%</div></body>
</html>
`,
	'src/routes/+page.server.ts': `import { wordCount } from '../../supabase/functions/jobs-worker/kinds.ts';

export function load() {
	const at = new Date('2026-01-01T00:00:00Z');
	return {
		job: {
			id: '00000000-0000-4000-8000-000000000001',
			kind: wordCount.name,
			status: 'running' as const,
			progress: 42,
			stage: 'count',
			error: null,
			errorCode: null,
			resultId: null,
			attempts: 1,
			createdAt: at,
			updatedAt: at,
			startedAt: at,
			finishedAt: null,
		},
	};
}
`,
	'src/app.d.ts': `import type { SupabaseClient } from '@supabase/supabase-js';
declare global {
	namespace App {
		interface Locals {
			supabase: SupabaseClient;
		}
	}
}
export {};
`,
	'src/hooks.server.ts': `import { createServerClient } from '@supabase/ssr';
import type { Handle } from '@sveltejs/kit';
import { env } from '$env/dynamic/public';
import { serverRealtime } from 'supabase-jobs';

export const handle: Handle = async ({ event, resolve }) => {
	event.locals.supabase = createServerClient(env.PUBLIC_SUPABASE_URL!, env.PUBLIC_SUPABASE_PUBLISHABLE_KEY!, {
		cookies: {
			getAll: () => event.cookies.getAll(),
			setAll: (all) => all.forEach(({ name, value, options }) => event.cookies.set(name, value, { ...options, path: '/' })),
		},
		realtime: serverRealtime,
	});
	return resolve(event);
};
`,
	'src/lib/jobs.ts': `import { createBrowserClient } from '@supabase/ssr';
import { env } from '$env/dynamic/public';
import { JobStore, supabaseAdapter } from 'supabase-jobs';

let store: JobStore | undefined;

/** The browser's JobStore, created on first use: WatchedJob asks for it only in the browser. */
export const browserJobs = () =>
	(store ??= new JobStore(
		supabaseAdapter(createBrowserClient(env.PUBLIC_SUPABASE_URL!, env.PUBLIC_SUPABASE_PUBLISHABLE_KEY!)),
	));
`,
	'src/routes/+page.svelte': `<script lang="ts">
	import { JobProgress, WatchedJob } from 'supabase-jobs/svelte';
	import { browserJobs } from '$lib/jobs';

	let { data } = $props();
	const job = WatchedJob.create(browserJobs, () => data.job.id, () => data.job);
</script>

<h1>{data.job.kind}</h1>
<JobProgress {job} label="Counting words" />
`,
};
