/**
 * The subset of PostgREST's query string the stand-in understands
 * (PostgREST/postgrest src/library/PostgREST/ApiRequest/QueryParams.hs):
 * `select=a,alias:b,c::text`, horizontal filters `col=[not.]op.value` with eq,
 * neq, gt, gte, lt, lte, like, ilike, match, imatch, is (null, not_null, true,
 * false, unknown) and in.(...), `order=col[.asc|.desc][.nullsfirst|.nullslast]`,
 * `limit`, `offset`, and the `Range: a-b` header. No embedding, no or/and,
 * no JSON paths: those answer 400 PGRST100.
 */
import { queryParamError } from './errors.ts';
import { ident } from './schema.ts';

export interface SelectItem {
	column: string;
	alias?: string;
	cast?: string;
}

export interface Filter {
	column: string;
	negate: boolean;
	op: string;
	value: string;
}

export interface OrderTerm {
	column: string;
	desc: boolean;
	nulls?: 'first' | 'last';
}

export interface ReadPlan {
	select: SelectItem[] | '*';
	filters: Filter[];
	order: OrderTerm[];
	offset: number;
	limit: number | null;
}

/** Query parameters that are never filters or function arguments (QueryParams.hs `reservedParams`). */
export const RESERVED_PARAMS = new Set(['select', 'columns', 'order', 'limit', 'offset', 'on_conflict', 'and', 'or']);

const OPERATORS: Record<string, string> = {
	eq: '=',
	neq: '<>',
	gt: '>',
	gte: '>=',
	lt: '<',
	lte: '<=',
	like: 'like',
	ilike: 'ilike',
	match: '~',
	imatch: '~*',
};

/** True when `value` parses as `[not.]op.rest` with an operator the stand-in knows. */
export function isFilterValue(value: string): boolean {
	const v = value.startsWith('not.') ? value.slice(4) : value;
	const op = v.split('.', 1)[0] ?? '';
	return op in OPERATORS || op === 'is' || op === 'in';
}

function parseFilter(column: string, raw: string): Filter {
	let rest = raw;
	let negate = false;
	if (rest.startsWith('not.')) {
		negate = true;
		rest = rest.slice(4);
	}
	const dot = rest.indexOf('.');
	const op = dot < 0 ? rest : rest.slice(0, dot);
	const value = dot < 0 ? '' : rest.slice(dot + 1);
	if (!(op in OPERATORS) && op !== 'is' && op !== 'in') {
		throw queryParamError(
			`"failed to parse filter (${raw})" (line 1, column ${raw.length + 1})`,
			`unknown operator "${op}"`,
		);
	}
	if (op === 'is' && !['null', 'not_null', 'true', 'false', 'unknown'].includes(value.toLowerCase())) {
		throw queryParamError(
			`"failed to parse filter (${raw})" (line 1, column ${raw.length + 1})`,
			'unexpected value for is: expecting null, not_null, true, false or unknown',
		);
	}
	if (op === 'in' && !/^\(.*\)$/s.test(value)) {
		throw queryParamError(
			`"failed to parse filter (${raw})" (line 1, column ${raw.length + 1})`,
			'unexpected end of input expecting "("',
		);
	}
	return { column, negate, op, value };
}

const CAST = /^[A-Za-z_][A-Za-z0-9_ ]*(\[\])?$/;

function parseSelect(raw: string): SelectItem[] | '*' {
	const items = raw
		.split(',')
		.map((s) => s.trim())
		.filter((s) => s !== '');
	if (items.length === 0 || (items.length === 1 && items[0] === '*')) return '*';
	return items.map((item) => {
		if (/[()!]|->/.test(item) || item === '*') {
			throw queryParamError(
				`"failed to parse select parameter (${raw})"`,
				`the stand-in supports plain columns only, not "${item}"`,
			);
		}
		let rest = item;
		let alias: string | undefined;
		const colon = rest.indexOf(':');
		if (colon > 0 && rest[colon + 1] !== ':') {
			alias = rest.slice(0, colon);
			rest = rest.slice(colon + 1);
		}
		let cast: string | undefined;
		const castAt = rest.indexOf('::');
		if (castAt >= 0) {
			cast = rest.slice(castAt + 2);
			rest = rest.slice(0, castAt);
			if (!CAST.test(cast))
				throw queryParamError(`"failed to parse select parameter (${raw})"`, `unexpected cast "${cast}"`);
		}
		return { column: rest, alias, cast };
	});
}

function parseOrder(raw: string): OrderTerm[] {
	return raw
		.split(',')
		.filter((s) => s !== '')
		.map((term) => {
			const parts = term.split('.');
			const column = parts.shift() ?? '';
			const t: OrderTerm = { column, desc: false };
			for (const p of parts) {
				if (p === 'asc') t.desc = false;
				else if (p === 'desc') t.desc = true;
				else if (p === 'nullsfirst') t.nulls = 'first';
				else if (p === 'nullslast') t.nulls = 'last';
				else
					throw queryParamError(
						`"failed to parse order (${raw})" (line 1, column ${raw.length + 1})`,
						`unexpected "${p}"`,
					);
			}
			return t;
		});
}

function nonNegative(name: string, raw: string | null): number | null {
	if (raw === null) return null;
	if (!/^\d+$/.test(raw))
		throw queryParamError(`"failed to parse ${name} parameter (${raw})"`, 'expecting a non-negative integer');
	return Number(raw);
}

/**
 * Reads the plan from the query string; `isArgument(key)` marks keys that are
 * function arguments (GET RPC) rather than filters.
 */
export function parseReadPlan(
	query: URLSearchParams,
	rangeHeader: string | undefined,
	isArgument: (key: string, value: string) => boolean = () => false,
): ReadPlan {
	const filters: Filter[] = [];
	for (const [key, value] of query) {
		if (RESERVED_PARAMS.has(key)) {
			if (key === 'or' || key === 'and')
				throw queryParamError(
					`"failed to parse logic tree (${value})"`,
					'the stand-in does not support or/and filters',
				);
			continue;
		}
		if (isArgument(key, value)) continue;
		if (key.includes('.'))
			throw queryParamError(
				`"failed to parse filter (${key})"`,
				'the stand-in does not support filters on embedded resources',
			);
		filters.push(parseFilter(key, value));
	}
	let offset = nonNegative('offset', query.get('offset')) ?? 0;
	let limit = nonNegative('limit', query.get('limit'));
	const range = rangeHeader ? /^\s*(?:items=)?(\d+)-(\d*)\s*$/.exec(rangeHeader) : null;
	if (range) {
		const lower = Number(range[1]);
		const upper = range[2] === '' ? null : Number(range[2]);
		offset = Math.max(offset, lower);
		if (upper !== null) {
			const fromHeader = upper - lower + 1;
			limit = limit === null ? fromHeader : Math.min(limit, fromHeader);
		}
	}
	return {
		select: parseSelect(query.get('select') ?? '*'),
		filters,
		order: parseOrder(query.get('order') ?? ''),
		offset,
		limit,
	};
}

/** Splits `(a,b,"c,d")` into its items as PostgREST's `pList` does. */
export function inList(value: string): string[] {
	const inner = value.slice(1, -1);
	const items: string[] = [];
	let current = '';
	let quoted = false;
	let wasQuoted = false;
	for (let i = 0; i < inner.length; i++) {
		const ch = inner[i]!;
		if (quoted) {
			if (ch === '\\' && i + 1 < inner.length) current += inner[++i];
			else if (ch === '"') quoted = false;
			else current += ch;
		} else if (ch === '"') {
			quoted = true;
			wasQuoted = true;
		} else if (ch === ',') {
			items.push(wasQuoted ? current : current.trim());
			current = '';
			wasQuoted = false;
		} else current += ch;
	}
	if (inner !== '' || wasQuoted) items.push(wasQuoted ? current : current.trim());
	return items;
}

/** SQL for the filters on `source`, pushing values (untyped, as PostgREST sends them) to `params`. */
export function whereSql(source: string, filters: Filter[], params: unknown[]): string {
	if (filters.length === 0) return '';
	const param = (v: string) => {
		params.push(v);
		return `$${params.length}`;
	};
	const terms = filters.map((f) => {
		const col = `${source}.${ident(f.column)}`;
		let sql: string;
		if (f.op === 'is') {
			const v = f.value.toLowerCase();
			sql = v === 'not_null' ? `${col} is not null` : `${col} is ${v}`;
		} else if (f.op === 'in') {
			const items = inList(f.value).map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
			sql = `${col} = any(${param(`{${items.join(',')}}`)})`;
		} else if (f.op === 'like' || f.op === 'ilike') {
			sql = `${col} ${OPERATORS[f.op]} ${param(f.value.replace(/\*/g, '%'))}`;
		} else {
			sql = `${col} ${OPERATORS[f.op]} ${param(f.value)}`;
		}
		return f.negate ? `not (${sql})` : sql;
	});
	return ` where ${terms.join(' and ')}`;
}

export function selectSql(source: string, select: SelectItem[] | '*'): string {
	if (select === '*') return `${source}.*`;
	return select
		.map((s) => {
			const col = `${source}.${ident(s.column)}`;
			const expr = s.cast ? `${col}::${s.cast}` : col;
			return s.alias || s.cast ? `${expr} as ${ident(s.alias ?? s.column)}` : expr;
		})
		.join(', ');
}

export function orderSql(source: string, order: OrderTerm[]): string {
	if (order.length === 0) return '';
	return ` order by ${order
		.map((o) => `${source}.${ident(o.column)} ${o.desc ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`)
		.join(', ')}`;
}

/**
 * The plan with `db-max-rows` applied, as Plan.hs `treeRestrictRange` does for
 * every read, function calls included (only table writes are exempt):
 * RangeQuery.hs `restrictRange` keeps the offset and lowers the limit to at
 * most `maxRows`. A function still runs to its end; only the rows sent are cut.
 * A function returning one value (json, an array) is one row: never cut.
 */
export function restrictRange(plan: ReadPlan, maxRows: number | null): ReadPlan {
	if (maxRows === null) return plan;
	return { ...plan, limit: plan.limit === null ? maxRows : Math.min(plan.limit, maxRows) };
}

export function limitSql(plan: ReadPlan): string {
	return `${plan.limit === null ? '' : ` limit ${plan.limit}`}${plan.offset ? ` offset ${plan.offset}` : ''}`;
}
