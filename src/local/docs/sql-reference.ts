/**
 * The SQL API reference (docs/sql-api.md) read from the catalog, never typed
 * by hand: every function of the Data API's schema (`public`) that the
 * package installs, and the operator functions of `supabase_jobs`, each with
 * its real signature (arguments in order, defaults, result), who may execute
 * it, and the comment its migration wrote; then every SECURITY DEFINER
 * function with the reason its comment gives (DEFINER_MARK). The generated part sits between
 * two markers in the page; the prose around it is the page's own.
 * `npm run gen:docs` rewrites it; test/docs/sql-reference.test.ts fails when
 * it is stale. Local tooling, never imported by src/lib.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { format, resolveConfig } from 'prettier';
import { projectRoot } from '../postgres/migrate.ts';

/** The page holding the generated reference. */
export const SQL_API_PAGE = join(projectRoot, 'docs/sql-api.md');

/** The command that rewrites it. */
export const GEN_DOCS_COMMAND = 'npm run gen:docs';

export const BEGIN = '<!-- generated: sql functions (npm run gen:docs) -->';
export const END = '<!-- /generated: sql functions -->';

/**
 * The functions of the unexposed `supabase_jobs` schema an operator calls by
 * hand (SQL editor, a migration of their own, pg_cron); the rest of that
 * schema is internal (helpers, triggers) and may change without notice.
 */
export const OPERATOR_FUNCTIONS = [
	'create_job_table',
	'register_job_kind',
	'install_schedules',
	'is_admin',
	'job_limits',
	'cleanup',
	'reclaim_all',
	'backstop',
] as const;

export interface SqlFunction {
	schema: string;
	name: string;
	/** pg_get_function_arguments: names, types and defaults, in order. */
	args: string;
	nargs: number;
	result: string;
	roles: string[];
	comment: string | null;
}

/** Every function of `public` and the operator functions of `supabase_jobs`, from pg_proc. */
export async function readSqlFunctions(sql: postgres.Sql): Promise<SqlFunction[]> {
	const rows = await sql<(Omit<SqlFunction, 'roles'> & { anon: boolean; authenticated: boolean; service: boolean })[]>`
		select n.nspname as schema, p.proname as name, pg_get_function_arguments(p.oid) as args,
		       p.pronargs::int as nargs, pg_get_function_result(p.oid) as result,
		       has_function_privilege('anon', p.oid, 'execute') as anon,
		       has_function_privilege('authenticated', p.oid, 'execute') as authenticated,
		       has_function_privilege('service_role', p.oid, 'execute') as service,
		       obj_description(p.oid, 'pg_proc') as comment
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		left join pg_depend d on d.objid = p.oid and d.deptype = 'e'
		where d.objid is null
		  and ((n.nspname = 'public' and p.prokind = 'f')
		       or (n.nspname = 'supabase_jobs' and p.proname = any (${[...OPERATOR_FUNCTIONS]})))
		order by n.nspname = 'supabase_jobs', p.proname, p.pronargs`;
	const missing = OPERATOR_FUNCTIONS.filter((f) => !rows.some((r) => r.schema === 'supabase_jobs' && r.name === f));
	if (missing.length > 0) throw new Error(`no supabase_jobs.${missing.join(', supabase_jobs.')} in the database`);
	return rows.map(({ anon, authenticated, service, ...f }) => ({
		...f,
		roles: [anon && 'anon', authenticated && 'authenticated', service && 'service_role'].filter(
			(r): r is string => typeof r === 'string',
		),
	}));
}

/** Where a SECURITY DEFINER function's comment says why it runs as its owner; the reason follows, to the end. */
export const DEFINER_MARK = 'Runs as its owner (SECURITY DEFINER): ';

/** A function that runs as its owner, with the reason its comment gives (null: none given). */
export interface DefinerFunction {
	/** schema.name(argument types), as regprocedure prints it. */
	signature: string;
	reason: string | null;
}

/** The reason after DEFINER_MARK in a comment, or null. */
export function definerReason(comment: string | null): string | null {
	const at = comment?.indexOf(DEFINER_MARK) ?? -1;
	if (comment == null || at < 0) return null;
	const reason = comment
		.slice(at + DEFINER_MARK.length)
		.replace(/\s+/g, ' ')
		.trim();
	return reason === '' ? null : reason;
}

/** Every SECURITY DEFINER function of `public` and `supabase_jobs` the package installs, from pg_proc. */
export async function readDefinerFunctions(sql: postgres.Sql): Promise<DefinerFunction[]> {
	const rows = await sql<{ signature: string; comment: string | null }[]>`
		select p.oid::regprocedure::text as signature, obj_description(p.oid, 'pg_proc') as comment
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		left join pg_depend d on d.objid = p.oid and d.deptype = 'e'
		where d.objid is null and p.prosecdef and n.nspname in ('public', 'supabase_jobs')
		order by 1`;
	return rows.map((r) => ({ signature: r.signature, reason: definerReason(r.comment) }));
}

/** The section listing the functions that run as their owner, one row each with its reason. */
export function renderDefiners(definers: DefinerFunction[]): string[] {
	const missing = definers.filter((d) => d.reason === null).map((d) => d.signature);
	if (missing.length > 0)
		throw new Error(
			`SECURITY DEFINER without a reason: ${missing.join(', ')}. End its comment with "${DEFINER_MARK}<why>".`,
		);
	return [
		`### ${DEFINERS_TITLE}`,
		'',
		'Every other function runs as its caller, under RLS. These run as the owner of the tables, each for the reason given, with an empty `search_path`.',
		'',
		'| function | why it runs as its owner |',
		'| --- | --- |',
		...definers.map((d) => `| \`${d.signature}\` | ${d.reason!.replace(/\|/g, '\\|')} |`),
		'',
	];
}

/** The heading of the SECURITY DEFINER section. */
export const DEFINERS_TITLE = 'Functions that run as their owner (SECURITY DEFINER)';

/** `create function` style, one argument a line when there are several. */
function signature(f: SqlFunction): string {
	const args = splitArgs(f.args);
	const head = `${f.schema}.${f.name}`;
	const body = args.length <= 1 ? `(${args.join('')})` : `(\n${args.map((a) => `  ${a}`).join(',\n')}\n)`;
	return `${head}${body}\nreturns ${f.result}`;
}

/** Splits "a text, b jsonb DEFAULT '{}'::jsonb" on the commas between arguments (not inside quotes or parentheses). */
export function splitArgs(args: string): string[] {
	const out: string[] = [];
	let depth = 0;
	let quoted = false;
	let current = '';
	for (const ch of args) {
		if (ch === "'") quoted = !quoted;
		else if (!quoted && ch === '(') depth++;
		else if (!quoted && ch === ')') depth--;
		if (ch === ',' && !quoted && depth === 0) {
			out.push(current.trim());
			current = '';
		} else current += ch;
	}
	if (current.trim() !== '') out.push(current.trim());
	return out;
}

const who = (roles: string[]) =>
	roles.length === 0 ? 'the table owner (`postgres`) only' : roles.map((r) => `\`${r}\``).join(', ');

/** The generated markdown: a table of contents, then one entry per function. */
export function renderSqlFunctions(functions: SqlFunction[], definers: DefinerFunction[] = []): string {
	const out: string[] = [BEGIN, ''];
	const groups = [
		['public', 'The Data API: schema `public`'],
		['supabase_jobs', 'Operator functions: schema `supabase_jobs` (not exposed through the Data API)'],
	] as const;
	for (const [schema, title] of groups) {
		const group = functions.filter((f) => f.schema === schema);
		out.push(`### ${title}`, '');
		out.push('| function | arguments | executable by |', '| --- | --- | --- |');
		for (const f of group) out.push(`| [\`${f.schema}.${f.name}\`](#${anchor(f)}) | ${f.nargs} | ${who(f.roles)} |`);
		out.push('');
		for (const f of group) {
			out.push(`#### ${f.schema}.${f.name}`, '', '```sql', signature(f), '```', '');
			out.push(`Executable by ${who(f.roles)}.${f.comment ? ` ${f.comment.replace(/\s+/g, ' ').trim()}` : ''}`, '');
		}
	}
	if (definers.length > 0) out.push(...renderDefiners(definers));
	out.push(END);
	return out.join('\n');
}

/** GitHub's anchor for a "#### schema.name" heading. */
const anchor = (f: SqlFunction) => `${f.schema}${f.name}`.toLowerCase().replace(/[^a-z0-9_-]/g, '');

/** The page with its generated part replaced by `generated`, formatted as the repository formats markdown. */
export async function pageWith(generated: string, page: string): Promise<string> {
	const start = page.indexOf(BEGIN);
	const end = page.indexOf(END);
	if (start < 0 || end < start) throw new Error(`${SQL_API_PAGE} lacks the markers ${BEGIN} ... ${END}`);
	const text = page.slice(0, start) + generated + page.slice(end + END.length);
	const options = (await resolveConfig(SQL_API_PAGE)) ?? {};
	return await format(text, { ...options, filepath: SQL_API_PAGE });
}

/** The page as it should be now, for the database at `url`. */
export async function freshSqlApiPage(url: string): Promise<string> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		const generated = renderSqlFunctions(await readSqlFunctions(sql), await readDefinerFunctions(sql));
		return await pageWith(generated, await readFile(SQL_API_PAGE, 'utf8'));
	} finally {
		await sql.end();
	}
}

/** Rewrites the page in place. */
export async function writeSqlApiPage(url: string): Promise<string> {
	const text = await freshSqlApiPage(url);
	await writeFile(SQL_API_PAGE, text);
	return text;
}
