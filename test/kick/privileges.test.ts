/**
 * The kick reads Vault as its owner; users can enqueue (which fires it) but can
 * neither call the privileged functions nor read the secrets or the settings.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { anon, as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';
import { queuedRequests, setWorkerSecrets } from './worker-secrets.ts';

let db: TestDatabase;
let user: Caller & { sub: string };

beforeAll(async () => {
	db = await useTestDatabase();
	user = await createUser(db.sql);
	await setWorkerSecrets(db.sql, 'http://127.0.0.1:9/worker');
});

const privileged = [
	`select supabase_jobs.kick('jobs', 'thumbnail')`,
	`select supabase_jobs.worker_endpoint()`,
	`select supabase_jobs.backstop()`,
	`select supabase_jobs.kick_due()`,
	`select * from supabase_jobs.due_wakeups`,
	`select * from supabase_jobs.reclaim_all('5 minutes')`,
	`select * from supabase_jobs.reclaim_table('jobs', null)`,
	`select * from supabase_jobs.cleanup()`,
	`select supabase_jobs.install_schedules()`,
	`select supabase_jobs.table_label('public.jobs')`,
];
const secretReads = [
	`select * from vault.decrypted_secrets`,
	`select * from vault.secrets`,
	`select vault.create_secret('x', 'y')`,
];

describe('users cannot reach the kick, the schedules or Vault', () => {
	for (const caller of [
		{ name: 'authenticated', caller: null as Caller | null },
		{ name: 'anon', caller: anon },
	]) {
		for (const statement of [
			...privileged,
			...secretReads,
			`select * from supabase_jobs.settings`,
			`update supabase_jobs.settings set stale_after = '1 second'`,
		]) {
			it(`${caller.name} is refused: ${statement}`, async () => {
				await expect(as(db.sql, caller.caller ?? user, (tx) => tx.unsafe(statement))).rejects.toMatchObject({
					code: '42501',
				});
			});
		}
	}

	it('service_role may not read the secret through worker_endpoint or install schedules', async () => {
		for (const statement of [
			`select supabase_jobs.worker_endpoint()`,
			`select supabase_jobs.install_schedules()`,
			`select * from vault.decrypted_secrets`,
		]) {
			await expect(as(db.sql, serviceRole, (tx) => tx.unsafe(statement))).rejects.toMatchObject({ code: '42501' });
		}
	});

	it('yet a user enqueue fires the kick, which reads Vault as its owner', async () => {
		await db.sql`delete from net.http_request_queue`;
		await as(db.sql, user, (tx) => tx`select job_enqueue('thumbnail')`);
		expect(await queuedRequests(db.sql)).toHaveLength(1);
	});

	it('the SECURITY DEFINER functions live in supabase_jobs with an empty search_path, executable by the owner only', async () => {
		const rows = await db.sql`
			select p.oid::regprocedure::text as fn, p.proconfig,
			       has_function_privilege('anon', p.oid, 'execute') as anon,
			       has_function_privilege('authenticated', p.oid, 'execute') as authenticated
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where p.prosecdef and n.nspname in ('public', 'supabase_jobs') order by 1`;
		expect(rows.map((r) => r.fn)).toEqual([
			// The demo's (src/demo/sql/document_uploads.sql): a user's upload kept beside its job.
			'keep_document_upload()',
			// A child's change moves its parent, which the child's owner may not update directly.
			'supabase_jobs.after_child_changed()',
			// Streamed output: deleted with its job; a worker's chunk sent on the job's topic.
			'supabase_jobs.after_jobs_deleted()',
			'supabase_jobs.after_jobs_inserted()',
			// A job's update: its message, its parent, a requeue's kick, its questions and its timeline, whoever changes it.
			'supabase_jobs.after_jobs_updated()',
			// Answering writes for the owner or an admin, after checking the caller (trying again and
			// replaying run as the caller: under RLS, the quota and the kind registry).
			'supabase_jobs.answer_question(text,uuid,text,jsonb)',
			// A job's timeline: its events are written and deleted with the job, whoever changes it (18_timeline.sql).
			'supabase_jobs.forget_job_timeline()',
			// Counts of running jobs behind a concurrency limit; for users, only through hold_of_job.
			'supabase_jobs.hold_of(text,text,text)',
			'supabase_jobs.hold_of_job(uuid)',
			// Recurring schedules: pg_cron's cron.schedule is the owner's to call (job_sync_schedules, service role).
			'supabase_jobs.install_recurring()',
			'supabase_jobs.kick(text,text,uuid,integer,text)',
			'supabase_jobs.kick_body(jsonb)',
			// A claim that finds a rate window full leaves a due wake-up, whoever claims.
			'supabase_jobs.leave_due_wakeup(timestamp with time zone,text,text)',
			'supabase_jobs.owns_job_topic(text)',
			// A batched claim or close (workers only) sends its rows' messages in one insert: the current rows of the ids it names.
			'supabase_jobs.send_statement_messages(text,uuid[])',
			'supabase_jobs.send_stream_chunk(supabase_jobs.job,jsonb)',
			// A pause lifted (by an admin, under RLS) wakes the worker through kick_body.
			'supabase_jobs.wake_resumed_kind()',
		]);
		for (const r of rows) {
			expect(r.proconfig).toContain('search_path=""');
			// owns_job_topic is the Realtime policy's check (20261130160500_realtime_broadcast.sql):
			// the policy runs as the joining user, so authenticated must be able to call it.
			// hold_of_job answers a user for their own job only (20261202100100_parent_child_jobs.sql).
			// answer_question checks the caller itself (16_questions_and_try_again.sql).
			const userCallable = [
				'supabase_jobs.answer_question(text,uuid,text,jsonb)',
				'supabase_jobs.hold_of_job(uuid)',
				'supabase_jobs.owns_job_topic(text)',
			].includes(r.fn);
			expect([r.anon, r.authenticated]).toEqual([false, userCallable]);
		}
	});
});
