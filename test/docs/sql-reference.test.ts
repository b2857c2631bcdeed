/**
 * The SQL the docs show is the SQL the migrations install: docs/sql-api.md's
 * reference is what the catalog says now, and every call or signature of a
 * package function written anywhere in the README and docs names a function
 * that exists, with a number of arguments it accepts, and (when written as a
 * signature of argument names) those names in their real order.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import postgres from 'postgres';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
	DEFINER_MARK,
	DEFINERS_TITLE,
	freshSqlApiPage,
	GEN_DOCS_COMMAND,
	readDefinerFunctions,
	renderDefiners,
	splitArgs,
	SQL_API_PAGE,
	type DefinerFunction,
} from '../../src/local/docs/sql-reference.ts';
import { projectRoot } from '../../src/local/postgres/migrate.ts';
import { withProductDatabase } from '../../src/local/typegen/product-database.ts';

interface Fn {
	name: string;
	names: string[];
	nargs: number;
	required: number;
}

/** The README and every markdown page under docs/, as [path, text]. */
async function docs(): Promise<[string, string][]> {
	const files = [join(projectRoot, 'README.md')];
	const walk = async (dir: string): Promise<void> => {
		for (const entry of await readdir(dir, { withFileTypes: true })) {
			if (entry.name.startsWith('.')) continue;
			const path = join(dir, entry.name);
			if (entry.isDirectory()) await walk(path);
			else if (entry.name.endsWith('.md')) files.push(path);
		}
	};
	await walk(join(projectRoot, 'docs'));
	return Promise.all(files.map(async (f) => [relative(projectRoot, f), await readFile(f, 'utf8')] as [string, string]));
}

/**
 * A package function written with parentheses: `job_tick(id, progress, ...)`,
 * `public.job_get(...)`, `supabase_jobs.install_schedules()`. Other schemas'
 * functions (`vault.create_secret`, `realtime.send`) and TypeScript methods
 * (`store.claim(id)`) are not the package's SQL and are left alone.
 */
const CALL =
	/(?<![\w.])(?:(public|supabase_jobs)\.)?((?:job|jobs|stage)_[a-z_]+|[a-z_]+)\(([^()]*(?:\([^()]*\)[^()]*)*)\)/g;

/** What one doc shows: a function with its arguments, as written. */
export function callsIn(text: string): { schema: string | undefined; name: string; args: string[]; line: number }[] {
	const out: { schema: string | undefined; name: string; args: string[]; line: number }[] = [];
	for (const m of text.matchAll(CALL)) {
		const [, schema, name, args] = m as unknown as [string, string | undefined, string, string];
		if (schema === undefined && !/^(job|jobs|stage)_/.test(name)) continue;
		out.push({ schema, name, args: splitArgs(args), line: text.slice(0, m.index).split('\n').length });
	}
	return out;
}

/** Problems with one call, or none. */
export function checkCall(call: { name: string; args: string[] }, fn: Fn | undefined): string | null {
	if (!fn) return `${call.name}: no such function`;
	const more = call.args.at(-1) === '...' || call.args.at(-1) === '…';
	const shown = more ? call.args.slice(0, -1) : call.args;
	const named = shown.filter((a) => a.includes('=>')).length;
	if (shown.length > fn.nargs) return `${call.name}: ${shown.length} arguments shown, it takes ${fn.nargs}`;
	if (!more && named === 0 && shown.length < fn.required)
		return `${call.name}: ${shown.length} arguments shown, it needs ${fn.required}`;
	// A signature (bare argument names): the names in their real order, from the first.
	if (shown.length > 0 && shown.every((a) => /^"?[a-z_]+"?$/.test(a))) {
		const names = shown.map((a) => a.replace(/"/g, ''));
		const real = fn.names.slice(0, names.length);
		const looksLikeSignature = names.some((n) => fn.names.includes(n));
		if (looksLikeSignature && names.join(', ') !== real.join(', '))
			return `${call.name}(${names.join(', ')}): its arguments are (${fn.names.join(', ')})`;
	}
	return null;
}

let functions: Map<string, Fn>;
let freshPage: string;
let definers: DefinerFunction[];

beforeAll(async () => {
	await withProductDatabase(inject('adminUrl'), async (url) => {
		freshPage = await freshSqlApiPage(url);
		const sql = postgres(url, { max: 1, onnotice: () => {} });
		try {
			definers = await readDefinerFunctions(sql);
			const rows = await sql<
				{ schema: string; name: string; names: string[] | null; nargs: number; required: number }[]
			>`
				select n.nspname as schema, p.proname as name, p.proargnames[1:p.pronargs] as names,
				       p.pronargs::int as nargs, (p.pronargs - p.pronargdefaults)::int as required
				from pg_proc p join pg_namespace n on n.oid = p.pronamespace
				where n.nspname in ('public', 'supabase_jobs')`;
			functions = new Map(
				rows.map((r) => [
					`${r.schema}.${r.name}`,
					{ name: r.name, names: r.names ?? [], nargs: r.nargs, required: r.required },
				]),
			);
		} finally {
			await sql.end();
		}
	});
});

describe('the SQL the docs show', () => {
	it('docs/sql-api.md lists every function as the catalog defines it now', async () => {
		const committed = await readFile(SQL_API_PAGE, 'utf8');
		expect(
			committed === freshPage,
			`docs/sql-api.md is stale: the migrations changed since it was generated. Run \`${GEN_DOCS_COMMAND}\` and commit the file.`,
		).toBe(true);
	});

	it('the check catches a missing function, too many arguments and a signature out of order', () => {
		const tick: Fn = {
			name: 'job_tick',
			names: ['id', 'progress', 'stage', 'attempt', 'job_table', 'eta_seconds'],
			nargs: 6,
			required: 1,
		};
		const [wrongOrder, ok, partial] = callsIn(
			'`job_tick(id, progress, stage, attempt, eta_seconds)` and `public.job_tick(id, 0.5)` and `job_tick(id, progress, ...)`',
		);
		expect(checkCall(wrongOrder!, tick)).toBe(
			'job_tick(id, progress, stage, attempt, eta_seconds): its arguments are (id, progress, stage, attempt, job_table, eta_seconds)',
		);
		expect(checkCall(ok!, tick)).toBeNull();
		expect(checkCall(partial!, tick)).toBeNull();
		expect(checkCall({ name: 'job_tick', args: ['1', '2', '3', '4', '5', '6', '7'] }, tick)).toBe(
			'job_tick: 7 arguments shown, it takes 6',
		);
		expect(checkCall({ name: 'job_nothing', args: [] }, undefined)).toBe('job_nothing: no such function');
		expect(callsIn("select vault.create_secret('x', 'y'); store.claim(id)")).toEqual([]);
	});

	it('every package function called or signed in the README and docs exists, with arguments it takes in their order', async () => {
		const problems: string[] = [];
		let seen = 0;
		for (const [path, text] of await docs()) {
			for (const call of callsIn(text)) {
				const fn = call.schema
					? functions.get(`${call.schema}.${call.name}`)
					: (functions.get(`public.${call.name}`) ?? functions.get(`supabase_jobs.${call.name}`));
				const problem = checkCall(call, fn);
				seen++;
				if (problem) problems.push(`${path}:${call.line}: ${problem}`);
			}
		}
		expect(problems).toEqual([]);
		expect(seen).toBeGreaterThan(30);
	});
});

describe('the functions that run as their owner', () => {
	it('every SECURITY DEFINER function of the package says why in its comment', () => {
		expect(definers.length).toBeGreaterThan(5);
		expect(definers.filter((d) => d.reason === null).map((d) => d.signature)).toEqual([]);
	});

	it('docs/sql-api.md lists exactly the SECURITY DEFINER functions of the catalog, each with its reason', async () => {
		const page = await readFile(SQL_API_PAGE, 'utf8');
		const start = page.indexOf(`### ${DEFINERS_TITLE}`);
		expect(start).toBeGreaterThan(0);
		const section = page.slice(start).split(/\n(?=#{1,3} |<!--)/)[0]!;
		const listed = [...section.matchAll(/^\| `([^`]+)` +\| (.+?) +\|$/gm)].map((m) => [m[1], m[2]]);
		expect(listed).toEqual(definers.map((d) => [d.signature, d.reason]));
	});

	it('a SECURITY DEFINER function without a reason stops the generator, naming it', () => {
		expect(() => renderDefiners([{ signature: 'supabase_jobs.quiet()', reason: null }])).toThrow(
			/supabase_jobs\.quiet\(\)/,
		);
		expect(renderDefiners([{ signature: 'supabase_jobs.loud()', reason: 'it must.' }]).join('\n')).toContain(
			'| `supabase_jobs.loud()` | it must. |',
		);
		expect(DEFINER_MARK).toMatch(/SECURITY DEFINER/);
	});
});
