/**
 * GET/HEAD /rest/v1/<table>: PostgREST's `mainRead`
 * (src/library/PostgREST/Query/Statements.hs) for the read-plan subset in
 * read-plan.ts, in a read-only transaction as the request's role, so RLS
 * decides which rows come back. Unknown tables answer 404 PGRST205
 * (Error.hs `TableNotFound`); unknown columns are left to PostgreSQL (42703),
 * as upstream does for casts and filters it cannot check.
 */
import { outOfBoundsBody, RestError, singularityError } from './errors.ts';
import { closest } from './fuzzy.ts';
import { inRequestTransaction, type RestContext } from './context.ts';
import { limitSql, orderSql, parseReadPlan, restrictRange, selectSql, whereSql } from './read-plan.ts';
import { contentRange, rangeStatus, type RestResponse } from './response.ts';
import { ident, type SchemaCache } from './schema.ts';
import type { Sql } from '../db.ts';

export interface TableReadInput {
	ctx: RestContext;
	table: string;
	query: URLSearchParams;
	rangeHeader?: string;
	countExact: boolean;
	wantsSingle: boolean;
	/** PostgREST `db-max-rows`: null for no cap. */
	maxRows: number | null;
}

export async function handleTableRead(sql: Sql, cache: SchemaCache, input: TableReadInput): Promise<RestResponse> {
	const { ctx, table, query } = input;
	const info = (await cache.table(ctx.schema, table)) ?? (await cache.table(ctx.schema, table, true));
	if (!info) {
		const best = closest(await cache.tableNames(ctx.schema), table, 0.75);
		throw new RestError(404, {
			code: 'PGRST205',
			message: `Could not find the table '${ctx.schema}.${table}' in the schema cache`,
			details: null,
			hint: best !== null ? `Perhaps you meant the table '${ctx.schema}.${best}'` : null,
		});
	}
	const plan = restrictRange(parseReadPlan(query, input.rangeHeader), input.maxRows);
	const params: unknown[] = [];
	const source = `${ident(info.schema)}.${ident(info.name)}`;
	const where = whereSql(source, plan.filters, params);
	const count = input.countExact ? `(select count(*) from ${source}${where})` : 'null';
	const body = input.wantsSingle ? `(json_agg(_postgrest_t)->0)::text` : `coalesce(json_agg(_postgrest_t)::text, '[]')`;
	const text =
		`select ${count}::bigint as total_result_set, count(_postgrest_t)::bigint as page_total, ${body} as body ` +
		`from (select ${selectSql(source, plan.select)} from ${source}${where}${orderSql(source, plan.order)}${limitSql(plan)}) _postgrest_t`;
	const row = await inRequestTransaction(sql, ctx, true, async (tx) => {
		const [r] = await tx.unsafe<{ total_result_set: string | null; page_total: string; body: string | null }[]>(
			text,
			params as never[],
		);
		if (!r) throw new Error('read returned no row');
		if (input.wantsSingle && Number(r.page_total) !== 1) throw singularityError(Number(r.page_total));
		return r;
	});
	const total = row.total_result_set === null ? null : Number(row.total_result_set);
	const upper = plan.offset + Number(row.page_total) - 1;
	const status = rangeStatus(plan.offset, upper, total);
	const headers: Record<string, string> = {
		'Content-Range': contentRange(plan.offset, upper, total),
		'Content-Type': input.wantsSingle
			? 'application/vnd.pgrst.object+json; charset=utf-8'
			: 'application/json; charset=utf-8',
	};
	if (ctx.profileNegotiated) headers['Content-Profile'] = ctx.schema;
	const out = status === 416 ? outOfBoundsBody(plan.offset, total ?? 0) : (row.body ?? 'null');
	return { status, headers, body: ctx.method === 'HEAD' ? null : out };
}
