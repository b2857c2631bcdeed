// `npx supabase-jobs init` / `npx supabase-jobs upgrade`: brings a Supabase
// project's supabase/ folder to what this version of the package needs. The
// same plan serves both: a fresh project gets everything (the package's
// migrations, one enabling pg_net and pg_cron with the schedules, one
// registering the template's kinds, the worker function, the config entry); an
// initialised one gets only the migrations it lacks (fresh timestamps, after
// its latest; applied migrations are never touched) and the function's pin
// moved to this version. A file that exists is never replaced: the two edits of
// existing files are the [functions.jobs-worker] entry appended to config.toml
// when absent and the supabase-jobs pin's value in the function's deno.json.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import { kindNamesIn } from './kinds-file.mjs';
import { functionNpmIssues, issueLine } from './npm-pins.mjs';
import {
	denoJson,
	extensionsMigration,
	FUNCTION_CONFIG,
	HANDLERS_TEMPLATE,
	KINDS_TEMPLATE,
	kindsMigration,
} from './templates.mjs';

/** The package's own root (this file is <root>/bin/init.mjs). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Infix of every migration init writes (`<timestamp>_supabase_jobs_<name>.sql`): how a later run recognises them. */
export const MIGRATION_INFIX = 'supabase_jobs_';

/**
 * The names (after the timestamp) of the migrations init writes rather than
 * copies: pg_net + pg_cron + the schedules (once per project, like a package
 * migration), and the app's own kinds (with a fresh kinds.ts only).
 */
export const GENERATED_MIGRATIONS = {
	extensions: `${MIGRATION_INFIX}extensions_and_schedules`,
	kinds: 'register_job_kinds',
};

/** The two Vault secrets the database's wake-ups read (names only: the values are the user's). */
export const VAULT_SECRETS = { url: 'supabase_jobs_worker_url', secret: 'supabase_jobs_worker_secret' };

/** Where init writes the worker function, and the app reads its kinds from. */
export const FUNCTION_DIR = 'supabase/functions/jobs-worker';

/** The worker function files copied from the package (the rest are written from templates). */
const FUNCTION_FILES = ['index.ts', 'serve.ts'];

/**
 * @typedef {{ version: string; name: string; file: string; text: string }} PackageMigration
 * @typedef {{ path: string; text: string }} PlannedFile
 */

/**
 * The package's migrations, in order (the demo app's own SQL lives in src/demo/sql, not here).
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
		out.push({ version: match[1], name: match[2], file, text: await readFile(join(dir, file), 'utf8') });
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

/** @param {string} stamp 14 digits */
function timestampMs(stamp) {
	return Date.UTC(
		+stamp.slice(0, 4),
		+stamp.slice(4, 6) - 1,
		+stamp.slice(6, 8),
		+stamp.slice(8, 10),
		+stamp.slice(10, 12),
		+stamp.slice(12, 14),
	);
}

/**
 * @typedef {{ specifier: string; modules: Map<string, Set<string>> }} PackageEntry
 *   an entry of package.json `exports` as a bare specifier (`supabase-jobs/worker`),
 *   and the names it re-exports from each module (a path under src/lib without
 *   its extension; `*` for `export * from`)
 */

/**
 * The package's entries, read from package.json `exports` (the one list of
 * them): each entry's module is its source under src/lib when the package has
 * its sources (`./dist/worker.js` comes from `src/lib/worker.ts`), else its
 * published declarations (the `types` file), and what it re-exports is read
 * from that module's `export ... from './...'` statements.
 * @param {string} packageRoot
 * @returns {PackageEntry[]}
 */
export function packageEntries(packageRoot) {
	const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
	/** @type {PackageEntry[]} */
	const entries = [];
	for (const [key, target] of Object.entries(pkg.exports ?? {})) {
		const built = typeof target === 'string' ? target : target?.default;
		if (typeof built !== 'string' || !/^\.\/dist\/.+\.js$/.test(built)) continue; // ./package.json
		const path = built.slice('./dist/'.length);
		const source = join(packageRoot, 'src/lib', path.replace(/\.js$/, '.ts'));
		const declared = typeof target === 'string' ? null : target?.types;
		const file = existsSync(source) ? source : declared ? join(packageRoot, declared) : null;
		if (!file || !existsSync(file)) throw new InitError(`The package has no module for its entry "${key}".`);
		/** @type {Map<string, Set<string>>} */
		const modules = new Map();
		const reexport = /\bexport\s+(?:type\s+)?(\*|\{[^}]*\})\s*from\s*['"](\.{1,2}\/[^'"]+)['"]/g;
		for (const m of readFileSync(file, 'utf8').matchAll(reexport)) {
			const from = posix.join(posix.dirname(path), /** @type {string} */ (m[2])).replace(/\.(?:d\.)?[jt]s$/, '');
			const names = modules.get(from) ?? new Set();
			for (const part of m[1] === '*' ? ['*'] : /** @type {string} */ (m[1]).slice(1, -1).split(',')) {
				const name = part
					.trim()
					.replace(/^type\s+/, '')
					.split(/\s+as\s+/)[0];
				if (name) names.add(name);
			}
			modules.set(from, names);
		}
		entries.push({ specifier: key === '.' ? pkg.name : `${pkg.name}${key.slice(1)}`, modules });
	}
	return entries;
}

/**
 * The entry that exports every name imported from a module of src/lib (the
 * first in package.json's order when several do).
 * @param {PackageEntry[]} entries
 * @param {string} path a path under src/lib
 * @param {string[]} names what the import takes from it (none for a dynamic import)
 */
function entryOf(entries, path, names) {
	const module = path.replace(/\.[jt]s$/, '');
	const entry = entries.find((e) => {
		const exported = e.modules.get(module);
		return exported !== undefined && names.every((n) => exported.has(n) || exported.has('*'));
	});
	if (!entry) {
		const what = names.length ? `{ ${names.join(', ')} } from ` : '';
		throw new InitError(
			`No entry of the package exports ${what}src/lib/${path}: the worker function cannot import it.`,
		);
	}
	return entry.specifier;
}

/**
 * Rewrites the worker function's imports to bare specifiers, which the
 * function's deno.json maps: an import of the package's sources becomes the
 * entry of package.json `exports` that exports what it imports
 * ({@link packageEntries}), `npm:<name>@<range>` becomes `<name>`.
 * @param {string} text
 * @param {PackageEntry[]} [entries] the package's entries (this package's by default)
 */
export function rewriteImports(text, entries = packageEntries(PACKAGE_ROOT)) {
	const names = (/** @type {string | undefined} */ clause) =>
		(clause?.match(/\{([^}]*)\}/)?.[1] ?? '')
			.split(',')
			.map(
				(part) =>
					part
						.trim()
						.replace(/^type\s+/, '')
						.split(/\s+as\s+/)[0],
			)
			.filter((name) => name !== undefined && name !== '');
	return text
		.replace(/(from\s+|import\s*\(\s*)(['"])(?:\.\.\/)+src\/lib\/([^'"]+)\2/g, (_, head, _quote, path, offset) => {
			// The clause this specifier closes: from the statement's `import` (or `export`) to here.
			const start = [...text.slice(0, offset).matchAll(/(?:^|\n)[ \t]*(?:import|export)\b/g)].at(-1)?.index ?? 0;
			const clause = head.startsWith('from') ? text.slice(start, offset) : undefined;
			return `${head}'${entryOf(entries, path, names(clause))}'`;
		})
		.replace(/(from\s+|import\s*\(\s*)(['"])npm:((?:@[^/'"]+\/)?[^@'"]+)@[^'"]*\2/g, "$1'$3'");
}

/**
 * Whether config.toml already declares the worker function. Parsed, not
 * matched: `[functions.jobs-worker] # comment`, `[functions."jobs-worker"]` and
 * dotted keys all count.
 * @param {string} text
 * @param {string} path for the message
 */
export function hasWorkerFunction(text, path) {
	let config;
	try {
		config = parseToml(text);
	} catch (e) {
		throw new InitError(`${path} is not valid TOML, so init leaves it alone: ${/** @type {Error} */ (e).message}`);
	}
	const functions = /** @type {Record<string, unknown> | undefined} */ (config['functions']);
	return functions !== undefined && typeof functions === 'object' && 'jobs-worker' in functions;
}

/** A refusal with a sentence for the person running init (exit code 1, no trace). */
export class InitError extends Error {
	/** @override */
	name = 'InitError';
}

/**
 * The function's files as init would write them: the worker's files copied
 * from the package with their imports rewritten (only those not there yet are
 * read), then the kinds and handlers templates.
 * @param {string} functionDir
 * @param {string} kindsPath
 * @param {string} packageRoot
 * @returns {Promise<PlannedFile[]>}
 */
async function planFunctionFiles(functionDir, kindsPath, packageRoot) {
	/** @type {PlannedFile[]} */
	const functionFiles = [];
	// Only a file init will write is read and rewritten (an installed function keeps its own).
	const copied = FUNCTION_FILES.map((name) => ({ name, path: join(functionDir, name) }));
	const entries = copied.some((f) => !existsSync(f.path)) ? packageEntries(packageRoot) : [];
	for (const { name, path } of copied) {
		const text = existsSync(path)
			? ''
			: rewriteImports(await readFile(join(packageRoot, 'functions/jobs-worker', name), 'utf8'), entries);
		functionFiles.push({ path, text });
	}
	functionFiles.push({ path: kindsPath, text: KINDS_TEMPLATE });
	functionFiles.push({ path: join(functionDir, 'handlers.ts'), text: HANDLERS_TEMPLATE });
	return functionFiles;
}

/**
 * The deno.json to write: a fresh one for a new function; for an installed
 * one, only its pin moved to this version (null when already there), and
 * what to add by hand when it has no pin to move. With it, what to tell the
 * user of the driver and zod in node_modules (see npm-pins.mjs).
 * @param {string} functionDir
 * @param {boolean} freshFunction
 * @param {{ version: string; dependencies: Record<string, string> }} pkg
 * @returns {Promise<{ denoConfig: PlannedFile | null; pinToAdd: string | null; npmWarnings: string[] }>}
 */
async function planDenoConfig(functionDir, freshFunction, pkg) {
	const denoJsonPath = join(functionDir, 'deno.json');
	const { pins, issues } = functionNpmIssues(pkg.dependencies, functionDir);
	const npmWarnings = issues.map(issueLine);
	// An installed function keeps its files; only its pin follows the package (its
	// migrations came with it): that one value of deno.json changes, in place,
	// the rest of the file byte for byte as the user left it.
	/** @type {PlannedFile | null} */
	let denoConfig = null;
	/** Set when the existing deno.json has no pin to move: what to add by hand. */
	let pinToAdd = null;
	const pin = `npm:supabase-jobs@${pkg.version}`;
	if (freshFunction) {
		denoConfig = {
			path: denoJsonPath,
			text: denoJson(pkg, Object.fromEntries(pins.map((p) => [p.name, p.specifier]))),
		};
	} else {
		const text = await readFile(denoJsonPath, 'utf8');
		const entry = /("supabase-jobs"\s*:\s*")(npm:supabase-jobs@[^"]*)(")/;
		const prefixEntry = /("supabase-jobs\/"\s*:\s*")(npm:\/supabase-jobs@[^"]*)(")/;
		const prefixPin = `npm:/supabase-jobs@${pkg.version}/`;
		const found = entry.exec(text);
		const foundPrefix = prefixEntry.exec(text);
		if (!found) pinToAdd = `"supabase-jobs": "${pin}", "supabase-jobs/": "${prefixPin}"`;
		else if (!foundPrefix) pinToAdd = `"supabase-jobs/": "${prefixPin}"`;
		const moved = text.replace(entry, `$1${pin}$3`).replace(prefixEntry, `$1${prefixPin}$3`);
		if (moved !== text) denoConfig = { path: denoJsonPath, text: moved };
	}
	return { denoConfig, pinToAdd, npmWarnings };
}

/**
 * Plans everything init (or upgrade) writes, without writing.
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
	const config = await readFile(configPath, 'utf8');
	const appendConfig = hasWorkerFunction(config, relative(cwd, configPath)) ? null : FUNCTION_CONFIG;
	if (appendConfig && !hasWorkerFunction(config + appendConfig, 'the edited config.toml')) {
		throw new InitError('Could not add [functions.jobs-worker] to supabase/config.toml; add it by hand.');
	}

	const pkg = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8'));
	const migrationsDir = join(supabaseDir, 'migrations');
	const existing = existsSync(migrationsDir)
		? (await readdir(migrationsDir)).filter((f) => /^\d{14}_.+\.sql$/.test(f)).sort()
		: [];
	const have = new Set(existing.map((f) => f.slice(15, -'.sql'.length)));
	const missing = (await packageMigrations(packageRoot)).filter((m) => !have.has(`${MIGRATION_INFIX}${m.name}`));

	const functionDir = join(cwd, FUNCTION_DIR);
	const kindsPath = join(functionDir, 'kinds.ts');
	/** @type {{ name: string; text: string }[]} */
	const toWrite = missing.map((m) => ({
		name: `${MIGRATION_INFIX}${m.name}`,
		text: `-- Copied from supabase-jobs ${pkg.version} (supabase/migrations/${m.file}) by \`npx supabase-jobs\`.\n${m.text}`,
	}));
	if (!have.has(GENERATED_MIGRATIONS.extensions)) {
		toWrite.push({ name: GENERATED_MIGRATIONS.extensions, text: extensionsMigration({ version: pkg.version }) });
	}
	// The kinds migration goes with the kinds module it registers: written with a fresh kinds.ts only.
	if (!existsSync(kindsPath)) {
		const kinds = kindNamesIn(KINDS_TEMPLATE).names;
		toWrite.push({ name: GENERATED_MIGRATIONS.kinds, text: kindsMigration({ version: pkg.version, kinds }) });
	}
	// New migrations sort after every one the project has, one second apart, in the package's order.
	const last = existing.at(-1);
	const at = Math.max(now.getTime() - (now.getTime() % 1000), last ? timestampMs(last.slice(0, 14)) + 1000 : 0);
	/** @type {PlannedFile[]} */
	const migrations = toWrite.map((m, i) => ({
		path: join(migrationsDir, `${migrationTimestamp(new Date(at + i * 1000))}_${m.name}.sql`),
		text: m.text,
	}));

	const functionFiles = await planFunctionFiles(functionDir, kindsPath, packageRoot);
	const denoJsonPath = join(functionDir, 'deno.json');
	const freshFunction = !existsSync(denoJsonPath);
	const newFunctionFiles = functionFiles.filter((f) => !existsSync(f.path));
	const keptFunctionFiles = functionFiles.filter((f) => existsSync(f.path));

	const { denoConfig, pinToAdd, npmWarnings } = await planDenoConfig(functionDir, freshFunction, pkg);
	const projectRef = await readFile(join(supabaseDir, '.temp/project-ref'), 'utf8').then(
		(s) => s.trim() || null,
		() => null,
	);
	return {
		version: pkg.version,
		migrations,
		functionFiles: newFunctionFiles,
		keptFunctionFiles,
		denoConfig,
		pinToAdd,
		npmWarnings,
		freshFunction,
		configPath,
		appendConfig,
		projectRef,
	};
}

/**
 * Writes what {@link planInit} planned and returns what it did and the next steps.
 * @param {{ cwd: string; packageRoot?: string; now?: Date; secret?: string }} options
 */
export async function init(options) {
	const plan = await planInit(options);
	const fresh = [...plan.migrations, ...plan.functionFiles];
	if (plan.freshFunction && plan.denoConfig) fresh.push(plan.denoConfig);
	for (const f of fresh) {
		await mkdir(dirname(f.path), { recursive: true });
		// 'wx': fail rather than overwrite, even if a file appeared since the plan.
		await writeFile(f.path, f.text, { flag: 'wx' });
	}
	// The one edit of an existing file (besides config.toml's appended entry): the pin's value.
	if (!plan.freshFunction && plan.denoConfig) await writeFile(plan.denoConfig.path, plan.denoConfig.text);
	if (plan.appendConfig) {
		// Re-read and re-check: append only to what was validated.
		const current = await readFile(plan.configPath, 'utf8');
		if (!hasWorkerFunction(current, 'supabase/config.toml'))
			await writeFile(plan.configPath, current + plan.appendConfig);
	}
	const rel = (/** @type {string} */ p) => relative(options.cwd, p);
	// A secret only for a function installed now; an existing one already has its own.
	const secret = plan.freshFunction ? (options.secret ?? randomBytes(32).toString('base64url')) : null;
	return {
		version: plan.version,
		addedMigrations: plan.migrations.map((f) => rel(f.path)),
		writtenFunctionFiles: [
			...plan.functionFiles.map((f) => rel(f.path)),
			...(plan.freshFunction && plan.denoConfig ? [rel(plan.denoConfig.path)] : []),
		],
		keptFunctionFiles: plan.keptFunctionFiles.map((f) => rel(f.path)),
		pinMoved: !plan.freshFunction && plan.denoConfig !== null,
		pinToAdd: plan.pinToAdd,
		npmWarnings: plan.npmWarnings,
		configAppended: plan.appendConfig !== null,
		secret,
		nextSteps: nextSteps({
			secret,
			ref: plan.projectRef,
			migrations: plan.migrations.length,
			redeploy: plan.denoConfig !== null || plan.pinToAdd !== null,
		}),
	};
}

/**
 * The steps left to the user, numbered in the order they act.
 * @param {{ secret: string | null; ref: string | null; migrations: number; redeploy: boolean }} facts
 */
export function nextSteps({ secret, ref, migrations, redeploy }) {
	/** @type {string[]} */
	const steps = [];
	const doctor = `Check everything (the connection string is under Connect in the dashboard):
       npx supabase-jobs doctor --db-url '<connection string>'`;
	if (secret === null) {
		if (migrations) steps.push('Apply the new migrations:\n       supabase db push');
		if (redeploy)
			steps.push(
				'Deploy the worker again (its pin moved to this version):\n       supabase functions deploy jobs-worker',
			);
		if (!steps.length) return 'Nothing to do: the project already has everything this version needs.\n';
		steps.push(doctor);
		return `Next steps, in this order:\n\n${numbered(steps)}`;
	}
	if (ref === null)
		steps.push(
			'Link the project (the CLI pushes to the linked one):\n       supabase link --project-ref <project-ref>',
		);
	steps.push(
		"Apply the migrations (the package's, pg_net and pg_cron with the schedules, your kinds):\n       supabase db push",
		`Give the worker its secret (paste it after the =) and deploy it:
       supabase secrets set JOBS_WORKER_SECRET=<the secret above>
       supabase functions deploy jobs-worker`,
		`Tell the database where the worker is and its secret (SQL editor in the dashboard, once):
       select vault.create_secret('https://${ref ?? '<project-ref>'}.supabase.co/functions/v1/jobs-worker', '${VAULT_SECRETS.url}');
       select vault.create_secret('<the secret above>', '${VAULT_SECRETS.secret}');`,
		doctor,
	);
	// Shown once, here; every step refers to it instead of repeating it.
	return `The worker's secret, generated now and stored nowhere (copy it now; it is shown only this once,
so keep this output out of shared logs):

    ${secret}

Next steps, in this order:

${numbered(steps)}
Your kinds are declared in ${FUNCTION_DIR}/kinds.ts (your app imports it to enqueue) and
worked in handlers.ts. Signed-in users may enqueue only registered kinds: after adding one, register
it in a migration of your own, push it and deploy again:
       supabase migration new register_job_kinds
       (in it: select supabase_jobs.register_job_kind('<kind>');)
       supabase db push && supabase functions deploy jobs-worker
`;
}

/** @param {string[]} steps */
function numbered(steps) {
	return steps.map((s, i) => `  ${i + 1}. ${s}\n`).join('\n');
}

/**
 * The command: prints what it did and the next steps; returns the exit code.
 * @param {{ cwd: string; packageRoot?: string; command?: string; log?: (line: string) => void }} options
 */
export async function runInit(options) {
	const log = options.log ?? console.log;
	const name = `supabase-jobs ${options.command ?? 'init'}`;
	try {
		const r = await init(options);
		const lines = [`${name} (supabase-jobs ${r.version}):`];
		if (r.addedMigrations.length) lines.push(`  added migrations:\n    ${r.addedMigrations.join('\n    ')}`);
		else lines.push('  migrations: the project has every one of this version, none added');
		if (r.writtenFunctionFiles.length) lines.push(`  wrote:\n    ${r.writtenFunctionFiles.join('\n    ')}`);
		if (r.keptFunctionFiles.length) lines.push(`  kept as they are:\n    ${r.keptFunctionFiles.join('\n    ')}`);
		if (r.pinMoved)
			lines.push(`  ${FUNCTION_DIR}/deno.json: the supabase-jobs pin moved to ${r.version} (nothing else changed)`);
		if (r.pinToAdd)
			lines.push(
				`  ${FUNCTION_DIR}/deno.json: no supabase-jobs pin found to move; add to its "imports": ${r.pinToAdd}`,
			);
		lines.push(
			r.configAppended
				? '  supabase/config.toml: added [functions.jobs-worker]'
				: '  supabase/config.toml: [functions.jobs-worker] already present, left as is',
		);
		for (const warning of r.npmWarnings) lines.push(`  ! ${warning}`);
		log(lines.join('\n'));
		log('');
		log(r.nextSteps);
		return 0;
	} catch (e) {
		if (e instanceof InitError) {
			log(`${name}: ${e.message}`);
			return 1;
		}
		throw e;
	}
}
