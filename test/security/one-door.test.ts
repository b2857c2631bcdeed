/**
 * One door per write: a job is inserted only by functions that run as their
 * caller, so that for a user (an admin included) the admission trigger
 * applies the owner's quota and the kind registry under RLS. No SECURITY
 * DEFINER function inserts a job or calls one of the insert paths (enqueue,
 * child, try again, replay), which would insert as the table owner, around them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

/** A function body that writes a job row, directly or through one of the insert paths. */
const INSERTS_A_JOB =
	/insert\s+into\s+supabase_jobs\.job\b(?!_)|\b(insert_job|insert_retry|insert_child|try_again|replay|job_enqueue\w*|job_try_again|job_replay)\s*\(/i;

describe('one door per write', () => {
	it('the functions that insert a job are exactly the four insert paths, and each runs as its caller', async () => {
		const rows = await db.sql<{ fn: string; definer: boolean }[]>`
			select n.nspname || '.' || p.proname as fn, p.prosecdef as definer
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname in ('public', 'supabase_jobs') and p.prosrc ~* 'insert\\s+into\\s+supabase_jobs\\.job\\M(?!_)'
			order by 1`;
		expect(rows).toEqual([
			{ fn: 'public.job_enqueue_many', definer: false },
			{ fn: 'supabase_jobs.insert_child', definer: false },
			{ fn: 'supabase_jobs.insert_job', definer: false },
			{ fn: 'supabase_jobs.insert_retry', definer: false },
		]);
	});

	it('no SECURITY DEFINER function inserts a job or calls an insert path (it would skip the quota and the kind registry)', async () => {
		const definers = await db.sql<{ fn: string; src: string }[]>`
			select p.oid::regprocedure::text as fn, p.prosrc as src
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname in ('public', 'supabase_jobs') and p.prosecdef order by 1`;
		expect(definers.length).toBeGreaterThan(5);
		expect(definers.filter((d) => INSERTS_A_JOB.test(d.src)).map((d) => d.fn)).toEqual([]);
		// The check sees an insert path when there is one.
		expect(INSERTS_A_JOB.test('perform supabase_jobs.insert_retry(old);')).toBe(true);
		expect(INSERTS_A_JOB.test('insert into supabase_jobs.job_question (job_id) values (1)')).toBe(false);
	});
});
