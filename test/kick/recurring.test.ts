/**
 * Recurring jobs declared in code (issue 15, item 5): defineSchedule +
 * store.syncSchedules keep supabase_jobs.schedules and the cron entries equal
 * to the code's set; each run is a job row with an idempotency key per minute
 * slot, so no slot runs twice across cron runners or restarts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { InvalidJobInputError, PermissionDeniedError } from '../../src/lib/errors.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { defineSchedule } from '../../src/lib/store/job-schedule.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { startDispatcher } from '../../src/local/dispatcher.ts';
import { createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let store: JobStore;

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
});

const entries = async () =>
	(
		await db.sql<{ jobname: string; schedule: string; command: string }[]>`
			select jobname, schedule, command from cron.job where jobname like 'supabase-jobs-schedule:%' order by jobname`
	).map((r) => ({ ...r }));

const report = defineJobKind({ name: 'report.build', params: z.object({ scope: z.enum(['all', 'mine']) }) });

describe('recurring jobs declared in code', () => {
	it('syncSchedules installs one cron entry per schedule, and a later sync replaces the set', async () => {
		expect(
			await store.syncSchedules([
				defineSchedule({ name: 'nightly-report', kind: report, cron: '0 2 * * *', params: { scope: 'all' } }),
				defineSchedule({ name: 'hourly-sweep', kind: 'sweep', cron: '5 * * * *' }),
			]),
		).toBe(2);
		expect(await entries()).toEqual([
			{
				jobname: 'supabase-jobs-schedule:hourly-sweep',
				schedule: '5 * * * *',
				command: "select supabase_jobs.run_schedule('hourly-sweep')",
			},
			{
				jobname: 'supabase-jobs-schedule:nightly-report',
				schedule: '0 2 * * *',
				command: "select supabase_jobs.run_schedule('nightly-report')",
			},
		]);
		await store.syncSchedules([
			defineSchedule({ name: 'nightly-report', kind: report, cron: '30 1 * * *', params: { scope: 'mine' } }),
		]);
		expect(await entries()).toEqual([
			{
				jobname: 'supabase-jobs-schedule:nightly-report',
				schedule: '30 1 * * *',
				command: "select supabase_jobs.run_schedule('nightly-report')",
			},
		]);
		const [row] = await db.sql`select params from supabase_jobs.schedules where name = 'nightly-report'`;
		expect(row!.params).toEqual({ scope: 'mine' });
	});

	it('a declared kind checks the params at startup, not at 2 a.m.', () => {
		expect(() =>
			defineSchedule({ name: 'x', kind: report, cron: '0 2 * * *', params: { scope: 'nobody' } as never }),
		).toThrow(InvalidJobInputError);
	});

	it('a bad cron expression or name is refused naming the schedule, and nothing changes', async () => {
		const before = await entries();
		const e = await store
			.syncSchedules([defineSchedule({ name: 'ok', kind: 'sweep', cron: 'every night' })])
			.catch((x) => x);
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect((e as InvalidJobInputError).field).toBe('schedules[0].cron');
		const bad = await store
			.syncSchedules([defineSchedule({ name: 'Bad Name', kind: 'sweep', cron: '* * * * *' })])
			.catch((x) => x);
		expect((bad as InvalidJobInputError).field).toBe('schedules[0].name');
		expect(await entries()).toEqual(before);
	});

	it('a due minute runs the schedule: a normal job row of its kind and params', async () => {
		await store.syncSchedules([
			defineSchedule({ name: 'every-minute', kind: 'sweep', cron: '* * * * *', params: { deep: true } }),
		]);
		const dispatcher = await startDispatcher({ url: db.url, pollIntervalMs: 60_000, cronTimer: false });
		try {
			const runs = await dispatcher.runDueSchedules(new Date());
			expect(runs.find((r) => r.jobname === 'supabase-jobs-schedule:every-minute')?.status).toBe('succeeded');
		} finally {
			await dispatcher.stop();
		}
		const jobs = await db.sql`select kind, params, status, idempotency_key from public.jobs where kind = 'sweep'`;
		expect(jobs).toHaveLength(1);
		expect(jobs[0]).toMatchObject({ kind: 'sweep', params: { deep: true }, status: 'queued' });
		expect(jobs[0]!.idempotency_key).toMatch(/^schedule:every-minute:\d{4}-\d\d-\d\dT\d\d:\d\dZ$/);
	});

	it('no slot runs twice: two runners firing the same minute make one job', async () => {
		await store.syncSchedules([defineSchedule({ name: 'twice', kind: 'twice.kind', cron: '* * * * *' })]);
		const slot = '2026-12-01T02:00:30Z';
		const clients = [db.connect({ max: 1 }), db.connect({ max: 1 })];
		try {
			const ids = await Promise.all(
				clients.map((sql) => sql`select supabase_jobs.run_schedule('twice', ${slot}) as id`),
			);
			expect(ids[0]![0]!.id).toBe(ids[1]![0]!.id);
		} finally {
			await Promise.all(clients.map((c) => c.end()));
		}
		const [{ n }] = await db.sql`select count(*)::int as n from public.jobs where kind = 'twice.kind'`;
		expect(n).toBe(1);
		// The next minute is another slot.
		await db.sql`select supabase_jobs.run_schedule('twice', '2026-12-01T02:01:00Z')`;
		const [{ m }] = await db.sql`select count(*)::int as m from public.jobs where kind = 'twice.kind'`;
		expect(m).toBe(2);
	});

	it('a user cannot sync schedules (service role only)', async () => {
		const user = await createUser(db.sql);
		const userStore = new JobStore(postgresAdapter(db.sql, { claims: { sub: user.sub, role: 'authenticated' } }));
		expect(await userStore.syncSchedules([]).catch((x) => x)).toBeInstanceOf(PermissionDeniedError);
	});
});
