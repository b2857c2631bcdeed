/**
 * A generic snapshot of every table the stack has: row count and md5 of the
 * rows' text in a stable order, per table, found in pg_class rather than
 * listed by hand (a table added later is covered without touching this file).
 */
import type postgres from 'postgres';

/** The schemas whose tables a refused input must leave alone (net/vault/cron hold the kick path's state). */
export const SNAPSHOT_SCHEMAS = ['public', 'supabase_jobs', 'realtime', 'auth', 'net', 'vault', 'cron'] as const;

export type Snapshot = Record<string, { rows: number; md5: string }>;

type Queryable = postgres.Sql | postgres.TransactionSql;

let cachedQuery: string | null = null;

/** One statement reading every plain table (partitions included; partitioned parents would repeat them). */
async function snapshotQuery(sql: Queryable): Promise<string> {
	if (cachedQuery) return cachedQuery;
	const tables = await sql<{ name: string }[]>`
		select format('%I.%I', n.nspname, c.relname) as name
		from pg_class c join pg_namespace n on n.oid = c.relnamespace
		where n.nspname = any(${SNAPSHOT_SCHEMAS as unknown as string[]}) and c.relkind = 'r'
		order by 1`;
	cachedQuery = tables
		.map(
			({ name }) =>
				`select ${literal(name)} as name, count(*)::int as rows, md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as md5 from ${name} t`,
		)
		.join(' union all ');
	return cachedQuery;
}

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Reads the snapshot as the connection's (superuser) role sees it. */
export async function snapshot(sql: Queryable): Promise<Snapshot> {
	const rows = await sql.unsafe<{ name: string; rows: number; md5: string }[]>(await snapshotQuery(sql));
	return Object.fromEntries(rows.map((r) => [r.name, { rows: r.rows, md5: r.md5 }]));
}

/** The tables whose count or content differ, with both sides; empty when nothing changed. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
	const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
	return names
		.filter((n) => before[n]?.md5 !== after[n]?.md5 || before[n]?.rows !== after[n]?.rows)
		.map((n) => `${n}: ${before[n]?.rows ?? '-'} rows -> ${after[n]?.rows ?? '-'} rows`);
}
