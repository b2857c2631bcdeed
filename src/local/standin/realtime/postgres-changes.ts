/**
 * postgres_changes for the stand-in. Upstream reads the WAL through
 * realtime.apply_rls (supabase/realtime lib/extensions/postgres_cdc_rls) and
 * checks, per change and per subscriber, that the subscriber's role can see
 * the row (by primary key). Here a trigger captures committed changes of the
 * subscribed tables (standin.sql `capture_change`), NOTIFY wakes the hub, and
 * visibility is checked the same way: a SELECT by primary key as the
 * subscriber, in a rolled-back transaction. The payload is Realtime's:
 * `{ids, data: {schema, table, commit_timestamp, type, columns, record,
 * old_record, errors}}` (old_record carries the whole old row, as with
 * REPLICA IDENTITY FULL).
 */
import type { Claims } from '../jwt.ts';
import type { Sql } from '../db.ts';
import type { PostgresBinding } from './channel.ts';

export interface Change {
	id: string;
	schema: string;
	table: string;
	type: 'INSERT' | 'UPDATE' | 'DELETE';
	record: Record<string, unknown> | null;
	old_record: Record<string, unknown> | null;
	commit_timestamp: string;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class PostgresChanges {
	private installed = new Set<string>();
	private meta = new Map<string, { columns: { name: string; type: string }[]; pk: string[] }>();

	constructor(private readonly admin: Sql) {}

	/** Attaches the capture trigger to each subscribed table (idempotent). */
	async subscribe(bindings: PostgresBinding[]): Promise<void> {
		for (const { params } of bindings) {
			const schema = typeof params.schema === 'string' ? params.schema : 'public';
			const table = typeof params.table === 'string' ? params.table : '*';
			if (table === '*') continue;
			const key = `${schema}.${table}`;
			if (this.installed.has(key)) continue;
			const [exists] = await this.admin.unsafe<{ ok: boolean }[]>(`select to_regclass($1) is not null as ok`, [
				`${quote(schema)}.${quote(table)}`,
			]);
			if (!exists?.ok)
				throw new Error(
					`Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [schema: ${schema}, table: ${table}]`,
				);
			await this.admin.unsafe(
				`create or replace trigger supabase_jobs_standin_changes after insert or update or delete on ${quote(schema)}.${quote(table)} ` +
					`for each row execute function supabase_jobs_standin.capture_change()`,
			);
			this.installed.add(key);
		}
	}

	async read(id: string): Promise<Change | null> {
		const [row] = await this.admin.unsafe<
			{
				schema_name: string;
				table_name: string;
				type: Change['type'];
				record: string | null;
				old_record: string | null;
				ts: string;
			}[]
		>(
			`delete from supabase_jobs_standin.changes where id = $1
			 returning schema_name, table_name, type, record::text as record, old_record::text as old_record,
			           to_char(commit_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ts`,
			[id],
		);
		if (!row) return null;
		return {
			id,
			schema: row.schema_name,
			table: row.table_name,
			type: row.type,
			record: row.record === null ? null : (JSON.parse(row.record) as Record<string, unknown>),
			old_record: row.old_record === null ? null : (JSON.parse(row.old_record) as Record<string, unknown>),
			commit_timestamp: row.ts,
		};
	}

	async tableMeta(schema: string, table: string): Promise<{ columns: { name: string; type: string }[]; pk: string[] }> {
		const key = `${schema}.${table}`;
		const hit = this.meta.get(key);
		if (hit) return hit;
		const columns = await this.admin.unsafe<{ name: string; type: string }[]>(
			`select a.attname::text as name, format_type(a.atttypid, null) as type from pg_attribute a
			 where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`,
			[`${quote(schema)}.${quote(table)}`],
		);
		const pk = await this.admin.unsafe<{ name: string }[]>(
			`select a.attname::text as name from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
			 where i.indrelid = $1::regclass and i.indisprimary`,
			[`${quote(schema)}.${quote(table)}`],
		);
		const value = { columns, pk: pk.map((p) => p.name) };
		this.meta.set(key, value);
		return value;
	}

	/** Whether the subscriber's role sees the changed row (DELETEs are not checked, as upstream). */
	async visibleTo(change: Change, claims: Claims): Promise<boolean> {
		if (change.type === 'DELETE' || !change.record) return true;
		const { pk } = await this.tableMeta(change.schema, change.table);
		if (pk.length === 0) return false;
		const record = change.record;
		const where = pk.map((c, i) => `${quote(c)}::text = $${i + 1}`).join(' and ');
		let visible = false;
		try {
			await this.admin.begin(async (tx) => {
				await tx.unsafe(`select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`, [
					String(claims.role),
					JSON.stringify(claims),
				]);
				const rows = await tx.unsafe(
					`select 1 from ${quote(change.schema)}.${quote(change.table)} where ${where}`,
					pk.map((c) => (record[c] === null || record[c] === undefined ? null : String(record[c]))) as never[],
				);
				visible = rows.length > 0;
				throw new RolledBack();
			});
		} catch (e) {
			if (!(e instanceof RolledBack)) return false;
		}
		return visible;
	}
}

class RolledBack extends Error {}

/** Whether a binding wants this change (event, schema, table and one `col=op.value` filter). */
export function bindingMatches(params: Record<string, unknown>, change: Change): boolean {
	const event = typeof params.event === 'string' ? params.event : '*';
	if (event !== '*' && event.toUpperCase() !== change.type) return false;
	if ((params.schema ?? 'public') !== change.schema) return false;
	const table = typeof params.table === 'string' ? params.table : '*';
	if (table !== '*' && table !== change.table) return false;
	const filter = typeof params.filter === 'string' ? params.filter : '';
	if (filter === '') return true;
	const m = /^([^=]+)=(eq|neq|lt|lte|gt|gte|in)\.(.*)$/s.exec(filter);
	if (!m) return false;
	const row = change.record ?? change.old_record ?? {};
	const actual = row[m[1]!];
	const text =
		actual === null || actual === undefined
			? null
			: typeof actual === 'object'
				? JSON.stringify(actual)
				: String(actual);
	const want = m[3]!;
	const cmp = (a: string, b: string) =>
		a !== '' && b !== '' && !Number.isNaN(Number(a)) && !Number.isNaN(Number(b))
			? Number(a) - Number(b)
			: a < b
				? -1
				: a > b
					? 1
					: 0;
	switch (m[2]) {
		case 'eq':
			return text === want;
		case 'neq':
			return text !== want;
		case 'in':
			return (
				text !== null &&
				want
					.replace(/^\(|\)$/g, '')
					.split(',')
					.map((s) => s.trim().replace(/^"|"$/g, ''))
					.includes(text)
			);
		default: {
			if (text === null) return false;
			const c = cmp(text, want);
			return m[2] === 'lt' ? c < 0 : m[2] === 'lte' ? c <= 0 : m[2] === 'gt' ? c > 0 : c >= 0;
		}
	}
}
