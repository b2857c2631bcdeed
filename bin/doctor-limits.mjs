// The doctor's checks of hosted Supabase's limits (docs/guide/en/hosted-limits.md),
// in the style of doctor.mjs: each returns a Check (✓ with what it found, ✗
// with the exact fix). Kept apart from doctor.mjs so each file reads whole.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse as parseToml } from 'smol-toml';

/**
 * @typedef {import('./doctor.mjs').Check} Check
 * @typedef {import('postgres').Sql} Sql
 */

/** The Supabase CLI's config.toml defaults (pkg/config/templates/config.toml); max_rows is hosted's too. */
export const CLI_DEFAULTS = { maxRows: 1000, anonymousSignIns: false };

/** What supabaseAdapter sends per call when not told otherwise (src/lib/adapters/supabase.ts HOSTED_MAX_ROWS). */
export const ADAPTER_MAX_ROWS = 1000;

/** @param {string} label @param {string} detail @returns {Check} */
const ok = (label, detail) => ({ label, outcome: 'ok', detail });
/** @param {string} label @param {string} detail @param {string} fix @returns {Check} */
const fail = (label, detail, fix) => ({ label, outcome: 'fail', detail, fix });

/**
 * The project's supabase/config.toml, parsed; null when absent or not TOML
 * (then the CLI's defaults hold).
 * @param {string} cwd
 * @returns {Record<string, any> | null}
 */
function projectConfig(cwd) {
	const path = join(cwd, 'supabase/config.toml');
	if (!existsSync(path)) return null;
	try {
		return parseToml(readFileSync(path, 'utf8'));
	} catch {
		return null;
	}
}

const SOURCE_EXTENSIONS = /\.(ts|js|mjs|svelte)$/;
const SKIPPED_DIRS = new Set(['node_modules', '.svelte-kit', 'dist', 'build', '.git', 'supabase']);

/**
 * The app's own source files (src/ of the project), at most `limit` of them.
 * @param {string} cwd
 * @param {number} [limit]
 */
function sourceFiles(cwd, limit = 5000) {
	/** @type {string[]} */
	const out = [];
	/** @param {string} dir */
	const walk = (dir) => {
		if (out.length >= limit || !existsSync(dir)) return;
		for (const name of readdirSync(dir)) {
			if (SKIPPED_DIRS.has(name)) continue;
			const path = join(dir, name);
			if (statSync(path).isDirectory()) walk(path);
			else if (SOURCE_EXTENSIONS.test(name) && out.length < limit) out.push(path);
		}
	};
	walk(join(cwd, 'src'));
	return out;
}

/**
 * The first source file of the app whose text matches `pattern`, with the match.
 * @param {string} cwd
 * @param {RegExp} pattern
 */
function findInSource(cwd, pattern) {
	for (const file of sourceFiles(cwd)) {
		const m = pattern.exec(readFileSync(file, 'utf8'));
		if (m) return { file: relative(cwd, file), match: m };
	}
	return null;
}

/**
 * Anonymous sign-ins are on (`[auth] enable_anonymous_sign_ins`) when the app
 * calls signInAnonymously(): Supabase refuses it otherwise (422
 * anonymous_provider_disabled), and the CLI's default is off.
 * @param {{ cwd: string }} facts
 * @returns {Check}
 */
export function checkAnonymousSignIns({ cwd }) {
	const label = 'anonymous sign-ins';
	const used = findInSource(cwd, /\bsignInAnonymously\s*\(/);
	const enabled = projectConfig(cwd)?.auth?.enable_anonymous_sign_ins ?? CLI_DEFAULTS.anonymousSignIns;
	if (!used) return ok(label, `${enabled ? 'enabled' : 'off'}; the app does not call signInAnonymously() (src/)`);
	if (enabled === true)
		return ok(label, `enabled in supabase/config.toml; the app calls signInAnonymously() (${used.file})`);
	return fail(
		label,
		`the app calls signInAnonymously() (${used.file}) but supabase/config.toml does not enable it: Supabase answers 422 anonymous_provider_disabled`,
		'enable_anonymous_sign_ins = true under [auth] in supabase/config.toml; on the hosted project: dashboard -> ' +
			'Authentication -> Sign In / Providers -> Allow anonymous sign-ins',
	);
}

/** @param {Date} d */
const day = (d) => d.toISOString().slice(0, 10);

/**
 * Where realtime.messages is partitioned (as on Supabase: one partition a day,
 * made by Realtime when a tenant connects and by its janitor), a partition
 * holds today's rows: without one every Broadcast from Database insert fails
 * (23514) and private channels refuse to join.
 * @param {Sql} sql
 * @param {Date} [now]
 * @returns {Promise<Check>}
 */
export async function checkMessagePartitions(sql, now = new Date()) {
	const label = 'realtime.messages partitions';
	const [table] = await sql`
		select c.relkind from pg_class c where c.oid = to_regclass('realtime.messages')`;
	if (!table) return ok(label, 'no realtime.messages (nothing to check)');
	if (table.relkind !== 'p') return ok(label, 'not partitioned: every row has a place');
	const parts = await sql`
		select c.relname, pg_get_expr(c.relpartbound, c.oid) as bound
		  from pg_inherits i join pg_class c on c.oid = i.inhrelid
		 where i.inhparent = 'realtime.messages'::regclass`;
	const covers = (/** @type {string} */ bound, /** @type {Date} */ at) => {
		if (/^DEFAULT$/i.test(bound)) return true;
		const m = /FROM \('([^']+)'\) TO \('([^']+)'\)/.exec(bound);
		if (!m) return false;
		const utc = (/** @type {string} */ s) =>
			Date.parse(`${s.replace(' ', 'T')}${/[zZ+]|-\d\d$/.test(s.slice(10)) ? '' : 'Z'}`);
		return utc(m[1]) <= at.getTime() && at.getTime() < utc(m[2]);
	};
	const today = parts.find((p) => covers(p.bound, now));
	if (today) {
		const ahead = [1, 2, 3].filter((n) => parts.some((p) => covers(p.bound, new Date(now.getTime() + n * 86_400_000))));
		return ok(label, `today's is ${today.relname} (${ahead.length} of the next 3 days made too)`);
	}
	const from = day(now);
	const to = day(new Date(now.getTime() + 86_400_000));
	return fail(
		label,
		`no partition holds today's rows (${from}, UTC): Broadcast from Database inserts fail and private channels cannot be joined`,
		`connect a Realtime client to the project (Realtime makes yesterday to today+3 when it connects), or: ` +
			`create table realtime.messages_${from.replaceAll('-', '_')} partition of realtime.messages for values from ('${from}') to ('${to}');   (SQL editor)`,
	);
}

/**
 * The project's max_rows (PostgREST's cap on every reply: the authenticator's
 * pgrst.db_max_rows where set in the database, else supabase/config.toml
 * [api] max_rows, else 1000) against the batch size the app's supabaseAdapter
 * sends (its maxRows option, 1000 unless given): a smaller max_rows cuts a
 * batch's reply after its writes committed.
 * @param {Sql} sql
 * @param {{ cwd: string }} facts
 * @returns {Promise<Check>}
 */
export async function checkMaxRows(sql, { cwd }) {
	const label = 'max_rows';
	const [inDb] = await sql`
		select substr(c, length('pgrst.db_max_rows=') + 1) as value
		  from pg_db_role_setting s, unnest(s.setconfig) c
		 where s.setrole = to_regrole('authenticator') and c like 'pgrst.db\\_max\\_rows=%'
		 order by s.setdatabase desc limit 1`;
	const fromConfig = projectConfig(cwd)?.api?.max_rows;
	const [maxRows, source] = inDb
		? [Number(inDb.value), "the authenticator's pgrst.db_max_rows"]
		: fromConfig !== undefined
			? [Number(fromConfig), 'supabase/config.toml [api] max_rows']
			: [CLI_DEFAULTS.maxRows, 'the default (hosted and CLI)'];
	const given = findInSource(cwd, /supabaseAdapter\s*\([^)]*\bmaxRows\s*:\s*([\d_]+)/);
	const batch = given ? Number(given.match[1].replaceAll('_', '')) : ADAPTER_MAX_ROWS;
	const where = given ? `supabaseAdapter maxRows ${batch} (${given.file})` : `supabaseAdapter's default ${batch}`;
	if (Number.isInteger(maxRows) && maxRows >= batch)
		return ok(label, `${maxRows} (${source}); batches go ${batch} rows a call (${where})`);
	return fail(
		label,
		`${maxRows} (${source}) is below the ${batch} rows a call of the app's batches (${where}): their replies would be cut after the jobs were written`,
		`supabaseAdapter(supabase, { maxRows: ${maxRows} }) in the app, or raise max_rows to ${batch}: [api] max_rows in supabase/config.toml and dashboard -> Project Settings -> Data API -> Max rows`,
	);
}
