// `npx supabase-jobs init`: copies what a Supabase project needs to run
// supabase-jobs into its supabase/ folder. Refuses to overwrite anything:
// every target is checked before the first write, and nothing is written
// when one of them already exists.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's own root (this file is <root>/bin/init.mjs). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Prefix of every migration init writes, so a second run can recognise them. */
const MIGRATION_PREFIX = 'supabase_jobs_';

/** First line of a migration that belongs to the demo app, not the package. */
const DEMO_MARKER = /^--\s*DEMO ONLY/;

/** The worker function files copied from the package (handlers.ts is written from a template instead). */
const FUNCTION_FILES = ['index.ts', 'serve.ts'];

/**
 * @typedef {{ version: string; name: string; file: string; text: string }} PackageMigration
 * @typedef {{ path: string; text: string }} PlannedFile
 */

/**
 * The package's migrations, in order, without the demo's.
 * @param {string} root
 * @returns {Promise<PackageMigration[]>}
 */
export async function packageMigrations(root = PACKAGE_ROOT) {
	const dir = join(root, 'supabase/migrations');
	const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
	/** @type {PackageMigration[]} */
	const out = [];
	for (const file of files) {
		const match = /^(\d{14})_(.+)\.sql$/.exec(file);
		if (!match) continue;
		const text = await readFile(join(dir, file), 'utf8');
		if (DEMO_MARKER.test(text)) continue;
		out.push({ version: match[1], name: match[2], file, text });
	}
	return out;
}

/**
 * A 14-digit UTC timestamp (what the Supabase CLI names migrations with).
 * @param {Date} date
 */
export function migrationTimestamp(date) {
	return date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/**
 * Rewrites the worker function's imports of the package's sources to the
 * published package, so the function deploys from the user's project.
 * @param {string} text
 * @param {string} specifier e.g. 'npm:supabase-jobs@^0.1.0'
 */
export function rewriteImports(text, specifier) {
	return text.replace(/(from\s+|import\s*\(\s*)(['"])(?:\.\.\/)+src\/lib\/[^'"]+\2/g, `$1'${specifier}'`);
}

/** @param {string} specifier */
function handlersTemplate(specifier) {
	return `/**
 * Your kinds of work: one defineJobHandler per kind, all in \`handlers\`.
 * Declare each kind once with defineJobKind in a module your app shares (so
 * enqueue is typed by it too), write its handler here, and append it to
 * \`handlers\`. The worker claims only the kinds listed here.
 */
import { z } from 'npm:zod@^4';
import { defineJobHandler, defineJobKind, JobUserError, PhasePlan, type JobHandler } from '${specifier}';

/** Example: replace with your own kind (and move it where your app can import it too). */
export const extract = defineJobKind({
	name: 'extract',
	params: z.object({ filename: z.string().min(1) }),
	// Median seconds per phase, measured on real inputs (PhasePlan.fromHistory can fit it later).
	plan: PhasePlan.fromSeconds({ read: 1, summarise: 5 }, { perKilochar: { summarise: 0.2 } }),
});

export const extractHandler = defineJobHandler(
	extract,
	async ({ params, payload, tracker }) => {
		if (!payload?.length) {
			throw new JobUserError({ en: 'The file is empty.', 'pt-BR': 'O arquivo está vazio.' }, { errorCode: 'empty_file' });
		}
		const text = await tracker.run('read', () => new TextDecoder().decode(payload));
		const summary = await tracker.run('summarise', async (signal) => {
			// Your long work here: hand \`signal\` to every fetch so a cancel stops it.
			await fetch('https://example.com', { signal });
			return text.slice(0, 200);
		});
		console.log(\`\${params.filename}: \${summary.length} characters\`);
		// Return the id of the row you produced: it becomes result_id, and the page links to it.
		return null;
	},
	{ size: ({ job }) => job.payload?.byteLength ?? null },
);

/** Every handler this worker registers. */
export const handlers: JobHandler[] = [extractHandler];
`;
}

const FUNCTION_CONFIG = `
# supabase-jobs worker (added by \`npx supabase-jobs init\`). pg_net (the insert
# trigger) and pg_cron (the backstop) call it with its own Bearer secret
# (JOBS_WORKER_SECRET), so JWT verification is off.
[functions.jobs-worker]
enabled = true
verify_jwt = false
entrypoint = "./functions/jobs-worker/index.ts"
`;

/**
 * Plans everything init writes, without writing. Throws with the list of
 * conflicts when something already exists.
 * @param {{ cwd: string; packageRoot?: string; now?: Date }} options
 */
export async function planInit({ cwd, packageRoot = PACKAGE_ROOT, now = new Date() }) {
	const supabaseDir = join(cwd, 'supabase');
	const configPath = join(supabaseDir, 'config.toml');
	if (!existsSync(configPath)) {
		throw new InitError(
			`No supabase/config.toml in ${cwd}: run \`supabase init\` first (or pass --cwd <project dir>).`,
		);
	}
	const pkg = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8'));
	const specifier = `npm:${pkg.name}@^${pkg.version}`;
	const migrationsDir = join(supabaseDir, 'migrations');
	const existing = existsSync(migrationsDir)
		? (await readdir(migrationsDir)).filter((f) => /^\d{14}_.+\.sql$/.test(f)).sort()
		: [];
	const migrations = await packageMigrations(packageRoot);
	/** @type {string[]} */
	const conflicts = [];
	for (const m of migrations) {
		const already = existing.find((f) => f.slice(15) === `${MIGRATION_PREFIX}${m.name}.sql`);
		if (already) conflicts.push(relative(cwd, join(migrationsDir, already)));
	}
	// New migrations must sort after the project's own, one second apart, in the package's order.
	const last = existing.at(-1)?.slice(0, 14);
	let at = now.getTime();
	if (last) {
		const lastTime = Date.UTC(
			+last.slice(0, 4),
			+last.slice(4, 6) - 1,
			+last.slice(6, 8),
			+last.slice(8, 10),
			+last.slice(10, 12),
			+last.slice(12, 14),
		);
		at = Math.max(at, lastTime + 1000);
	}
	/** @type {PlannedFile[]} */
	const files = migrations.map((m, i) => ({
		path: join(migrationsDir, `${migrationTimestamp(new Date(at + i * 1000))}_${MIGRATION_PREFIX}${m.name}.sql`),
		text: `-- Copied from supabase-jobs ${pkg.version} (supabase/migrations/${m.file}) by \`npx supabase-jobs init\`.\n${m.text}`,
	}));
	const functionDir = join(supabaseDir, 'functions/jobs-worker');
	for (const name of FUNCTION_FILES) {
		const source = await readFile(join(packageRoot, 'functions/jobs-worker', name), 'utf8');
		files.push({ path: join(functionDir, name), text: rewriteImports(source, specifier) });
	}
	files.push({ path: join(functionDir, 'handlers.ts'), text: handlersTemplate(specifier) });
	for (const f of files) if (existsSync(f.path)) conflicts.push(relative(cwd, f.path));
	if (conflicts.length) {
		throw new InitError(
			`Nothing was written: these already exist (init never overwrites):\n  ${conflicts.join('\n  ')}`,
		);
	}
	const config = await readFile(configPath, 'utf8');
	const appendConfig = /^\s*\[functions\.jobs-worker\]\s*$/m.test(config) ? null : FUNCTION_CONFIG;
	const projectRef = await readFile(join(supabaseDir, '.temp/project-ref'), 'utf8').then(
		(s) => s.trim() || null,
		() => null,
	);
	return { files, configPath, appendConfig, specifier, projectRef };
}

/** A refusal with a sentence for the person running init (exit code 1, no trace). */
export class InitError extends Error {
	/** @override */
	name = 'InitError';
}

/**
 * Writes what {@link planInit} planned and returns the next steps to print.
 * @param {{ cwd: string; packageRoot?: string; now?: Date; secret?: string }} options
 */
export async function init(options) {
	const plan = await planInit(options);
	for (const f of plan.files) {
		await mkdir(dirname(f.path), { recursive: true });
		// 'wx': fail rather than overwrite, even if a file appeared since the plan.
		await writeFile(f.path, f.text, { flag: 'wx' });
	}
	if (plan.appendConfig) await appendFile(plan.configPath, plan.appendConfig);
	const secret = options.secret ?? randomBytes(32).toString('base64url');
	const ref = plan.projectRef ?? '<project-ref>';
	const written = plan.files.map((f) => relative(options.cwd, f.path));
	const nextSteps = `Next steps:

  1. Apply the migrations:
       supabase db push

  2. Give the worker its secret and deploy it:
       supabase secrets set JOBS_WORKER_SECRET=${secret}
       supabase functions deploy jobs-worker

  3. Tell the database where the worker is (SQL editor in the dashboard, once):
       select vault.create_secret('https://${ref}.supabase.co/functions/v1/jobs-worker', 'supabase_jobs_worker_url');
       select vault.create_secret('${secret}', 'supabase_jobs_worker_secret');

  4. Write your work in supabase/functions/jobs-worker/handlers.ts, then deploy again.
     With pg_cron enabled (Database -> Extensions), also run once:
       select supabase_jobs.install_schedules();
`;
	return { written, configAppended: plan.appendConfig !== null, nextSteps, secret };
}

/**
 * The command: prints what it wrote and the next steps; returns the exit code.
 * @param {{ cwd: string; packageRoot?: string; log?: (line: string) => void }} options
 */
export async function runInit(options) {
	const log = options.log ?? console.log;
	try {
		const result = await init(options);
		log(`supabase-jobs init: wrote\n  ${result.written.join('\n  ')}`);
		log(
			result.configAppended
				? '  supabase/config.toml: added [functions.jobs-worker]'
				: '  supabase/config.toml: [functions.jobs-worker] already present, left as is',
		);
		log('');
		log(result.nextSteps);
		return 0;
	} catch (e) {
		if (e instanceof InitError) {
			log(`supabase-jobs init: ${e.message}`);
			return 1;
		}
		throw e;
	}
}
