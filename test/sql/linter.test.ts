/**
 * Supabase's database linter (splinter), run as upstream wrote it: the rule SQL
 * is vendored unchanged in test/sql/splinter/ (commit and licence in its
 * README) and loaded into this file's database, which has the migrations, the
 * compat bootstrap (roles, auth.uid(), realtime.messages) and a second job table.
 * Each rule's findings are kept when they concern our objects (schema public,
 * supabase_jobs, or realtime, where we add policies) and must be none, or
 * exactly the ones listed with the reason we keep them.
 *
 * Every upstream rule is accounted for below, by number and name: RUN (a test
 * each) or EXCUSED (with the one-line reason it cannot apply here). A test fails
 * when the vendored rules and these two lists disagree.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/local/postgres/migrate.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';

const splinterDir = join(projectRoot, 'test/sql/splinter');
const migrationsDir = join(projectRoot, 'supabase/migrations');

/** Schemas whose objects our migrations create (realtime: the policies on realtime.messages). */
const ours = ['public', 'supabase_jobs', 'realtime'];

/** The schemas PostgREST exposes, from the project's config.toml (as `pgrst.db_schemas` on Supabase). */
const config = parse(readFileSync(join(projectRoot, 'supabase/config.toml'), 'utf8')) as { api: { schemas: string[] } };
const exposed = config.api.schemas;

/** pg_graphql is not installable here; Supabase projects have it. 0026/0027 are run as if it were installed. */
const graphqlGate = 'and exists (select 1 from graphql_installed)';

interface Run {
	title: string;
	/** Findings we keep on purpose (their `detail` text), with why. Empty: none allowed. */
	accepted?: { detail: string; why: string }[];
}

/** Rules run against our objects; the key is the vendored file's name. */
const RUN: Record<string, Run> = {
	'0001_unindexed_foreign_keys': { title: 'every foreign key has a covering index' },
	'0002_auth_users_exposed': { title: 'no view exposes auth.users to anon or authenticated' },
	'0003_auth_rls_initplan': {
		title: 'policies call auth.<fn>() and current_setting() once per statement, as (select ...)',
	},
	'0004_no_primary_key': { title: 'every table has a primary key' },
	'0006_multiple_permissive_policies': { title: 'at most one permissive policy per table, role and action' },
	'0007_policy_exists_rls_disabled': { title: 'no table has policies with RLS off' },
	'0008_rls_enabled_no_policy': { title: 'every table with RLS on has a policy' },
	'0009_duplicate_index': { title: 'no two identical indexes' },
	'0010_security_definer_view': { title: 'no exposed view runs as its owner' },
	'0011_function_search_path_mutable': { title: 'every function has a fixed search_path' },
	'0013_rls_disabled_in_public': { title: 'RLS is on for every table in an exposed schema' },
	'0014_extension_in_public': { title: 'no extension is installed in public' },
	'0015_rls_references_user_metadata': { title: 'no policy trusts user_metadata' },
	'0016_materialized_view_in_api': { title: 'no materialized view is reachable through the Data API' },
	'0017_foreign_table_in_api': { title: 'no foreign table is reachable through the Data API' },
	'0018_unsupported_reg_types': { title: 'no reg* column that pg_upgrade cannot carry (major upgrades on Supabase)' },
	'0021_fkey_to_auth_unique': { title: 'no foreign key to a unique constraint of the auth schema' },
	'0023_sensitive_columns_exposed': { title: 'no sensitive-looking column in an exposed table without RLS' },
	'0024_rls_policy_always_true': { title: 'no write policy for anon/authenticated is always true' },
	'0026_pg_graphql_anon_table_exposed': { title: 'anon sees no table of ours in the GraphQL schema' },
	'0027_pg_graphql_authenticated_table_exposed': {
		title:
			'signed-in users see only the job tables, the job table registry, the registered kinds, their own kept timings and the admin views (their own rows, all for an admin) in the GraphQL schema',
		accepted: [
			...['jobs', 'exports', 'document_analyses'].map((t) => ({
				detail:
					`table \`public.${t}\` is visible in the GraphQL schema to signed-in users because the ` +
					`\`authenticated\` role can \`SELECT\` it. Revoke \`SELECT\` from \`authenticated\` if it should not ` +
					`be discoverable to every account.`,
				why: 'a job table (document_analyses: the demo migration) is read by its owner through the Data API and Realtime; RLS limits the rows',
			})),
			{
				detail:
					'table `supabase_jobs.job_tables` is visible in the GraphQL schema to signed-in users because the ' +
					'`authenticated` role can `SELECT` it. Revoke `SELECT` from `authenticated` if it should not be ' +
					'discoverable to every account.',
				why:
					'the SECURITY INVOKER job_* functions resolve the table label there as the caller; pg_graphql ' +
					'reflects only schemas on the search_path (load_sql_context.sql: current_schemas), and supabase_jobs ' +
					'is on none',
			},
			{
				detail:
					'table `supabase_jobs.job_stream` is visible in the GraphQL schema to signed-in users because the ' +
					'`authenticated` role can `SELECT` it. Revoke `SELECT` from `authenticated` if it should not be ' +
					'discoverable to every account.',
				why: 'job_stream_read runs as the caller, so a user reads the output of their own jobs through RLS (owner or admin); supabase_jobs is on no search_path pg_graphql reflects',
			},
			{
				detail:
					'table `supabase_jobs.job_kinds` is visible in the GraphQL schema to signed-in users because the ' +
					'`authenticated` role can `SELECT` it. Revoke `SELECT` from `authenticated` if it should not be ' +
					'discoverable to every account.',
				why:
					'the admission trigger runs as the inserting user (so "is this a user" is decided by privilege) and ' +
					'reads which kinds users may enqueue: no secret, and supabase_jobs is on no search_path pg_graphql reflects',
			},
			{
				detail:
					'table `supabase_jobs.kind_limits` is visible in the GraphQL schema to signed-in users because the ' +
					'`authenticated` role can `SELECT` it. Revoke `SELECT` from `authenticated` if it should not be ' +
					'discoverable to every account.',
				why:
					'admins pause a kind and set its rate limit through the SECURITY INVOKER admin actions, so the ' +
					'policy kind_limits_admins lets them (and only them: is_admin()) read and write it; supabase_jobs is ' +
					'on no search_path pg_graphql reflects',
			},
			{
				detail:
					'table `supabase_jobs.phase_timings` is visible in the GraphQL schema to signed-in users because the ' +
					'`authenticated` role can `SELECT` it. Revoke `SELECT` from `authenticated` if it should not be ' +
					'discoverable to every account.',
				why:
					'job_phase_history (SECURITY INVOKER, callable by users) reads the timings retention kept as the ' +
					'caller; RLS limits a user to their own, as on the job tables, and supabase_jobs is on no ' +
					'search_path pg_graphql reflects',
			},
			...['job_events', 'job_logs'].map((t) => ({
				detail:
					`table \`supabase_jobs.${t}\` is visible in the GraphQL schema to signed-in users because the ` +
					`\`authenticated\` role can \`SELECT\` it. Revoke \`SELECT\` from \`authenticated\` if it should not ` +
					`be discoverable to every account.`,
				why:
					"job_timeline (SECURITY INVOKER, callable by users) reads a job's events and log lines as the " +
					'caller; RLS gives admins every row, the owner only the user-facing log lines, anyone else none, and ' +
					'supabase_jobs is on no search_path pg_graphql reflects',
			})),
			{
				detail:
					'table `supabase_jobs.job_question` is visible in the GraphQL schema to signed-in users because the ' +
					'`authenticated` role can `SELECT` it. Revoke `SELECT` from `authenticated` if it should not be ' +
					'discoverable to every account.',
				why:
					'job_open_question (SECURITY INVOKER, callable by users) reads the question a waiting job asked as ' +
					'the caller; RLS limits a user to the questions of their own jobs (an admin to every one), and ' +
					'supabase_jobs is on no search_path pg_graphql reflects',
			},
			...[
				'job_counts',
				'job_failure_rates',
				'job_latency',
				'job_throughput_hourly',
				'job_top_errors',
				'jobs_overrunning',
				'jobs_silent',
				'owner_usage',
			].map((v) => ({
				detail:
					`view \`supabase_jobs.${v}\` is visible in the GraphQL schema to signed-in users because the ` +
					`\`authenticated\` role can \`SELECT\` it. Revoke \`SELECT\` from \`authenticated\` if it should not ` +
					`be discoverable to every account.`,
				why:
					'an admin view: jobs_admin_overview (SECURITY INVOKER) reads it as the admin calling it; ' +
					'security_invoker, so RLS limits anyone else to their own jobs, and supabase_jobs is on no ' +
					'search_path pg_graphql reflects',
			})),
		],
	},
	'0028_anon_security_definer_function_executable': {
		title: 'anon can execute no SECURITY DEFINER function in an exposed schema',
	},
	'0029_authenticated_security_definer_function_executable': {
		title: 'authenticated can execute no SECURITY DEFINER function in an exposed schema',
	},
};

/**
 * Rules that cannot apply to our objects here, and why. Where the reason is a
 * fact about our migrations, `premise` checks it.
 */
const EXCUSED: Record<string, { why: string; premise?: () => Promise<void> }> = {
	'0005_unused_index': {
		why: 'reads pg_stat_user_indexes.idx_scan: in a fresh test database every non-unique index has 0 scans, which says nothing about the schema',
	},
	'0012_auth_allow_anonymous_sign_ins': {
		why: 'no SQL upstream (docs only): it is the Auth server setting of a project, not a database object',
	},
	'0019_insecure_queue_exposed_in_api': {
		why: 'concerns pgmq queue tables (schema pgmq, with pgmq_public exposed); our migrations create nothing in pgmq',
		premise: async () => {
			expect(migrationsSql()).not.toMatch(/\bpgmq(_public)?\./i);
			expect(await relationsIn('pgmq')).toBe(0);
		},
	},
	'0020_table_bloat': {
		why: 'measured from pg_stats and relpages of live data (over 20 MB wasted); a test database has no bloat to measure',
	},
	'0022_extension_versions_outdated': {
		why: 'concerns the versions of installed extensions, which the platform manages; our migrations create no extension',
		premise: async () => {
			expect(migrationsSql()).not.toMatch(/create\s+extension/i);
		},
	},
	'0025_public_bucket_allows_listing': {
		why: 'concerns Storage buckets and policies on storage.objects; our migrations create neither',
		premise: async () => {
			expect(migrationsSql()).not.toMatch(/\bstorage\./i);
			expect(await relationsIn('storage')).toBe(0);
		},
	},
};

let db: TestDatabase;

beforeAll(async () => {
	db = await useTestDatabase();
	// A second job table, so per-table objects are linted too.
	await db.sql`select supabase_jobs.create_job_table('exports')`;
	// As upstream's own harness does: a schema for the views, then each rule file.
	await db.sql`create schema lint`;
	for (const file of vendoredRules()) {
		let text = readFileSync(join(splinterDir, `${file}.sql`), 'utf8');
		if (file.startsWith('0026_') || file.startsWith('0027_')) {
			expect(text, `${file} still gates on pg_graphql as this test expects`).toContain(graphqlGate);
			text = text.replace(graphqlGate, '');
		}
		await db.sql.unsafe(text);
	}
});

/** The vendored rule files, by name without `.sql`. */
function vendoredRules(): string[] {
	return readdirSync(splinterDir)
		.filter((f) => /^\d{4}_.*\.sql$/.test(f))
		.map((f) => f.replace(/\.sql$/, ''))
		.sort();
}

interface Finding {
	detail: string;
	schema: string | null;
}

/** Runs one rule as Supabase does (`pgrst.db_schemas` set to the exposed schemas); all its findings. */
async function lint(rule: string): Promise<Finding[]> {
	return await db.sql.begin(async (tx) => {
		await tx`select set_config('pgrst.db_schemas', ${exposed.join(', ')}, true)`;
		const rows = await tx.unsafe(`select detail, metadata from lint."${rule}"`);
		return rows.map((r) => ({ detail: r.detail as string, schema: (r.metadata?.schema as string) ?? null }));
	});
}

/** The findings that concern our objects (a finding that names no schema is kept). */
function onOurs(findings: Finding[]): string[] {
	return findings
		.filter((f) => f.schema === null || ours.includes(f.schema))
		.map((f) => f.detail)
		.sort();
}

/** How many relations (and policies on them) schema `schema` holds in this database. */
async function relationsIn(schema: string): Promise<number> {
	const [{ n }] = await db.sql`
		select count(*)::int as n from pg_catalog.pg_class c join pg_catalog.pg_namespace s on s.oid = c.relnamespace
		where s.nspname = ${schema}`;
	return n;
}

/** Migration text without `--` comments. */
function migrationsSql(): string {
	return readdirSync(migrationsDir)
		.filter((f) => f.endsWith('.sql'))
		.map((f) => readFileSync(join(migrationsDir, f), 'utf8').replace(/--.*$/gm, ''))
		.join('\n');
}

describe("Supabase's database linter (splinter, upstream SQL) finds nothing in our objects", () => {
	it('every upstream rule is either run here or excused with its reason', () => {
		const upstream = [...vendoredRules(), '0012_auth_allow_anonymous_sign_ins'].sort();
		const listed = [...Object.keys(RUN), ...Object.keys(EXCUSED)].sort();
		expect(listed).toEqual(upstream);
		expect(Object.keys(RUN).filter((r) => r in EXCUSED)).toEqual([]);
	});

	for (const [rule, { title, accepted = [] }] of Object.entries(RUN)) {
		const [number, ...name] = rule.split('_');
		it(`${number} ${name.join('_')}: ${title}`, async () => {
			const found = onOurs(await lint(rule));
			expect(found).toEqual(accepted.map((a) => a.detail).sort());
		});
	}

	it('the vendored rules do find what they describe (a reg* column, a function without search_path)', async () => {
		await db.sql
			.begin(async (tx) => {
				await tx`create table public.lint_canary (id int primary key, f regprocedure)`;
				await tx`create function public.lint_canary_fn() returns int language sql as 'select 1'`;
				await tx`select set_config('pgrst.db_schemas', ${exposed.join(', ')}, true)`;
				const reg = await tx.unsafe(`select detail from lint."0018_unsupported_reg_types"`);
				expect(reg.map((r) => r.detail).join('\n')).toMatch(
					/public\.lint_canary\\?` has a column \\?`f\\?` with unsupported reg\* type \\?`regprocedure/,
				);
				const fn = await tx.unsafe(`select detail from lint."0011_function_search_path_mutable"`);
				expect(fn.map((r) => r.detail).join('\n')).toMatch(/public\.lint_canary_fn\\?` has a role mutable search_path/);
				throw new Error('rollback');
			})
			.catch((e: Error) => {
				if (e.message !== 'rollback') throw e;
			});
	});

	for (const [rule, { why, premise }] of Object.entries(EXCUSED)) {
		if (!premise) continue;
		const [number, ...name] = rule.split('_');
		it(`${number} ${name.join('_')}: excused, and its premise holds (${why})`, premise);
	}
});

describe('our own grant rules (beyond splinter)', () => {
	it('anon is granted nothing of ours; nothing is granted to PUBLIC', async () => {
		const rows = await db.sql`
			select 'function ' || p.oid::regprocedure::text as what
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname = any(${['public', 'supabase_jobs']}) and has_function_privilege('anon', p.oid, 'execute')
			union all
			select 'table ' || c.oid::regclass::text
			from pg_class c join pg_namespace n on n.oid = c.relnamespace
			where n.nspname = any(${['public', 'supabase_jobs']}) and c.relkind in ('r', 'v', 'p')
			  and has_table_privilege('anon', c.oid, 'select, insert, update, delete')`;
		expect(rows.map((r) => r.what)).toEqual([]);
	});

	it('the job tables do have auth.uid() policies for 0003 to check', async () => {
		const [{ n }] =
			await db.sql`select count(*)::int as n from pg_policies where schemaname = 'public' and qual like '%auth.uid()%'`;
		expect(n).toBeGreaterThan(0);
	});
});
