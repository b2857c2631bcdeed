/**
 * The admin actions over the Data API, attacked: through the stand-in
 * (PostgREST's rules) with real supabase-js clients, a signed-in user and anon
 * call each admin function and reach for the tables behind them; every
 * attempt is refused and nothing changes.
 */
import { describe, expect, test } from 'vitest';
import { createUser } from '../helpers/db.ts';
import { useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();

const kind = 'rest-attack';

/** Each admin function with arguments it would accept from an admin. */
const CALLS: [string, Record<string, unknown>][] = [
	['job_cancel_many', { kind }],
	['job_pause_kind', { kind }],
	['job_resume_kind', { kind }],
	['job_set_rate_limit', { kind, starts: 1, per_ms: 1000 }],
	['job_delete_finished', { ended_before: new Date(Date.now() + 60_000).toISOString() }],
	['job_admin_kinds', {}],
];

async function state() {
	const jobs = await f.db
		.sql`select status::text, count(*)::int as n from jobs where kind = ${kind} group by 1 order by 1`;
	const limits = await f.db.sql`select * from supabase_jobs.kind_limits where kind = ${kind}`;
	return { jobs, limits };
}

describe('the admin actions over the Data API', () => {
	test('a signed-in user and anon are refused each admin function (42501), and nothing changes', async () => {
		const { sub } = await createUser(f.db.sql);
		await f.worker.enqueue(kind, { ownerId: sub });
		const done = await f.worker.enqueue(kind);
		await f.worker.claim(done.id);
		await f.worker.succeed(done.id);
		const before = await state();
		const user = f.client({ sub });
		const anon = f.client('anon');
		for (const [fn, args] of CALLS) {
			const asUser = await user.rpc(fn as never, args as never);
			expect([fn, asUser.error?.code]).toEqual([fn, '42501']);
			const asAnon = await anon.rpc(fn as never, args as never);
			expect([fn, asAnon.error?.code]).toEqual([fn, '42501']);
		}
		expect(await state()).toEqual(before);
	});

	test("the tables behind them are out of reach: supabase_jobs is not exposed (a job table refuses a user's delete: test/sql/admin-actions.test.ts)", async () => {
		const { sub } = await createUser(f.db.sql);
		const job = await f.worker.enqueue(kind, { ownerId: sub });
		await f.worker.cancel(job.id);
		const before = await state();
		for (const client of [f.client({ sub }), f.client('anon')]) {
			const limits = await client
				.schema('supabase_jobs' as never)
				.from('kind_limits')
				.insert({ job_table: 'jobs', kind, paused_at: new Date().toISOString() });
			expect(limits.error?.code).toBe('PGRST106');
		}
		expect(await state()).toEqual(before);
	});
});
