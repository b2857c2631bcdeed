/**
 * Recurring jobs declared in code: defineSchedule +
 * store.syncSchedules keep supabase_jobs.schedules and the cron entries equal
 * to the code's set; each run is a job row with an idempotency key per minute
 * slot, so no slot runs twice across cron runners or restarts.
 */
import { readFile } from 'node:fs/promises';
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

	it('defineSchedule refuses an expression pg_cron would refuse, naming the schedule and the field', () => {
		const e = (() => {
			try {
				defineSchedule({ name: 'nightly-report', kind: 'sweep', cron: '61 25 * * *' });
			} catch (x) {
				return x;
			}
		})();
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect(e).toMatchObject({ field: 'schedules["nightly-report"].cron', message: 'the minute is 0-59; got 61' });
		expect(() => defineSchedule({ name: 'x', kind: 'sweep', cron: '0 24 * * *' })).toThrow('the hour is 0-23; got 24');
		expect(() => defineSchedule({ name: 'Bad Name', kind: 'sweep', cron: '* * * * *' })).toThrow(/schedule name/);
		// In range, yet never due: pg_cron would store it and never run it.
		expect(() => defineSchedule({ name: 'feb-31', kind: 'sweep', cron: '0 0 31 2 *' })).toThrow(
			"'0 0 31 2 *' never runs: no date matches it",
		);
		expect(defineSchedule({ name: 'leap-day', kind: 'sweep', cron: '0 0 29 2 *' }).cron).toBe('0 0 29 2 *');
		expect(defineSchedule({ name: 'weekdays', kind: 'sweep', cron: '0 9 * jan-jun mon-fri' }).cron).toBe(
			'0 9 * jan-jun mon-fri',
		);
	});

	it.each([
		['61 25 * * *', 'the minute is 0-59; got 61'],
		['0 24 * * *', 'the hour is 0-23; got 24'],
		['0 0 32 * *', 'the day of month is 1-31; got 32'],
		['0 0 1 13 *', 'the month is 1-12; got 13'],
		['0 0 * * 8', 'the day of week is 0-7; got 8'],
		['every night', /five fields/],
	])('syncSchedules refuses %j before any SQL, naming the schedule; nothing changes', async (cron, sentence) => {
		const before = await entries();
		const rows = async () =>
			(await db.sql`select name, cron from supabase_jobs.schedules order by name`).map((r) => ({ ...r }));
		const stored = await rows();
		const e = await store
			.syncSchedules([
				{ name: 'fine', kind: 'sweep', cron: '0 3 * * *', params: {} },
				{ name: 'nightly-report', kind: 'sweep', cron, params: {} },
			])
			.catch((x: unknown) => x);
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect((e as InvalidJobInputError).field).toBe('schedules["nightly-report"].cron');
		expect((e as Error).message).toMatch(sentence);
		expect(await entries()).toEqual(before);
		expect(await rows()).toEqual(stored);
	});

	it('job_sync_schedules itself refuses "61 25 * * *" (SJ/22023 naming the schedule) and stores nothing', async () => {
		const before = await entries();
		const e = await db.sql`select job_sync_schedules(${db.sql.json([
			{ name: 'fine', kind: 'sweep', cron: '0 3 * * *' },
			{ name: 'nightly-report', kind: 'sweep', cron: '61 25 * * *' },
		])})`.catch((x: unknown) => x);
		expect(e).toMatchObject({
			code: '22023',
			message: 'the minute is 0-59; got 61',
			detail: 'field=schedules["nightly-report"].cron',
		});
		expect(await entries()).toEqual(before);
		expect(await db.sql`select name from supabase_jobs.schedules where name = 'fine'`).toEqual([]);
		// The table refuses it too, whoever writes it.
		await expect(
			db.sql`insert into supabase_jobs.schedules (name, kind, cron) values ('direct', 'sweep', '61 25 * * *')`,
		).rejects.toMatchObject({ code: '23514' });
	});

	it('a bad name is refused by its position, a duplicate by its name', async () => {
		const bad = await store
			.syncSchedules([{ name: 'Bad Name', kind: 'sweep', cron: '* * * * *', params: {} }])
			.catch((x: unknown) => x);
		expect(bad).toMatchObject({
			field: 'schedules[0].name',
			message: "a schedule name is 1 to 63 lowercase letters, digits, dots, dashes or underscores; got 'Bad Name'",
		});
		const sqlBad = await db.sql`select job_sync_schedules(${db.sql.json([
			{ name: 'Bad Name', kind: 'sweep', cron: '* * * * *' },
		])})`.catch((x: unknown) => x);
		expect(sqlBad).toMatchObject({ message: (bad as Error).message, detail: 'field=schedules[0].name' });
		const twice = await store
			.syncSchedules([
				{ name: 'same', kind: 'sweep', cron: '* * * * *', params: {} },
				{ name: 'same', kind: 'sweep', cron: '0 * * * *', params: {} },
			])
			.catch((x: unknown) => x);
		expect(twice).toMatchObject({ field: 'schedules', message: "two schedules are named 'same'" });
		const sqlTwice = await db.sql`select job_sync_schedules(${db.sql.json([
			{ name: 'same', kind: 'sweep', cron: '* * * * *' },
			{ name: 'same', kind: 'sweep', cron: '0 * * * *' },
		])})`.catch((x: unknown) => x);
		expect(sqlTwice).toMatchObject({
			code: '22023',
			message: "two schedules are named 'same'",
			detail: 'field=schedules',
		});
		const badKind = await db.sql`select job_sync_schedules(${db.sql.json([
			{ name: 'nightly-report', kind: '', cron: '* * * * *' },
		])})`.catch((x: unknown) => x);
		expect(badKind).toMatchObject({ code: '22023', detail: 'field=schedules["nightly-report"].kind' });
	});

	it('an expression whose days never come is refused where it is written only: job_sync_schedules stores it, as the guides say', async () => {
		expect(() => defineSchedule({ name: 'feb-30', kind: 'sweep', cron: '0 0 30 2 *' })).toThrow(/never runs/);
		await db.sql`select job_sync_schedules(${db.sql.json([{ name: 'feb-30', kind: 'sweep', cron: '0 0 30 2 *' }])})`;
		expect(await db.sql`select cron from supabase_jobs.schedules where name = 'feb-30'`).toEqual([
			{ cron: '0 0 30 2 *' },
		]);
		const guides = {
			en: 'the database does not check that, so a schedule written by SQL alone could be kept and never run',
			'pt-BR': 'o banco não verifica isso, então uma agenda escrita só por SQL poderia ser guardada e nunca rodar',
		};
		for (const [language, sentence] of Object.entries(guides)) {
			const text = await readFile(`docs/guide/${language}/operators.md`, 'utf8');
			expect(text.replace(/\s+/g, ' '), language).toContain(sentence);
		}
	});

	it('names, lists, ranges, steps, aliases and "$" are installed as written', async () => {
		const crons = ['0 9 * jan-jun mon-fri', '*/15 8-18 * * 1,3,5', '0 12 $ * *', '@daily', '0 0 * * 7'];
		await store.syncSchedules(crons.map((cron, i) => defineSchedule({ name: `shape-${i}`, kind: 'sweep', cron })));
		expect((await entries()).map((e) => e.schedule)).toEqual(crons);
		await store.syncSchedules([]);
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
