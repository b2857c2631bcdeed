// What `supabase-jobs init` writes besides copies of the package's own files:
// the kinds module, the handlers to fill in, the function's deno.json and the
// config.toml entry. Kept apart from the command so each can be read whole.

/**
 * The kinds module: one definition shared by the app (enqueue is typed by it)
 * and by the worker. Bare specifiers only, so Node/Vite resolve them from
 * node_modules and Deno through the function's deno.json import map.
 */
export const KINDS_TEMPLATE = `/**
 * Your kinds of work, declared once. The app imports this file to enqueue
 * (typed by the params schema), the worker (handlers.ts) to run them.
 * Bare imports only: Node and Vite resolve them from node_modules, Deno through
 * ./deno.json's import map. From a SvelteKit app:
 *   import { wordCount } from '../supabase/functions/jobs-worker/kinds.ts';
 */
import { z } from 'zod';
import { defineJobKind } from 'supabase-jobs';
import { PhasePlan } from 'supabase-jobs/worker';

/** Example: replace with your own kinds. */
export const wordCount = defineJobKind({
	name: 'example.word-count',
	params: z.object({ text: z.string().min(1).max(100_000) }),
	// Seconds per phase (plus per 1000 lines of input: the handler's size), measured on real inputs;
	// PhasePlan.fromHistory can fit them from your jobs' recorded timings later.
	plan: PhasePlan.fromSeconds({ count: 0.2, wrapup: 0.05 }, { perKilochar: { count: 250 } }),
});
`;

/** The handlers template: pure work on the job's params, no network call. */
export const HANDLERS_TEMPLATE = `/**
 * Your handlers: one defineJobHandler per kind (kinds.ts), all in \`handlers\`.
 * The worker claims only the kinds listed here, and does the rest: claim,
 * progress ticks, heartbeats, cancellation, closing the row.
 */
import { defineJobHandler, delay, JobUserError, type JobHandler } from 'supabase-jobs/worker';
import { wordCount } from './kinds.ts';

/**
 * Example: counts the words of \`params.text\` a line at a time, reporting a real
 * counter after each line, so the page's bar moves as it goes.
 */
export const wordCountHandler = defineJobHandler(
	wordCount,
	async ({ params, tracker }) => {
		const lines = params.text.split('\\n');
		const words = await tracker.run('count', async (signal) => {
			let total = 0;
			for (let i = 0; i < lines.length; i++) {
				// Stands in for your work on one line (a model call, a page rendered): replace it.
				// A cancelled job aborts the signal: the wait ends and the job stops here.
				await delay(250, signal);
				total += lines[i]!.split(/\\s+/).filter(Boolean).length;
				// A real counter: the next tick writes it with the heartbeat.
				await tracker.report('count', { done: (i + 1) / lines.length });
			}
			return total;
		});
		if (words === 0) {
			// A sentence for the user, in their language; any other exception is retried.
			throw new JobUserError({ en: 'The text has no words.', 'pt-BR': 'O texto não tem palavras.' });
		}
		await tracker.run('wrapup', () => Promise.resolve());
		// Return the id of the row you produced (it becomes result_id), or null.
		return null;
	},
	// The input's size in the plan's unit: lines.
	{ size: ({ params }) => ({ count: params.text.split('\\n').length }) },
);

/** Every handler this worker registers. */
export const handlers: JobHandler[] = [wordCountHandler];
`;

/**
 * The function's deno.json: an import map pinning the exact package version
 * (the one whose migrations init wrote) and the driver and zod at the versions
 * the project installed (see npm-pins.mjs), and node_modules as Deno's source
 * for npm packages, so what runs is what the project installed.
 * @param {{ version: string }} pkg the package's package.json
 * @param {Record<string, string>} npmImports each other npm import's specifier (`postgres` → `npm:postgres@^4.2.0`)
 */
export function denoJson(pkg, npmImports) {
	const imports = {
		'supabase-jobs': `npm:supabase-jobs@${pkg.version}`,
		// The entries by audience (supabase-jobs/worker, /node...): a prefix mapping, npm:/ form.
		'supabase-jobs/': `npm:/supabase-jobs@${pkg.version}/`,
		...npmImports,
	};
	return `${JSON.stringify({ nodeModulesDir: 'manual', imports }, null, '\t')}\n`;
}

/** Appended to config.toml when the project has no [functions.jobs-worker] yet. */
export const FUNCTION_CONFIG = `
# supabase-jobs worker (added by \`npx supabase-jobs init\`). pg_net (the insert
# trigger) and pg_cron (the backstop) call it with its own Bearer secret
# (JOBS_WORKER_SECRET), so JWT verification is off.
[functions.jobs-worker]
enabled = true
verify_jwt = false
entrypoint = "./functions/jobs-worker/index.ts"
import_map = "./functions/jobs-worker/deno.json"
`;

/**
 * The migration that registers the app's kinds: one register_job_kind per kind
 * the kinds module declares (read from its text, see kinds-file.mjs), so the
 * migration and kinds.ts start in step; `doctor` reports any later drift.
 * @param {{ version: string; kinds: string[] }} facts
 */
export function kindsMigration({ version, kinds }) {
	const lines = kinds.map((k) => `select supabase_jobs.register_job_kind('${k.replaceAll("'", "''")}');`);
	return `-- Your app's kinds (written by \`npx supabase-jobs init\`, supabase-jobs ${version}): signed-in
-- users may enqueue only the kinds registered here, one line per kind declared in
-- supabase/functions/jobs-worker/kinds.ts. When you add a kind there, register it in a new
-- migration of your own (\`supabase migration new register_job_kinds\`) and push it;
-- \`npx supabase-jobs doctor\` names any kind of kinds.ts the database lacks.
${lines.join('\n')}
`;
}

/**
 * The migration that enables what wakes the worker and installs the schedules.
 * A hosted project lets a migration create both extensions (Supabase's
 * documented schemas: pg_net in extensions, pg_cron in pg_catalog). Where the
 * database already has the functions the package calls (net.http_post,
 * cron.schedule), nothing is created: the extension is enabled already, or a
 * local stand-in provides them. The schedules are the package's own
 * (supabase_jobs.install_schedules), at the package's cadence.
 * @param {{ version: string }} facts
 */
export function extensionsMigration({ version }) {
	return `-- Written by \`npx supabase-jobs init\` (supabase-jobs ${version}): what wakes the worker.
-- pg_net sends the wake-up of each enqueue (after commit); pg_cron runs the
-- backstop, the reclaimer and the cleanup. Where net.http_post / cron.schedule
-- already exist (the extension is enabled), nothing is created.
do $$
begin
  if pg_catalog.to_regprocedure('net.http_post(text, jsonb, jsonb, jsonb, integer)') is null then
    create schema if not exists extensions;
    create extension if not exists pg_net with schema extensions;
  end if;
  if pg_catalog.to_regprocedure('cron.schedule(text, text, text)') is null then
    create extension if not exists pg_cron with schema pg_catalog;
  end if;
end
$$;

-- The package's schedules, created or replaced at the installed version's cadence.
select supabase_jobs.install_schedules();
`;
}
