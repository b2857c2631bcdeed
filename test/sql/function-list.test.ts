/**
 * The TypeScript list of SQL functions (JOB_FUNCTIONS, what both adapters call)
 * is checked against pg_proc: every function exists with exactly these
 * arguments, in this order, of these types, and no job_* function is missing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { JOB_FUNCTIONS } from '../../src/lib/store/adapter.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

describe('the job API in TypeScript is the one in pg_proc', () => {
	it('every function in JOB_FUNCTIONS exists in public with the same named arguments and types', async () => {
		const rows = await db.sql<{ name: string; args: string[]; types: string[] }[]>`
			select p.proname as name, p.proargnames[1:p.pronargs] as args,
			       array(select format_type(t, null) from unnest(p.proargtypes) t) as types
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname = 'public' and (p.proname like 'job\\_%' or p.proname like 'stage\\_%')`;
		const inSql = Object.fromEntries(rows.map((r) => [r.name, r.args.map((a, i) => `${a}:${r.types[i]}`)]));
		const normal = (type: string) =>
			({ text: 'text', 'text[]': 'text[]', integer: 'integer', real: 'real', timestamptz: 'timestamp with time zone' })[
				type
			] ?? type.replace(/^public\./, '');
		const inTs = Object.fromEntries(
			Object.entries(JOB_FUNCTIONS).map(([name, spec]) => [
				name,
				Object.entries(spec.args).map(([a, t]) => `${a}:${normal(t)}`),
			]),
		);
		expect(inTs).toEqual(inSql);
	});

	it('the job_* functions plan once per session, except the listings, the hold reasons and the rare calls (cron reclaims, limits, schedule sync, admin actions)', async () => {
		// A redefinition (create or replace) drops every SET it does not repeat: this catches one that forgot.
		const rows = await db.sql<{ name: string }[]>`
			select p.proname as name
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname = 'public' and p.proname like 'job\\_%'
			  and not ('plan_cache_mode=force_generic_plan' = any (coalesce(p.proconfig, '{}')))
			order by 1`;
		expect(rows.map((r) => r.name)).toEqual([
			'job_admin_kinds',
			'job_cancel_many',
			'job_delete_finished',
			'job_hold_reasons',
			'job_list_recent',
			'job_pause_kind',
			'job_phase_history',
			'job_reclaim_silent',
			'job_reclaim_stale',
			'job_resume_kind',
			'job_set_concurrency',
			'job_set_rate_limit',
			'job_sync_schedules',
		]);
	});
});
