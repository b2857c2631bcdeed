/**
 * The schema must come out clean from the rules of Supabase's database linter
 * (splinter) that concern what we ship. These are our own catalog queries for
 * the same rules, run over every schema our migrations touch.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
// What PostgREST exposes on a default Supabase project.
const exposed = ['public', 'graphql_public'];
const ours = ['public', 'supabase_jobs'];

beforeAll(async () => {
	db = await useTestDatabase();
	// A second job table, so per-table objects are linted too.
	await db.sql`select supabase_jobs.create_job_table('exports')`;
});

describe("Supabase's database linter finds nothing", () => {
	it('unsupported_reg_types: no column of a reg* type pg_upgrade cannot carry (major upgrades on Supabase)', async () => {
		const rows = await db.sql`
			select c.oid::regclass::text as tbl, a.attname as col, format_type(a.atttypid, a.atttypmod) as type
			from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
			where n.nspname = any(${ours}) and a.attnum > 0 and not a.attisdropped
			  and a.atttypid in ('regcollation'::regtype, 'regconfig'::regtype, 'regdictionary'::regtype, 'regnamespace'::regtype,
			                     'regoper'::regtype, 'regoperator'::regtype, 'regproc'::regtype, 'regprocedure'::regtype)`;
		expect(rows).toEqual([]);
	});

	it('0011 function_search_path_mutable: every function has a fixed search_path', async () => {
		const rows = await db.sql`
			select n.nspname || '.' || p.proname as fn
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname = any(${ours})
			  and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
			  and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) c where c like 'search_path=%')`;
		expect(rows.map((r) => r.fn)).toEqual([]);
	});

	it('0013 rls_disabled_in_public / RLS on every table we create', async () => {
		const rows = await db.sql`
			select n.nspname || '.' || c.relname as t
			from pg_class c join pg_namespace n on n.oid = c.relnamespace
			where c.relkind in ('r', 'p') and n.nspname = any(${ours}) and not c.relrowsecurity`;
		expect(rows.map((r) => r.t)).toEqual([]);
	});

	it('0008 rls_enabled_no_policy: every RLS table has a policy', async () => {
		const rows = await db.sql`
			select n.nspname || '.' || c.relname as t
			from pg_class c join pg_namespace n on n.oid = c.relnamespace
			where c.relkind in ('r', 'p') and n.nspname = any(${ours}) and c.relrowsecurity
			  and not exists (select 1 from pg_policy p where p.polrelid = c.oid)`;
		expect(rows.map((r) => r.t)).toEqual([]);
	});

	it('0010 security_definer_view: no view runs as its owner', async () => {
		const rows = await db.sql`
			select n.nspname || '.' || c.relname as v
			from pg_class c join pg_namespace n on n.oid = c.relnamespace
			where c.relkind = 'v' and n.nspname = any(${exposed})
			  and not coalesce(c.reloptions @> array['security_invoker=true'] or c.reloptions @> array['security_invoker=on'], false)`;
		expect(rows.map((r) => r.v)).toEqual([]);
	});

	it('0028/0029: no SECURITY DEFINER function in an exposed schema is executable by anon or authenticated', async () => {
		const rows = await db.sql`
			select n.nspname || '.' || p.proname as fn
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where p.prosecdef and n.nspname = any(${exposed})
			  and (has_function_privilege('anon', p.oid, 'execute') or has_function_privilege('authenticated', p.oid, 'execute'))`;
		expect(rows.map((r) => r.fn)).toEqual([]);
	});

	it('0003 auth_rls_initplan: policies wrap auth.uid() as (select auth.uid())', async () => {
		const rows = await db.sql`
			select schemaname || '.' || tablename || ':' || policyname as p
			from pg_policies
			where schemaname = any(${ours})
			  and ((qual ~ 'auth\\.(uid|jwt|role|email)\\(\\)' and lower(qual) !~ 'select\\s+auth\\.(uid|jwt|role|email)\\(\\)')
			    or (with_check ~ 'auth\\.(uid|jwt|role|email)\\(\\)' and lower(with_check) !~ 'select\\s+auth\\.(uid|jwt|role|email)\\(\\)'))`;
		expect(rows.map((r) => r.p)).toEqual([]);
		const [{ n }] =
			await db.sql`select count(*)::int as n from pg_policies where schemaname = 'public' and qual like '%auth.uid()%'`;
		expect(n, 'the job tables do have auth.uid() policies to check').toBeGreaterThan(0);
	});

	it('0001 unindexed_foreign_keys: owner_id is indexed', async () => {
		const rows = await db.sql`
			select c.conrelid::regclass::text as t
			from pg_constraint c
			where c.contype = 'f' and c.connamespace = any(select oid from pg_namespace where nspname = any(${ours}))
			  and not exists (select 1 from pg_index i where i.indrelid = c.conrelid and (i.indkey::int2[])[0] = c.conkey[1])`;
		expect(rows.map((r) => r.t)).toEqual([]);
	});

	it('anon is granted nothing of ours; nothing is granted to PUBLIC', async () => {
		const rows = await db.sql`
			select 'function ' || p.oid::regprocedure::text as what
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname = any(${ours}) and has_function_privilege('anon', p.oid, 'execute')
			union all
			select 'table ' || c.oid::regclass::text
			from pg_class c join pg_namespace n on n.oid = c.relnamespace
			where n.nspname = any(${ours}) and c.relkind in ('r', 'v', 'p')
			  and has_table_privilege('anon', c.oid, 'select, insert, update, delete')`;
		expect(rows.map((r) => r.what)).toEqual([]);
	});
});
