/**
 * What the cron schedules run: backstop wake-ups, reclaim over every job table,
 * cleanup, the settings they read, and install_schedules (here against the
 * stand-in cron; test/cron/pg-cron.test.ts runs them under real pg_cron).
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type postgres from 'postgres';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';
import { enqueueFor, runningJob, waitingJob } from './job-fixtures.ts';
import { clearRequestQueue, queuedRequests, removeWorkerSecrets, setWorkerSecrets } from './worker-secrets.ts';
import { createJobTable } from '../store/harness.ts';

let db: TestDatabase;
let user: Caller & { sub: string };

beforeAll(async () => {
	db = await useTestDatabase();
	user = await createUser(db.sql);
	await createJobTable(db.sql, 'exports'); // users invent kinds in it
});

beforeEach(async () => {
	await setWorkerSecrets(db.sql, 'http://127.0.0.1:9/worker');
	// Each test starts from empty job tables and an empty request queue.
	await db.sql`delete from public.jobs`;
	await db.sql`delete from public.exports`;
	await db.sql`delete from supabase_jobs.due_wakeups`;
	await clearRequestQueue(db.sql);
});

describe('supabase_jobs.backstop', () => {
	it('wakes the worker once per table and kind for jobs claimable longer than backstop_after', async () => {
		await waitingJob(db.sql, user, 'thumbnail', '2 minutes');
		await waitingJob(db.sql, user, 'thumbnail', '3 minutes');
		await waitingJob(db.sql, user, 'csv', '2 minutes', 'exports');
		await enqueueFor(db.sql, user, 'fresh');
		await clearRequestQueue(db.sql);
		const [{ sent }] = await as(db.sql, serviceRole, (tx) => tx`select supabase_jobs.backstop() as sent`);
		expect(sent).toBe(2);
		expect((await queuedRequests(db.sql)).map((r) => r.body)).toEqual([
			{ job_id: null, job_table: 'exports', kind: 'csv', count: 1, reason: 'backstop' },
			{ job_id: null, job_table: 'jobs', kind: 'thumbnail', count: 2, reason: 'backstop' },
		]);
	});

	it('does nothing for jobs that are running, finished, fresh or not yet available', async () => {
		await runningJob(db.sql, user, 'busy', '1 hour');
		await enqueueFor(db.sql, user, 'fresh');
		await as(
			db.sql,
			serviceRole,
			(tx) =>
				tx`insert into public.jobs (kind, owner_id, available_at) values ('later', ${user.sub}, now() + interval '1 hour')`,
		);
		await clearRequestQueue(db.sql);
		const [{ sent }] = await as(db.sql, serviceRole, (tx) => tx`select supabase_jobs.backstop() as sent`);
		expect(sent).toBe(0);
		expect(await queuedRequests(db.sql)).toEqual([]);
	});

	it('follows settings.backstop_after', async () => {
		await waitingJob(db.sql, user, 'thumbnail', '10 seconds');
		await clearRequestQueue(db.sql);
		expect((await db.sql`select supabase_jobs.backstop() as sent`)[0]!.sent).toBe(0);
		await as(db.sql, serviceRole, (tx) => tx`update supabase_jobs.settings set backstop_after = '5 seconds'`);
		try {
			expect((await db.sql`select supabase_jobs.backstop() as sent`)[0]!.sent).toBe(1);
		} finally {
			await db.sql`update supabase_jobs.settings set backstop_after = default`;
		}
	});

	it('sends nothing and raises nothing without the Vault secrets', async () => {
		await waitingJob(db.sql, user, 'thumbnail', '2 minutes');
		await removeWorkerSecrets(db.sql);
		await clearRequestQueue(db.sql);
		const [{ sent }] = await db.sql`select supabase_jobs.backstop() as sent`;
		expect(sent).toBe(0);
		expect(await queuedRequests(db.sql)).toEqual([]);
	});
});

describe('supabase_jobs.reclaim_all', () => {
	it('reclaims stale jobs in every job table and leaves live ones alone', async () => {
		const stale = await runningJob(db.sql, user, 'thumbnail', '10 minutes');
		const staleExport = await runningJob(db.sql, user, 'csv', '10 minutes', 'exports');
		const live = await runningJob(db.sql, user, 'thumbnail', '10 seconds');
		const rows = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select * from supabase_jobs.reclaim_all('5 minutes') order by job_table`,
		);
		expect(rows.map((r) => ({ ...r }))).toEqual([
			{ job_table: 'exports', id: staleExport, status: 'queued' },
			{ job_table: 'jobs', id: stale, status: 'queued' },
		]);
		const statuses = await db.sql`select id, status from public.jobs order by status`;
		expect(Object.fromEntries(statuses.map((r) => [r.id, r.status]))).toEqual({ [stale]: 'queued', [live]: 'running' });
	});

	it('closes a stale job whose attempts are spent as failed with a sentence for the user', async () => {
		const [job] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select id from job_enqueue('thumbnail', max_attempts => 1, owner_id => ${user.sub}::uuid)`,
		);
		const id = job!.id as string;
		await as(db.sql, serviceRole, (tx) => tx`select job_claim(${id}::uuid)`);
		await db.sql`update public.jobs set heartbeat_at = now() - interval '1 hour' where id = ${id}`;
		const rows = await db.sql`select * from supabase_jobs.reclaim_all('5 minutes')`;
		expect(rows.map((r) => ({ ...r }))).toEqual([{ job_table: 'jobs', id, status: 'failed' }]);
		const [closed] = await db.sql`select error_code, error from public.jobs where id = ${id}`;
		expect(closed!.error_code).toBe('worker_lost');
		expect(closed!.error).toMatch(/stopped unexpectedly/);
	});

	it('without stale_after it guesses nothing: only jobs whose worker missed its declared heartbeat are reclaimed', async () => {
		const bare = await runningJob(db.sql, user, 'thumbnail', '1 day');
		const declared = await runningJob(db.sql, user, 'thumbnail', '1 minute', 'jobs', 5000);
		const rows = await db.sql`select * from supabase_jobs.reclaim_all(null)`;
		expect(rows.map((r) => r.id)).toEqual([declared]);
		expect((await db.sql`select status from public.jobs where id = ${bare}`)[0]!.status).toBe('running');
		await db.sql`update public.jobs set status = 'cancelled' where id = ${bare}`;
		await expect(db.sql`select * from supabase_jobs.reclaim_all('-1 minute')`).rejects.toMatchObject({ code: '22023' });
	});

	it('the reclaim schedule reads stale_after from supabase_jobs.settings', async () => {
		const id = await runningJob(db.sql, user, 'thumbnail', '2 minutes');
		const [{ command }] = await db.sql`select command from cron.job where jobname = 'supabase-jobs-reclaim'`;
		await db.sql.unsafe(command);
		expect((await db.sql`select status from public.jobs where id = ${id}`)[0]!.status).toBe('running');
		await db.sql`update supabase_jobs.settings set stale_after = '1 minute'`;
		try {
			await db.sql.unsafe(command);
			expect((await db.sql`select status from public.jobs where id = ${id}`)[0]!.status).toBe('queued');
		} finally {
			await db.sql`update supabase_jobs.settings set stale_after = default`;
		}
	});
});

describe('the reclaim entry point apps call does what the reclaim schedule does', () => {
	/** Jobs in every state a reclaim pass looks at, in public.jobs. */
	async function scenario() {
		const declared = await runningJob(db.sql, user, 'thumbnail', '1 minute', 'jobs', 5000);
		const bare = await runningJob(db.sql, user, 'thumbnail', '1 hour');
		const live = await runningJob(db.sql, user, 'thumbnail', '1 second', 'jobs', 5000);
		const [spent] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select id from job_enqueue('thumbnail', max_attempts => 1, owner_id => ${user.sub}::uuid)`,
		);
		await as(db.sql, serviceRole, (tx) => tx`select job_claim(${spent!.id}::uuid, heartbeat_ms => 5000)`);
		await db.sql`update public.jobs set heartbeat_at = now() - interval '1 minute' where id = ${spent!.id}`;
		const [expired] = await as(
			db.sql,
			serviceRole,
			(tx) =>
				tx`select id from job_enqueue('thumbnail', owner_id => ${user.sub}::uuid, run_at => now() - interval '1 hour', expire_after => '1 minute')`,
		);
		const [fresh] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select id from job_enqueue('thumbnail', owner_id => ${user.sub}::uuid, expire_after => '1 hour')`,
		);
		return {
			declared,
			bare,
			live,
			spent: spent!.id as string,
			expired: expired!.id as string,
			fresh: fresh!.id as string,
		};
	}

	const states = async () =>
		(await db.sql`select id, status, error_code, attempts from public.jobs order by id`).map((r) => ({ ...r }));

	/** What a pass does to the scenario, rolled back so the next pass starts from the same rows. */
	async function afterPass(pass: (tx: postgres.TransactionSql) => Promise<unknown>) {
		let after: Awaited<ReturnType<typeof states>> = [];
		await db.sql
			.begin(async (tx) => {
				await pass(tx);
				after = (await tx`select id, status, error_code, attempts from public.jobs order by id`).map((r) => ({ ...r }));
				throw new Error('roll back');
			})
			.catch((e: Error) => {
				if (e.message !== 'roll back') throw e;
			});
		return after;
	}

	for (const staleAfter of [null, '10 minutes']) {
		it(`job_reclaim_silent and the schedule's command leave the same rows (settings.stale_after ${staleAfter ?? 'null'})`, async () => {
			const ids = await scenario();
			await db.sql`update supabase_jobs.settings set stale_after = ${staleAfter}::interval`;
			try {
				const before = await states();
				const [{ command }] = await db.sql`select command from cron.job where jobname = 'supabase-jobs-reclaim'`;
				const bySchedule = await afterPass((tx) => tx.unsafe(command as string));
				const byApp = await afterPass((tx) =>
					tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role":"service_role"}', true)`.then(
						() => tx`select * from job_reclaim_silent()`,
					),
				);
				expect(byApp).toEqual(bySchedule);
				expect(byApp).not.toEqual(before);
				const status = Object.fromEntries(byApp.map((r) => [r.id, r.status]));
				expect(status).toMatchObject({
					[ids.declared]: 'queued',
					[ids.live]: 'running',
					[ids.spent]: 'failed',
					[ids.expired]: 'failed',
					[ids.fresh]: 'queued',
					[ids.bare]: staleAfter === null ? 'running' : 'queued',
				});
				expect(byApp.find((r) => r.id === ids.expired)!.error_code).toBe('expired');
			} finally {
				await db.sql`update supabase_jobs.settings set stale_after = default`;
			}
		});
	}

	it('both run one SQL function: reclaim_table', async () => {
		const bodies = await db.sql<{ name: string; body: string }[]>`
			select p.proname as name, p.prosrc as body from pg_proc p
			 where p.oid in ('supabase_jobs.reclaim_all(interval)'::regprocedure, 'public.job_reclaim_silent(text)'::regprocedure)
			 order by 1`;
		expect(bodies.map((b) => [b.name, /supabase_jobs\.reclaim_table\(/.test(b.body)])).toEqual([
			['job_reclaim_silent', true],
			['reclaim_all', true],
		]);
	});
});

describe('supabase_jobs.kick_due: a job queued for later wakes the worker at its time', () => {
	it('an enqueue with run_at leaves a due wake-up; kick_due sends it once due, once', async () => {
		await as(
			db.sql,
			serviceRole,
			(tx) =>
				tx`select id from job_enqueue('later', owner_id => ${user.sub}::uuid, run_at => now() + interval '1 hour')`,
		);
		await clearRequestQueue(db.sql);
		const [owed] =
			await db.sql`select due_at > now() as later, job_table, kind from supabase_jobs.due_wakeups where kind = 'later'`;
		expect({ ...owed }).toEqual({ later: true, job_table: 'jobs', kind: 'later' });
		expect((await db.sql`select supabase_jobs.kick_due() as sent`)[0]!.sent).toBe(0);
		await db.sql`update supabase_jobs.due_wakeups set due_at = now() - interval '1 second' where kind = 'later'`;
		expect((await db.sql`select supabase_jobs.kick_due() as sent`)[0]!.sent).toBe(1);
		expect((await queuedRequests(db.sql)).map((r) => r.body)).toEqual([
			{ job_id: null, job_table: 'jobs', kind: 'later', count: 1, reason: 'due' },
		]);
		expect((await db.sql`select supabase_jobs.kick_due() as sent`)[0]!.sent).toBe(0);
	});

	it('a retry with a backoff leaves a due wake-up at its available_at; one claimable now leaves none', async () => {
		const id = await runningJob(db.sql, user, 'flaky', '1 second');
		await db.sql`delete from supabase_jobs.due_wakeups`;
		await as(db.sql, serviceRole, (tx) => tx`select job_retry(${id}::uuid, 'boom', delay => '30 seconds')`);
		const [row] = await db.sql`select available_at from public.jobs where id = ${id}`;
		const owed = await db.sql`select due_at from supabase_jobs.due_wakeups`;
		expect(owed.map((w) => (w.due_at as Date).getTime())).toEqual([(row!.available_at as Date).getTime()]);
		const now = await runningJob(db.sql, user, 'flaky-now', '1 second');
		await as(db.sql, serviceRole, (tx) => tx`select job_release(${now}::uuid)`);
		expect(await db.sql`select kind from supabase_jobs.due_wakeups where kind = 'flaky-now'`).toEqual([]);
	});

	it("a claim that fills a kind's rate window, with jobs of it still queued, leaves one due wake-up for when it frees a start", async () => {
		await as(db.sql, serviceRole, (tx) => tx`select job_set_rate_limit('metered', 1, 60000)`);
		try {
			const first = await enqueueFor(db.sql, user, 'metered');
			await enqueueFor(db.sql, user, 'metered');
			await db.sql`delete from supabase_jobs.due_wakeups`;
			const claim = () =>
				as(db.sql, serviceRole, (tx) => tx`select id from job_claim_next(kinds => '{metered}', "limit" => 2)`);
			expect((await claim()).map((r) => r.id)).toEqual([first]);
			const owed = () =>
				db.sql`select due_at - now() > interval '50 seconds' as later, job_table, kind from supabase_jobs.due_wakeups`;
			expect((await owed()).map((w) => ({ ...w }))).toEqual([{ later: true, job_table: 'jobs', kind: 'metered' }]);
			// Claiming again while the window is full starts nothing and leaves no second wake-up.
			expect(await claim()).toEqual([]);
			expect(await owed()).toHaveLength(1);
		} finally {
			await as(db.sql, serviceRole, (tx) => tx`select job_set_rate_limit('metered', null, null)`);
		}
	});

	it('where nothing would send them (no pg_net), no due wake-up is left to pile up', async () => {
		const left = await db.sql
			.begin(async (tx) => {
				await tx`alter schema net rename to net_absent`;
				await tx`select job_enqueue('nowhere', run_at => now() + interval '1 hour')`;
				const rows = await tx`select kind from supabase_jobs.due_wakeups where kind = 'nowhere'`;
				throw Object.assign(new Error('roll back'), { rows });
			})
			.catch((e: Error & { rows?: unknown[] }) => {
				if (!e.rows) throw e;
				return e.rows;
			});
		expect(left).toEqual([]);
	});

	it('a queued job rescheduled to later leaves a due wake-up at its new time; rescheduled to now, it wakes the worker at once', async () => {
		const id = await enqueueFor(db.sql, user, 'moved');
		await db.sql`delete from supabase_jobs.due_wakeups`;
		await clearRequestQueue(db.sql);
		const [moved] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select available_at from job_reschedule(${id}::uuid, delay => '10 minutes')`,
		);
		const owed = await db.sql`select due_at, kind from supabase_jobs.due_wakeups`;
		expect(owed.map((w) => [(w.due_at as Date).getTime(), w.kind])).toEqual([
			[(moved!.available_at as Date).getTime(), 'moved'],
		]);
		await as(db.sql, serviceRole, (tx) => tx`select job_reschedule(${id}::uuid, run_at => now())`);
		expect((await queuedRequests(db.sql)).map((r) => r.body)).toEqual([
			expect.objectContaining({ job_id: id, kind: 'moved', reason: 'requeue' }),
		]);
	});
});

describe('due wake-ups are bounded per job', () => {
	const owed = async (kind: string) =>
		(await db.sql`select due_at from supabase_jobs.due_wakeups where kind = ${kind} order by due_at`).map((w) =>
			(w.due_at as Date).getTime(),
		);
	const availableAt = async (id: string) =>
		((await db.sql`select available_at from public.jobs where id = ${id}`)[0]!.available_at as Date).getTime();

	it('a job rescheduled 50 times far into the future leaves one due wake-up, at its latest time', async () => {
		const kind = `far.${Date.now()}`;
		const [{ id }] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select id from job_enqueue(${kind}, run_at => now() + interval '1 year')`,
		);
		for (let day = 1; day <= 50; day++)
			await as(
				db.sql,
				serviceRole,
				(tx) => tx`select job_reschedule(${id}::uuid, delay => ${`${day * 30} days`}::interval)`,
			);
		expect(await owed(kind)).toEqual([await availableAt(id)]);
		// Rescheduled to now, it is woken at once and owes no wake-up later.
		await as(db.sql, serviceRole, (tx) => tx`select job_reschedule(${id}::uuid, run_at => now())`);
		expect(await owed(kind)).toEqual([]);
	});

	it('a time two jobs share keeps its wake-up when one of them moves', async () => {
		const kind = `shared.${Date.now()}`;
		const [{ at }] = await db.sql`select now() + interval '1 day' as at`;
		const ids = await as(
			db.sql,
			serviceRole,
			async (tx) =>
				[
					(await tx`select id from job_enqueue(${kind}, run_at => ${at})`)[0]!.id,
					(await tx`select id from job_enqueue(${kind}, run_at => ${at})`)[0]!.id,
				] as string[],
		);
		expect(await owed(kind)).toEqual([(at as Date).getTime()]);
		await as(db.sql, serviceRole, (tx) => tx`select job_reschedule(${ids[0]!}::uuid, delay => '2 days')`);
		expect(await owed(kind)).toEqual([(at as Date).getTime(), await availableAt(ids[0]!)]);
		await as(db.sql, serviceRole, (tx) => tx`select job_reschedule(${ids[0]!}::uuid, delay => '3 days')`);
		expect(await owed(kind)).toEqual([(at as Date).getTime(), await availableAt(ids[0]!)]);
	});
});

describe('supabase_jobs.cleanup', () => {
	it('deletes cron history older than cron_history_retention and keeps the rest', async () => {
		await db.sql`delete from cron.job_run_details`;
		await db.sql`
			insert into cron.job_run_details (jobid, command, status, start_time, end_time) values
			  (1, 'old', 'succeeded', now() - interval '8 days', now() - interval '8 days'),
			  (1, 'recent', 'succeeded', now() - interval '1 day', now() - interval '1 day')`;
		const rows = await db.sql`select * from supabase_jobs.cleanup()`;
		expect(rows.map((r) => ({ ...r }))).toEqual([{ what: 'cron.job_run_details', deleted: '1' }]);
		expect((await db.sql`select command from cron.job_run_details`).map((r) => r.command)).toEqual(['recent']);
	});

	it('keeps finished jobs unless finished_retention is set, then deletes only old finished ones', async () => {
		const oldDone = await runningJob(db.sql, user, 'thumbnail', '1 second');
		await as(db.sql, serviceRole, (tx) => tx`select job_succeed(${oldDone}::uuid)`);
		await db.sql`alter table supabase_jobs.job disable trigger guard_job_update`;
		await db.sql`update public.jobs set finished_at = now() - interval '40 days' where id = ${oldDone}`;
		await db.sql`alter table supabase_jobs.job enable trigger guard_job_update`;
		const recentDone = await runningJob(db.sql, user, 'thumbnail', '1 second');
		await as(db.sql, serviceRole, (tx) => tx`select job_succeed(${recentDone}::uuid)`);
		const queued = await enqueueFor(db.sql, user, 'thumbnail');

		await db.sql`select * from supabase_jobs.cleanup()`;
		expect((await db.sql`select count(*)::int as n from public.jobs`)[0]!.n).toBe(3);

		await db.sql`update supabase_jobs.settings set finished_retention = '30 days'`;
		try {
			const rows = await db.sql`select * from supabase_jobs.cleanup() where what <> 'cron.job_run_details'`;
			expect(rows.map((r) => ({ ...r }))).toEqual([
				{ what: 'exports', deleted: '0' },
				{ what: 'jobs', deleted: '1' },
			]);
			expect((await db.sql`select id from public.jobs order by id`).map((r) => r.id).sort()).toEqual(
				[recentDone, queued].sort(),
			);
		} finally {
			await db.sql`update supabase_jobs.settings set finished_retention = default`;
		}
	});
});

describe('supabase_jobs.install_schedules', () => {
	it('the migration installed the four schedules, the reclaimer and the due wake-ups every 5 seconds (the stand-in plays pg_cron 1.6)', async () => {
		const jobs = await db.sql`select jobname, schedule, command from cron.job order by jobname`;
		expect(jobs.map((j) => [j.jobname, j.schedule])).toEqual([
			['supabase-jobs-backstop', '* * * * *'],
			['supabase-jobs-cleanup', '17 * * * *'],
			['supabase-jobs-due', '5 seconds'],
			['supabase-jobs-reclaim', '5 seconds'],
		]);
	});

	it('where pg_cron refuses a seconds schedule (before 1.5), the reclaimer and the due wake-ups run every minute, and a notice says so', async () => {
		const notices: string[] = [];
		const sql = db.connect({ max: 1, onnotice: (n) => notices.push(String(n.message)) });
		await sql
			.begin(async (tx) => {
				// pg_cron 1.4's answer to '5 seconds', played by the stand-in's schedule check.
				await tx`create or replace function cron.check_schedule(schedule text) returns void language plpgsql set search_path = '' as $$
				begin
				  if schedule like '%second%' then
				    raise exception using errcode = 'invalid_parameter_value', message = 'invalid schedule: ' || schedule;
				  end if;
				end $$`;
				const [{ n }] = await tx`select supabase_jobs.install_schedules() as n`;
				expect(n).toBe(4);
				const minutes = await tx`select jobname from cron.job where schedule = '* * * * *' order by jobname`;
				expect(minutes.map((j) => j.jobname)).toEqual([
					'supabase-jobs-backstop',
					'supabase-jobs-due',
					'supabase-jobs-reclaim',
				]);
				await tx`select 1/0`.catch(() => {});
			})
			.catch(() => {});
		expect(notices).toContainEqual(
			expect.stringMatching(/schedules in minutes only .* the reclaimer and the due wake-ups run every minute/),
		);
		const [job] = await db.sql`select schedule from cron.job where jobname = 'supabase-jobs-reclaim'`;
		expect(job!.schedule, 'rolled back').toBe('5 seconds');
	});

	it('is idempotent: running it again replaces, never duplicates', async () => {
		await db.sql`update cron.job set schedule = '*/5 * * * *' where jobname = 'supabase-jobs-backstop'`;
		const [{ n }] = await db.sql`select supabase_jobs.install_schedules() as n`;
		expect(n).toBe(4);
		const jobs = await db.sql`select jobname, schedule from cron.job order by jobname`;
		expect(jobs).toHaveLength(4);
		expect(jobs[0]!.schedule).toBe('* * * * *');
	});

	it('returns 0 with a notice where pg_cron is absent', async () => {
		const notices: string[] = [];
		const sql = db.connect({ max: 1, onnotice: (n) => notices.push(String(n.message)) });
		await sql.begin(async (tx) => {
			await tx`alter schema cron rename to cron_absent`;
			const [{ n }] = await tx`select supabase_jobs.install_schedules() as n`;
			expect(n).toBe(0);
			await tx`alter schema cron_absent rename to cron`;
		});
		expect(notices.some((m) => m.includes('pg_cron is not enabled'))).toBe(true);
	});
});

describe('supabase_jobs.settings', () => {
	it('service_role reads and changes the settings; the checks refuse nonsense', async () => {
		const [settings] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select stale_after, backstop_after, kick_timeout_ms, finished_retention from supabase_jobs.settings`,
		);
		expect({ ...settings }).toEqual({
			stale_after: null,
			backstop_after: '00:00:30',
			kick_timeout_ms: 5000,
			finished_retention: null,
		});
		await expect(
			as(db.sql, serviceRole, (tx) => tx`update supabase_jobs.settings set stale_after = '0 seconds'`),
		).rejects.toMatchObject({ code: '23514' });
		await expect(db.sql`insert into supabase_jobs.settings (id) values (false)`).rejects.toMatchObject({
			code: '23514',
		});
	});
});
