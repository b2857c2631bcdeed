/**
 * POST/GET/HEAD /rest/v1/rpc/<fn>, after PostgREST:
 * - function choice: src/library/PostgREST/Plan.hs `findProc` (required
 *   params must all be given, optional ones may be; else 404 PGRST202, two
 *   matches 300 PGRST203; single unnamed json/jsonb param as fallback);
 * - the call: Query/QueryBuilder.hs `callPlanToQuery` (json_to_record over
 *   the body for POST, `name := $n::type` for GET) and Query/Statements.hs
 *   `mainCall`, with Query/SqlFragment.hs `asJsonF` for the body;
 * - transaction mode: read only for GET and for STABLE/IMMUTABLE functions;
 * - response: Response.hs (void -> 204; Content-Range; 206/416 with counts).
 */
import { outOfBoundsBody, RestError, singularityError } from './errors.ts';
import { closest } from './fuzzy.ts';
import { inRequestTransaction, type RestContext } from './context.ts';
import {
	isFilterValue,
	limitSql,
	orderSql,
	parseReadPlan,
	RESERVED_PARAMS,
	restrictRange,
	selectSql,
	whereSql,
} from './read-plan.ts';
import { ident, type Routine, type SchemaCache } from './schema.ts';
import type { Sql } from '../db.ts';
import { contentRange, rangeStatus, type RestResponse } from './response.ts';

export interface RpcInput {
	ctx: RestContext;
	name: string;
	query: URLSearchParams;
	/** Parsed JSON body for POST (undefined for GET/HEAD). */
	body: unknown;
	rawBody: string;
	rangeHeader?: string;
	countExact: boolean;
	wantsSingle: boolean;
	/** PostgREST `db-max-rows`: null for no cap. */
	maxRows: number | null;
}

function matchesParams(r: Routine, keys: Set<string>, isPost: boolean): boolean {
	if (r.params.length === 0) return keys.size === 0;
	const required = r.params.filter((p) => p.required).map((p) => p.name);
	const optional = new Set(r.params.filter((p) => !p.required).map((p) => p.name));
	const rest = [...keys].filter((k) => !optional.has(k));
	void isPost;
	return rest.length === required.length && required.every((k) => keys.has(k));
}

function singleUnnamedJson(r: Routine, isPost: boolean): boolean {
	const [only] = r.params;
	return (
		isPost &&
		r.params.length === 1 &&
		only !== undefined &&
		only.name === '' &&
		(only.type === 'json' || only.type === 'jsonb')
	);
}

async function noRpc(
	cache: SchemaCache,
	schema: string,
	name: string,
	keys: string[],
	isPost: boolean,
	overloads: Routine[],
): Promise<RestError> {
	const func = `${schema}.${name}`;
	const listed = keys.join(', ');
	const message = `Could not find the function ${func}${keys.length === 0 ? ' without parameters' : `(${listed})`} in the schema cache`;
	const prms = keys.length === 0 ? ' without parameters' : ` with parameter${keys.length > 1 ? 's' : ''} ${listed}`;
	const details = `Searched for the function ${func}${prms}${isPost ? ' or with a single unnamed json/jsonb parameter' : ''}, but no matches were found in the schema cache.`;
	let hint: string | null = null;
	if (overloads.length === 0) {
		const best = closest(await cache.functionNames(schema), name, 0.75);
		if (best !== null && best !== name) hint = `Perhaps you meant to call the function ${schema}.${best}`;
	} else {
		const lists = overloads.map(
			(o) =>
				`(${o.params
					.map((p) => p.name)
					.sort()
					.join(', ')})`,
		);
		const best = closest(lists, `(${[...keys].sort().join(', ')})`, 0.33);
		if (best !== null) hint = `Perhaps you meant to call the function ${schema}.${name}${best}`;
	}
	return new RestError(404, { code: 'PGRST202', message, details, hint });
}

function ambiguous(procs: Routine[]): RestError {
	const names = procs.map((p) => `${p.schema}.${p.name}(${p.params.map((a) => `${a.name} => ${a.type}`).join(', ')})`);
	return new RestError(300, {
		code: 'PGRST203',
		message: `Could not choose the best candidate function between: ${names.join(', ')}`,
		details: null,
		hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
	});
}

async function findRoutine(
	cache: SchemaCache,
	schema: string,
	name: string,
	keys: Set<string>,
	isPost: boolean,
): Promise<Routine> {
	const pick = (all: Routine[]) => {
		const matched = all.filter((r) => matchesParams(r, keys, isPost));
		const fallback = all.filter((r) => !matchesParams(r, keys, isPost) && singleUnnamedJson(r, isPost));
		return { matched, fallback };
	};
	let all = await cache.routinesNamed(schema, name);
	let { matched, fallback } = pick(all);
	if (matched.length === 0 && fallback.length === 0) {
		// The cache may predate a CREATE FUNCTION: look again before answering 404.
		all = await cache.routinesNamed(schema, name, true);
		({ matched, fallback } = pick(all));
	}
	if (matched.length === 1) return matched[0]!;
	if (matched.length > 1) throw ambiguous(matched);
	if (fallback.length === 1) return fallback[0]!;
	if (fallback.length > 1) throw ambiguous(fallback);
	throw await noRpc(cache, schema, name, [...keys].sort(), isPost, all);
}

function bodyAggregate(r: Routine, single: boolean): string {
	const scalar = !r.returnsComposite;
	if (single) return scalar ? `(json_agg(_postgrest_t.pgrst_scalar)->0)::text` : `(json_agg(_postgrest_t)->0)::text`;
	if (!r.returnsSet && r.returnsComposite) return `coalesce((json_agg(_postgrest_t)->0)::text, 'null')`;
	if (!r.returnsSet) return `coalesce((json_agg(_postgrest_t.pgrst_scalar)->0)::text, 'null')`;
	if (scalar) return `coalesce(json_agg(_postgrest_t.pgrst_scalar)::text, '[]')`;
	return `coalesce(json_agg(_postgrest_t)::text, '[]')`;
}

export async function handleRpc(sql: Sql, cache: SchemaCache, input: RpcInput): Promise<RestResponse> {
	const { ctx, name, query } = input;
	const isPost = ctx.method === 'POST';
	let keys: Set<string>;
	if (isPost) {
		const b = input.body;
		keys = new Set(b && typeof b === 'object' && !Array.isArray(b) ? Object.keys(b) : []);
	} else {
		keys = new Set([...query].filter(([k, v]) => !RESERVED_PARAMS.has(k) && !isFilterValue(v)).map(([k]) => k));
	}
	const routine = await findRoutine(cache, ctx.schema, name, keys, isPost);
	const plan = restrictRange(
		parseReadPlan(query, input.rangeHeader, (k, v) => !isPost && keys.has(k) && !isFilterValue(v)),
		input.maxRows,
	);
	const params: unknown[] = [];
	const fn = `${ident(routine.schema)}.${ident(routine.name)}`;
	const scalar = !routine.returnsComposite;
	const callIt = (args: string) =>
		scalar ? `(select ${fn}(${args}) pgrst_scalar) pgrst_call` : `${fn}(${args}) pgrst_call`;
	let from: string;
	const given = routine.params.filter((p) => p.name !== '' && keys.has(p.name));
	if (routine.params.length === 1 && routine.params[0]!.name === '' && isPost) {
		params.push(input.rawBody === '' ? null : input.rawBody);
		from = `from ${callIt(`$1::${routine.params[0]!.castType}`)}`;
	} else if (given.length === 0) {
		from = `from ${callIt('')}`;
	} else if (isPost) {
		params.push(input.rawBody);
		const cols = given.map((p) => ident(p.name)).join(', ');
		const typed = given.map((p) => `${ident(p.name)} ${p.castType}`).join(', ');
		const named = given
			.map((p) => `${p.variadic ? 'VARIADIC ' : ''}${ident(p.name)} := pgrst_body.${ident(p.name)}`)
			.join(', ');
		from =
			`from (select $1::json as json_data) pgrst_payload, ` +
			`lateral (select ${cols} from json_to_record(pgrst_payload.json_data) as _(${typed}) limit 1) pgrst_body, ` +
			`lateral ${callIt(named)}`;
	} else {
		const named = given.map((p) => {
			params.push(query.get(p.name));
			return `${p.variadic ? 'VARIADIC ' : ''}${ident(p.name)} := $${params.length}::${p.castType}`;
		});
		from = `from ${callIt(named.join(', '))}`;
	}
	const sourceCols = scalar ? 'pgrst_call.pgrst_scalar' : 'pgrst_call.*';
	const where = whereSql('pgrst_source', plan.filters, params);
	const count = input.countExact ? `(select count(*) from pgrst_source${where})` : 'null';
	const text =
		`with pgrst_source as (select ${sourceCols} ${from}) ` +
		`select ${count}::bigint as total_result_set, count(_postgrest_t)::bigint as page_total, ${bodyAggregate(routine, input.wantsSingle)} as body ` +
		`from (select ${selectSql('pgrst_source', scalar ? '*' : plan.select)} from pgrst_source${where}${orderSql('pgrst_source', plan.order)}${limitSql(plan)}) _postgrest_t`;
	const readOnly = !isPost || routine.volatility !== 'v';
	const row = await inRequestTransaction(sql, ctx, readOnly, async (tx) => {
		const [r] = await tx.unsafe<{ total_result_set: string | null; page_total: string; body: string | null }[]>(
			text,
			params as never[],
		);
		if (!r) throw new Error('rpc returned no row');
		// PostgREST fails (and rolls back) when application/vnd.pgrst.object+json does not get exactly one row.
		if (input.wantsSingle && Number(r.page_total) !== 1) throw singularityError(Number(r.page_total));
		return r;
	});
	const total = row.total_result_set === null ? null : Number(row.total_result_set);
	const pageTotal = Number(row.page_total);
	const headers: Record<string, string> = {
		'Content-Range': contentRange(plan.offset, plan.offset + pageTotal - 1, total),
	};
	if (routine.returnsVoid) return { status: 204, headers, body: null };
	headers['Content-Type'] = input.wantsSingle
		? 'application/vnd.pgrst.object+json; charset=utf-8'
		: 'application/json; charset=utf-8';
	if (ctx.profileNegotiated) headers['Content-Profile'] = ctx.schema;
	const status = rangeStatus(plan.offset, plan.offset + pageTotal - 1, total);
	const body = status === 416 ? outOfBoundsBody(plan.offset, total ?? 0) : (row.body ?? 'null');
	return { status, headers, body: ctx.method === 'HEAD' ? null : body };
}
