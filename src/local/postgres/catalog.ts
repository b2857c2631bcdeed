/**
 * A database's catalog as comparable lines: what test/sql/schema-files.test.ts
 * compares between a database built from supabase/schemas and one built from
 * supabase/migrations. Every object outside PostgreSQL's own schemas is listed
 * (functions by pg_get_functiondef, tables, columns, constraints, indexes,
 * triggers, policies, privileges, comments, enum labels, views, the rows of the
 * package's settings tables, the pg_cron entries), each as `<kind> <name>: <text>`.
 * Local tooling.
 */
import postgres from 'postgres';

/** Schemas left out: PostgreSQL's own, and the migration history (it differs by design). */
const SKIPPED = ['pg_catalog', 'information_schema', 'pg_toast', 'supabase_migrations'];

/** The package's configuration tables whose rows a migration writes (timestamps left out). */
const ROWS: { table: string; columns: string }[] = [
	{ table: 'supabase_jobs.transitions', columns: 'from_status, to_status, via' },
	{
		table: 'supabase_jobs.settings',
		columns:
			'id, stale_after, backstop_after, kick_timeout_ms, finished_retention, cron_history_retention, cleanup_batch_size, cleanup_time_budget',
	},
	{
		table: 'supabase_jobs.job_tables',
		columns: 'table_name, label, max_active_per_owner, max_payload_bytes_per_owner',
	},
	{ table: 'supabase_jobs.job_kinds', columns: 'job_table, kind, max_active_per_owner' },
];

/** An ACL with its items sorted: the order grants were made in is not a difference. */
const acl = (column: string) => `array(select a::text from unnest(${column}) a order by 1)::text`;

/** One `kind name: text` line per catalog fact of the database at `url`, sorted. */
export async function catalogLines(url: string): Promise<string[]> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		return await sql.begin((tx) => readCatalog(tx));
	} finally {
		await sql.end();
	}
}

/** {@link catalogLines} within a transaction of the caller's (it sets a transaction-local search_path). */
export async function readCatalog(tx: postgres.TransactionSql): Promise<string[]> {
	// Names are printed schema-qualified whatever the server's default search_path.
	await tx`set local search_path = ''`;
	const ns = `n.nspname <> all (array[${SKIPPED.map((s) => `'${s}'`).join(', ')}]) and n.nspname not like 'pg_temp%' and n.nspname not like 'pg_toast_temp%'`;
	const queries: string[] = [
		`select 'schema' as kind, n.nspname as name, concat_ws(' | ', pg_get_userbyid(n.nspowner), ${acl('n.nspacl')}, obj_description(n.oid, 'pg_namespace')) as text
		   from pg_namespace n where ${ns}`,
		`select 'type' as kind, t.oid::regtype::text as name,
		        concat_ws(' | ', t.typtype, ${acl('t.typacl')}, obj_description(t.oid, 'pg_type'),
		          (select string_agg(e.enumlabel, ',' order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid)) as text
		   from pg_type t join pg_namespace n on n.oid = t.typnamespace
		  where ${ns} and t.typtype in ('e', 'd', 'c', 'r', 'm') and t.typname !~ '^_'
		    and (t.typrelid = 0 or (select c.relkind from pg_class c where c.oid = t.typrelid) = 'c')`,
		`select 'relation' as kind, c.oid::regclass::text as name,
		        concat_ws(' | ', c.relkind, c.relpersistence, pg_get_userbyid(c.relowner), c.relrowsecurity, c.relforcerowsecurity,
		          c.reloptions::text, ${acl('c.relacl')}, pg_get_partkeydef(c.oid), pg_get_expr(c.relpartbound, c.oid),
		          obj_description(c.oid, 'pg_class')) as text
		   from pg_class c join pg_namespace n on n.oid = c.relnamespace
		  where ${ns} and c.relkind in ('r', 'p', 'v', 'm', 'f', 'c', 'S')`,
		`select 'column' as kind, c.oid::regclass::text || '.' || a.attname as name,
		        concat_ws(' | ', a.attnum, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid),
		          a.attidentity, a.attgenerated, a.attcollation::regcollation::text, ${acl('a.attacl')}, col_description(c.oid, a.attnum)) as text
		   from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
		   left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
		  where ${ns} and c.relkind in ('r', 'p', 'v', 'm', 'f', 'c') and a.attnum > 0 and not a.attisdropped`,
		`select 'view' as kind, c.oid::regclass::text as name, pg_get_viewdef(c.oid) as text
		   from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${ns} and c.relkind in ('v', 'm')`,
		`select 'constraint' as kind, coalesce(k.conrelid::regclass::text, k.contypid::regtype::text) || '.' || k.conname as name,
		        concat_ws(' | ', pg_get_constraintdef(k.oid), k.condeferrable, k.convalidated, k.conislocal, k.coninhcount,
		          obj_description(k.oid, 'pg_constraint')) as text
		   from pg_constraint k join pg_namespace n on n.oid = k.connamespace where ${ns}`,
		`select 'index' as kind, i.indexrelid::regclass::text as name,
		        concat_ws(' | ', pg_get_indexdef(i.indexrelid), obj_description(i.indexrelid, 'pg_class')) as text
		   from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace where ${ns}`,
		`select 'trigger' as kind, t.tgrelid::regclass::text || '.' || t.tgname as name,
		        concat_ws(' | ', pg_get_triggerdef(t.oid), t.tgenabled, t.tgparentid <> 0, obj_description(t.oid, 'pg_trigger')) as text
		   from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
		  where ${ns} and not t.tgisinternal`,
		`select 'policy' as kind, p.schemaname || '.' || p.tablename || '.' || p.policyname as name,
		        concat_ws(' | ', p.permissive, p.roles::text, p.cmd, p.qual, p.with_check) as text
		   from pg_policies p where p.schemaname <> all (array[${SKIPPED.map((s) => `'${s}'`).join(', ')}])`,
		`select 'function' as kind, p.oid::regprocedure::text as name,
		        concat_ws(E'\\n-- ', case when p.prokind in ('f', 'p', 'w') then pg_get_functiondef(p.oid) else p.prokind::text end,
		          pg_get_userbyid(p.proowner), ${acl('p.proacl')}, obj_description(p.oid, 'pg_proc')) as text
		   from pg_proc p join pg_namespace n on n.oid = p.pronamespace where ${ns}`,
		`select 'default acl' as kind, concat_ws('.', d.defaclrole::regrole::text, d.defaclnamespace::regnamespace::text, d.defaclobjtype) as name,
		        ${acl('d.defaclacl')} as text
		   from pg_default_acl d`,
		`select 'extension' as kind, e.extname as name, e.extnamespace::regnamespace::text as text from pg_extension e`,
		`select 'event trigger' as kind, e.evtname as name, concat_ws(' | ', e.evtevent, e.evtfoid::regproc::text, e.evtenabled) as text
		   from pg_event_trigger e`,
		`select 'publication' as kind, p.pubname as name, concat_ws(' | ', p.puballtables, p.pubinsert, p.pubupdate, p.pubdelete) as text
		   from pg_publication p`,
	];
	const lines: string[] = [];
	for (const q of queries) {
		for (const r of await tx.unsafe<{ kind: string; name: string; text: string | null }[]>(q)) {
			lines.push(`${r.kind} ${r.name}: ${r.text ?? ''}`);
		}
	}
	for (const { table, columns } of ROWS) {
		const [exists] = await tx`select to_regclass(${table}) is not null as found`;
		if (!exists?.found) continue;
		for (const r of await tx.unsafe<{ row: string }[]>(`select row(${columns})::text as row from ${table}`)) {
			lines.push(`row ${table}: ${r.row}`);
		}
	}
	const [cron] = await tx`select to_regclass('cron.job') is not null as found`;
	if (cron?.found) {
		for (const r of await tx<{ jobname: string; schedule: string; command: string }[]>`
			select jobname, schedule, command from cron.job`) {
			lines.push(`cron ${r.jobname}: ${r.schedule} | ${r.command}`);
		}
	}
	return lines.sort();
}

/**
 * The difference between two catalogs, readable: for each object named on
 * either side but not the same on both, its text on each side. Empty when equal.
 */
export function catalogDiff(a: string[], b: string[], labels: [string, string] = ['a', 'b']): string {
	const key = (line: string) => line.slice(0, line.indexOf(': ') + 1);
	const index = (lines: string[]) => {
		const m = new Map<string, string[]>();
		for (const l of lines) m.set(key(l), [...(m.get(key(l)) ?? []), l.slice(key(l).length + 1)]);
		return m;
	};
	const [ia, ib] = [index(a), index(b)];
	const out: string[] = [];
	for (const k of [...new Set([...ia.keys(), ...ib.keys()])].sort()) {
		const [va, vb] = [ia.get(k) ?? [], ib.get(k) ?? []];
		if (va.join('\n') === vb.join('\n')) continue;
		out.push(
			`${k}\n  ${labels[0]}: ${va.join('\n    ') || '(absent)'}\n  ${labels[1]}: ${vb.join('\n    ') || '(absent)'}`,
		);
	}
	return out.join('\n\n');
}
