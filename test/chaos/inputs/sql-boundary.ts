/**
 * The SQL boundary: every job function, found in pg_proc (public.job_* and
 * supabase_jobs.*), called as anon, authenticated and service_role with one
 * malformed argument at a time. Each call runs in a transaction of its own
 * that is rolled back afterwards, with a snapshot of every table taken inside
 * it after an accepted call: an answer that changed anything is caught even
 * when the call "succeeded", and calls cannot disturb one another.
 */
import type postgres from 'postgres';
import { claimsFor, type Caller } from '../../helpers/db.ts';
import { changedTables, snapshot, type Snapshot } from './snapshot.ts';
import { badValues, foreignIds, SHORTENED_PARAMS, validValue, type SweepFixtures } from './sql-values.ts';
import { describeInput, type Tally } from './tally.ts';

export interface JobFunction {
	schema: string;
	name: string;
	/** STABLE or IMMUTABLE: it reads, so an odd filter may answer "nothing" rather than an error. */
	readOnly: boolean;
	params: { name: string; type: string; required: boolean }[];
}

/** Every function of the job API with at least one argument (trigger functions cannot be called). */
export async function jobFunctions(sql: postgres.Sql): Promise<JobFunction[]> {
	const rows = await sql<
		{ schema: string; name: string; names: string[] | null; types: string[]; defaults: number; volatility: string }[]
	>`
		select n.nspname as schema, p.proname as name, p.provolatile as volatility,
		       (select array_agg(a.name order by a.ord) from unnest(p.proargnames, p.proargmodes::text[]) with ordinality a(name, mode, ord)
		         where a.mode is null or a.mode in ('i', 'b', 'v')) as names,
		       array(select format_type(t, null) from unnest(p.proargtypes) t) as types,
		       p.pronargdefaults as defaults
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		where p.prokind = 'f' and p.pronargs > 0 and p.prorettype <> 'trigger'::regtype
		  and ((n.nspname = 'public' and p.proname like 'job\\_%') or n.nspname = 'supabase_jobs')
		order by 1, 2`;
	return rows.map((r) => {
		const names = r.names ?? r.types.map((_, i) => `$${i + 1}`);
		const required = r.types.length - r.defaults;
		return {
			schema: r.schema,
			name: r.name,
			readOnly: r.volatility !== 'v',
			params: r.types.map((type, i) => ({ name: names[i] ?? `$${i + 1}`, type, required: i < required })),
		};
	});
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

class Rollback extends Error {}

type Outcome = { error: postgres.PostgresError | Error } | { rows: unknown[] };

/**
 * Calls `fn` with `args` (param -> text) as `caller` in a transaction that is
 * always rolled back; returns the answer and the tables the call changed.
 * Every call is rolled back, so the committed `baseline` is the "before" of all of them.
 */
async function probe(
	sql: postgres.Sql,
	baseline: Snapshot,
	caller: Caller,
	fn: JobFunction,
	args: [string, string][],
): Promise<{ outcome: Outcome; changed: string[] }> {
	const byName = new Map(fn.params.map((p) => [p.name, p]));
	const text = `select * from ${ident(fn.schema)}.${ident(fn.name)}(${args
		.map(([name], i) => `${ident(name)} => $${i + 1}::text::${byName.get(name)!.type}`)
		.join(', ')})`;
	let result: { outcome: Outcome; changed: string[] } | undefined;
	try {
		await sql.begin(async (tx) => {
			let outcome: Outcome;
			try {
				outcome = {
					rows: await tx.savepoint(async (sp) => {
						await sp`select set_config('role', ${caller.role}, true), set_config('request.jwt.claims', ${JSON.stringify(claimsFor(caller))}, true)`;
						const rows = await sp.unsafe(
							text,
							args.map(([, v]) => v),
						);
						await sp`reset role`;
						return [...rows];
					}),
				};
			} catch (e) {
				outcome = { error: e as Error };
			}
			// A refused call left nothing: the savepoint rolled its statement back (PostgreSQL's
			// atomicity), so only an accepted call needs the tables compared.
			const changed = 'rows' in outcome ? changedTables(baseline, await snapshot(tx)) : [];
			result = { outcome, changed };
			throw new Rollback();
		});
	} catch (e) {
		if (!(e instanceof Rollback)) throw e;
	}
	return result!;
}

/** SQLSTATEs that say "your input was wrong" (or "not yours"): anything else is the server's fault. */
export function sqlErrorProblem(e: unknown, fn: JobFunction): string | null {
	const pg = e as { name?: string; code?: string; message?: string; detail?: string; constraint_name?: string };
	if (pg?.name !== 'PostgresError' || typeof pg.code !== 'string') return `not a database error: ${String(e)}`;
	const { code, message = '', detail } = pg;
	if (message.trim() === '') return `${code} with an empty message`;
	// PostgreSQL's own input functions, before the job function runs: they say what was malformed.
	if (code === '22023' && /hexadecimal/.test(message)) return null;
	if (code === '42602') return null; // invalid name syntax: a regclass argument that is no name
	if (code === '54001') return null; // stack depth: PostgreSQL's JSON parser on thousands of nested brackets
	if (code === '23503') return /^Key \((\w+)\)/.test(detail ?? '') ? null : `23503 naming no column: ${message}`;
	if (code === '22023') {
		const field = /field=([^\s,;]+)/.exec(detail ?? '')?.[1];
		if (!field) return `22023 without DETAIL field=…: ${message}`;
		const root = field.replace(/^items\[\d+\]\./, '').replace(/[[.].*$/, '');
		const known = fn.params.some(
			(p) => field === p.name || field.startsWith(`${p.name}[`) || field.startsWith(`${p.name}.`),
		);
		// Inner checks name the field of the job (params, payload, ...) the argument carries.
		if (!known && !/^[a-z_]+$/.test(root)) return `22023 names no argument (field=${field}): ${message}`;
		return null;
	}
	// A row rule (supabase_jobs.job_row_rules, or a CHECK), under its name: the message says which.
	if (code === '23514')
		return pg.constraint_name && message.includes(pg.constraint_name) ? null : `23514 naming no rule: ${message}`;
	if (code === '42501')
		return /permission denied|not allowed|only|may not/i.test(message) ? null : `42501 unclear: ${message}`;
	if (/^22/.test(code)) return null; // data exceptions: PostgreSQL's own say the type and the value
	// The job's own state refusing the call, each a typed error of the store:
	// SJ002 not failed or cancelled (try again), SJ003 no open question (answer).
	const stateCodes = ['PT404', 'PT409', 'PT410', 'PT429', '55000', 'SJ001', 'SJ002', 'SJ003'];
	if ([...stateCodes, '42P01', '22004', '42703', '54023'].includes(code)) return null;
	if (code === '3F000' || code === '42704') return null; // unknown schema / object named by the caller
	return `unexpected SQLSTATE ${code}: ${message}`;
}

/** Parameters naming a job or a user: another user's id or an unknown one must act on nothing. (result_id is any produced record's id.) */
const ID_PARAMS = new Set(['id', 'job_id', 'ids', 'owner_id']);

const CALLERS = ['anon', 'authenticated', 'service_role'] as const;

/**
 * The sweep: for every function and caller, each parameter in turn gets every
 * bad value of its type (other required parameters valid). Problems go to the tally.
 */
export async function sweepSqlFunctions(
	sql: postgres.Sql,
	fixtures: SweepFixtures & { user: Caller },
	tally: Tally,
	concurrency = 3,
): Promise<void> {
	const functions = await jobFunctions(sql);
	const baseline = await snapshot(sql);
	const tasks: (() => Promise<void>)[] = [];
	for (const fn of functions) {
		for (const role of CALLERS) {
			const caller: Caller = role === 'authenticated' ? fixtures.user : { role };
			const boundary = `sql as ${role}`;
			for (const param of fn.params) {
				let values = badValues(param.type, param.name);
				if (ID_PARAMS.has(param.name)) values.push(...foreignIds(fixtures, role));
				// anon may execute none of these (checked before any argument is looked at): a sample per parameter.
				if (role === 'anon') values = values.filter((_, i) => i % 4 === 0);
				for (const [label, value] of values) {
					const args: [string, string][] = fn.params
						.filter((p) => p.required && p.name !== param.name)
						.map((p) => [p.name, validValue(fn.name, p.name, p.type, role, fixtures)]);
					args.push([param.name, value]);
					const input = `${fn.schema}.${fn.name}(${param.name} => ${label} ${describeInput(value)})`;
					tasks.push(async () => {
						tally.count(boundary);
						const { outcome, changed } = await probe(sql, baseline, caller, fn, args);
						const accepted = 'rows' in outcome;
						if (changed.length > 0) {
							// A sentence over the limit is shortened, not refused (documented): that write is the contract.
							if (accepted && label === 'long' && SHORTENED_PARAMS.has(param.name)) return;
							tally.problem(boundary, input, `${accepted ? 'accepted' : 'refused'} and changed ${changed.join('; ')}`);
							return;
						}
						if (!accepted) {
							const problem = sqlErrorProblem(outcome.error, fn);
							if (problem) tally.problem(boundary, input, problem);
						}
					});
				}
			}
		}
	}
	let next = 0;
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < tasks.length) await tasks[next++]!();
		}),
	);
}
