/**
 * A small schema cache read from pg_catalog, shaped after PostgREST's
 * (src/library/PostgREST/SchemaCache.hs `funcsSqlQuery`, `accessibleTables`):
 * functions of the exposed schemas with prokind 'f', callable (every input
 * argument named, or one unnamed json/jsonb/text/bytea/xml argument), not
 * returning trigger. Entries are cached; a miss re-reads before answering
 * 404, and `reload()` (or NOTIFY pgrst, 'reload schema') drops the cache.
 */
import type { Sql } from '../db.ts';

export interface RoutineParam {
	name: string;
	/** `type::regtype::text`, as PostgREST shows it in errors. */
	type: string;
	/** The type used to cast arguments (character -> character varying, as upstream). */
	castType: string;
	required: boolean;
	variadic: boolean;
}

export interface Routine {
	schema: string;
	name: string;
	params: RoutineParam[];
	volatility: 'i' | 's' | 'v';
	returnsSet: boolean;
	returnsComposite: boolean;
	returnsVoid: boolean;
	/** Table name when the function returns a table's row type (used for hints only). */
	returnTypeName: string;
}

export interface TableInfo {
	schema: string;
	name: string;
	columns: Map<string, string>;
}

interface RoutineRow {
	schema: string;
	name: string;
	volatility: 'i' | 's' | 'v';
	returns_set: boolean;
	returns_composite: boolean;
	returns_void: boolean;
	return_type_name: string;
	params: { name: string; type: string; cast_type: string; required: boolean; variadic: boolean }[] | null;
}

const routinesQuery = `
with inputs as (
  select p.oid,
         coalesce(p.proargnames[a.idx], '') as name,
         a.type,
         a.idx,
         coalesce(p.proargmodes[a.idx], 'i') as mode
  from pg_proc p,
       unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality as a(type, idx)
  where p.pronamespace = $1::text::regnamespace and p.proname = $2::text
), args as (
  select i.oid,
         json_agg(json_build_object(
           'name', i.name,
           'type', i.type::regtype::text,
           'cast_type', case i.type when 'bit'::regtype then 'bit varying' when 'bit[]'::regtype then 'bit varying[]'
                          when 'character'::regtype then 'character varying' when 'character[]'::regtype then 'character varying[]'
                          else format_type(i.type, null) end,
           'required', i.rank <= (p.pronargs - p.pronargdefaults),
           'variadic', i.mode = 'v'
         ) order by i.rank) as params,
         case count(*) - count(nullif(i.name, ''))
           when 0 then true
           when 1 then (array_agg(i.type))[1] in ('bytea'::regtype, 'json'::regtype, 'jsonb'::regtype, 'text'::regtype, 'xml'::regtype)
           else false end as callable
  from (select *, row_number() over (partition by oid order by idx) as rank from inputs where mode in ('i', 'b', 'v')) i
  join pg_proc p on p.oid = i.oid
  group by i.oid
)
select pn.nspname as schema, p.proname as name, p.provolatile as volatility, p.proretset as returns_set,
       (t.typtype = 'c' or coalesce(p.proargmodes::text[] && '{t,b,o}', false)) as returns_composite,
       (p.prorettype = 'void'::regtype) as returns_void,
       coalesce(comp.relname, t.typname)::text as return_type_name,
       a.params
from pg_proc p
join pg_namespace pn on pn.oid = p.pronamespace
join pg_type t on t.oid = p.prorettype
left join pg_class comp on comp.oid = t.typrelid
left join args a on a.oid = p.oid
where p.pronamespace = $1::text::regnamespace and p.proname = $2::text
  and p.prokind = 'f' and p.prorettype <> 'trigger'::regtype and coalesce(a.callable, true)
`;

export class SchemaCache {
	private routines = new Map<string, Routine[]>();
	private tables = new Map<string, TableInfo | null>();
	private names = new Map<string, string[]>();

	constructor(
		private readonly sql: Sql,
		readonly exposed: readonly string[],
	) {}

	reload(): void {
		this.routines.clear();
		this.tables.clear();
		this.names.clear();
	}

	/** Overloads of `schema.name`; re-reads the catalog once when nothing is cached. */
	async routinesNamed(schema: string, name: string, fresh = false): Promise<Routine[]> {
		const key = `${schema}.${name}`;
		const cached = this.routines.get(key);
		if (cached && !fresh) return cached;
		const rows = await this.sql.unsafe<RoutineRow[]>(routinesQuery, [schema, name]);
		const found = rows.map((r): Routine => ({
			schema: r.schema,
			name: r.name,
			volatility: r.volatility,
			returnsSet: r.returns_set,
			returnsComposite: r.returns_composite,
			returnsVoid: r.returns_void,
			returnTypeName: r.return_type_name,
			params: (r.params ?? []).map((p) => ({
				name: p.name,
				type: p.type,
				castType: p.cast_type,
				required: p.required,
				variadic: p.variadic,
			})),
		}));
		this.routines.set(key, found);
		return found;
	}

	/** Every function name in `schema` (for "Perhaps you meant" hints). */
	async functionNames(schema: string): Promise<string[]> {
		const rows = await this.sql.unsafe<{ name: string }[]>(
			`select distinct proname::text as name from pg_proc where pronamespace = $1::text::regnamespace and prokind = 'f'`,
			[schema],
		);
		return rows.map((r) => r.name);
	}

	/** A table, view or materialized view of `schema` with its columns, or null. */
	async table(schema: string, name: string, fresh = false): Promise<TableInfo | null> {
		const key = `${schema}.${name}`;
		if (this.tables.has(key) && !fresh) {
			const hit = this.tables.get(key);
			if (hit) return hit;
		}
		const rows = await this.sql.unsafe<{ column: string; type: string }[]>(
			`select a.attname::text as column, format_type(a.atttypid, a.atttypmod) as type
			 from pg_class c join pg_namespace n on n.oid = c.relnamespace
			 join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
			 where n.nspname = $1 and c.relname = $2 and c.relkind in ('r', 'v', 'm', 'f', 'p')
			 order by a.attnum`,
			[schema, name],
		);
		const info = rows.length === 0 ? null : { schema, name, columns: new Map(rows.map((r) => [r.column, r.type])) };
		this.tables.set(key, info);
		return info;
	}

	async tableNames(schema: string): Promise<string[]> {
		const cached = this.names.get(schema);
		if (cached) return cached;
		const rows = await this.sql.unsafe<{ name: string }[]>(
			`select relname::text as name from pg_class where relnamespace = $1::text::regnamespace and relkind in ('r', 'v', 'm', 'f', 'p') and not relispartition`,
			[schema],
		);
		const names = rows.map((r) => r.name);
		this.names.set(schema, names);
		return names;
	}
}

/** A quoted identifier (what PostgREST's `pgFmtIdent` produces). */
export function ident(name: string): string {
	return `"${name.replace(/"/g, '""')}"`;
}
