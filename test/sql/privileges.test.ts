/**
 * Every privilege the package sets, written out in privileges.snapshot.txt:
 * each function's EXECUTE grants, each table's, view's and sequence's grants
 * and whether RLS is on, each column grant, each policy, the schema's and the
 * types' USAGE and the default privileges. The schema files grant their own
 * objects, so a grant moved from one file to another must leave this list
 * unchanged; a grant added or lost fails here until the snapshot is rewritten
 * (`npx vitest run --project node test/sql/privileges.test.ts -u`), a change
 * seen in review.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

/** An ACL with its items sorted: the order grants were made in is not a difference. */
const acl = (column: string) => `coalesce(array(select a::text from unnest(${column}) a order by 1)::text, 'default')`;
const ours = `n.nspname in ('public', 'supabase_jobs')`;

const QUERIES = [
	`select 'schema ' || n.nspname || ': ' || ${acl('n.nspacl')} as line from pg_namespace n where ${ours}`,
	`select 'type ' || t.oid::regtype::text || ': ' || ${acl('t.typacl')} as line
	   from pg_type t join pg_namespace n on n.oid = t.typnamespace
	  where ${ours} and t.typtype in ('e', 'd', 'c') and t.typname !~ '^_' and (t.typacl is not null or
	    (t.typrelid = 0 or (select c.relkind from pg_class c where c.oid = t.typrelid) = 'c'))`,
	`select 'relation ' || c.oid::regclass::text || ': ' || c.relkind::text || ' | rls ' || c.relrowsecurity
	        || ' | force ' || c.relforcerowsecurity || ' | ' || ${acl('c.relacl')} as line
	   from pg_class c join pg_namespace n on n.oid = c.relnamespace
	  where ${ours} and c.relkind in ('r', 'p', 'v', 'm', 'S')`,
	`select 'column ' || c.oid::regclass::text || '.' || a.attname || ': ' || ${acl('a.attacl')} as line
	   from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
	  where ${ours} and a.attnum > 0 and not a.attisdropped and a.attacl is not null`,
	`select 'policy ' || p.schemaname || '.' || p.tablename || '.' || p.policyname || ': '
	        || concat_ws(' | ', p.permissive, p.roles::text, p.cmd, p.qual, p.with_check) as line
	   from pg_policies p where p.schemaname in ('public', 'supabase_jobs', 'realtime', 'storage')`,
	`select 'function ' || p.oid::regprocedure::text || ': ' || ${acl('p.proacl')} as line
	   from pg_proc p join pg_namespace n on n.oid = p.pronamespace where ${ours}`,
	`select 'default acl ' || concat_ws('.', d.defaclrole::regrole::text, d.defaclnamespace::regnamespace::text,
	        d.defaclobjtype::text) || ': ' || ${acl('d.defaclacl')} as line
	   from pg_default_acl d`,
];

describe('the privileges of every object', () => {
	it('are the ones written in privileges.snapshot.txt (functions, relations, columns, policies, types, defaults)', async () => {
		const lines: string[] = [];
		await db.sql.begin(async (tx) => {
			// Names are printed schema-qualified whatever the server's default search_path.
			await tx`set local search_path = ''`;
			for (const q of QUERIES) lines.push(...(await tx.unsafe<{ line: string }[]>(q)).map((r) => r.line));
		});
		lines.sort();
		// The list sees the package's objects: a query that matched nothing would snapshot nothing.
		expect(lines.filter((l) => l.startsWith('function public.job_')).length).toBeGreaterThan(25);
		expect(lines.some((l) => l.startsWith('relation supabase_jobs.job: p | rls true'))).toBe(true);
		expect(lines.some((l) => l.startsWith('policy realtime.messages.'))).toBe(true);
		await expect(lines.join('\n') + '\n').toMatchFileSnapshot('privileges.snapshot.txt');
	});
});
