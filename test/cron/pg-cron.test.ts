/**
 * The schedules under the real pg_cron (Debian's PostgreSQL 15 with
 * postgresql-15-cron 1.4, minute granularity: install_schedules falls back from
 * its 5-second reclaimer to one a minute): the migrations apply where pg_cron
 * is preloaded but not yet enabled, install_schedules creates the schedules once
 * it is, and a real cron run reclaims a stale job. Under CI=true a missing
 * installation is a failure, not a skip.
 */
import postgres from 'postgres';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingDebianPg15Cron, startDebianPg15 } from '../../src/local/postgres/debian-pg15.ts';
import type { LocalPostgres } from '../../src/local/postgres/embedded.ts';
import { listMigrations, prepareDatabase } from '../../src/local/postgres/migrate.ts';
import { as, createUser, serviceRole } from '../helpers/db.ts';
import { extensionsMigration } from '../../bin/templates.mjs';
import { ACCEPTED, REFUSED } from '../kick/cron-cases.ts';

const ci = process.env.CI === 'true' || process.env.CI === '1';
const missing = await missingDebianPg15Cron();

if (missing) {
	(ci ? it : it.skip)('Debian PostgreSQL 15 with pg_cron is installed', () => {
		throw new Error(missing);
	});
} else {
	describe('the schedules under the real pg_cron', () => {
		let server: LocalPostgres;
		let sql: postgres.Sql;
		const notices: string[] = [];

		beforeAll(async () => {
			server = await startDebianPg15({ cronDatabase: 'postgres' });
			await prepareDatabase(server.url);
			sql = postgres(server.url, { max: 4, onnotice: (n) => notices.push(String(n.message)) });
		});

		afterAll(async () => {
			await sql?.end({ timeout: 5 });
			await server?.stop();
		});

		it('the migrations apply where pg_cron is preloaded but not enabled, installing no schedules', async () => {
			const [row] = await sql`
				select to_regnamespace('cron') is null as no_cron, current_setting('server_version_num')::int / 10000 as major,
				       (select count(*)::int from supabase_migrations.schema_migrations) as migrations`;
			expect(row).toMatchObject({ no_cron: true, major: 15 });
			expect(row!.migrations).toBe((await listMigrations()).length);
			const [{ n }] = await sql`select supabase_jobs.install_schedules() as n`;
			expect(n).toBe(0);
			expect(notices.some((m) => m.includes('pg_cron is not enabled'))).toBe(true);
		});

		it('after create extension pg_cron, install_schedules creates the three schedules (the reclaimer every minute: pg_cron 1.4 refuses seconds, and says so) and again replaces them', async () => {
			// As a project does it: the migration `npx supabase-jobs init` writes creates the extension.
			await sql.unsafe(extensionsMigration({ version: 'test' }));
			const [ext] =
				await sql`select extnamespace::regnamespace::text as schema, extversion from pg_extension where extname = 'pg_cron'`;
			expect(ext!.schema).toBe('pg_catalog');
			const extversion = ext!.extversion as string;
			expect(extversion).toMatch(/^1\.[0-4]([.-]|$)/);
			notices.length = 0;
			expect((await sql`select supabase_jobs.install_schedules() as n`)[0]!.n).toBe(4);
			expect(notices).toContainEqual(
				expect.stringMatching(
					new RegExp(
						`pg_cron ${extversion} schedules in minutes only .* the reclaimer and the due wake-ups run every minute`,
					),
				),
			);
			const first = await sql`select jobid, jobname, schedule, command, active from cron.job order by jobname`;
			expect(first.map((j) => [j.jobname, j.schedule, j.active])).toEqual([
				['supabase-jobs-backstop', '* * * * *', true],
				['supabase-jobs-cleanup', '17 * * * *', true],
				['supabase-jobs-due', '* * * * *', true],
				['supabase-jobs-reclaim', '* * * * *', true],
			]);
			expect((await sql`select supabase_jobs.install_schedules() as n`)[0]!.n).toBe(4);
			const second = await sql`select jobid, jobname from cron.job order by jobname`;
			expect(second.map((j) => [j.jobid, j.jobname])).toEqual(first.map((j) => [j.jobid, j.jobname]));
		});

		it(
			'a pg_cron run of supabase-jobs-reclaim reclaims a job whose worker missed its declared heartbeat',
			{ timeout: 100_000 },
			async () => {
				const user = await createUser(sql);
				const [job] = await as(
					sql,
					serviceRole,
					(tx) => tx`select id from job_enqueue('thumbnail', owner_id => ${user.sub}::uuid)`,
				);
				const id = job!.id as string;
				await as(sql, serviceRole, (tx) => tx`select job_claim(${id}::uuid, heartbeat_ms => 5000)`);
				await sql`update public.jobs set heartbeat_at = now() - interval '1 hour' where id = ${id}`;

				// pg_cron 1.4 runs at minute boundaries: one bounded wait for the next one,
				// on the event itself — the requeue NOTIFY the reclaim's write sends.
				let requeued!: () => void;
				const heard = new Promise<void>((resolve) => (requeued = resolve));
				const listening = await sql.listen('supabase_jobs', (payload) => {
					const note = JSON.parse(payload) as { job_id?: string; reason?: string };
					if (note.job_id === id && note.reason === 'requeue') requeued();
				});
				try {
					let timer: ReturnType<typeof setTimeout> | undefined;
					const outOfTime = new Promise<never>((_, reject) => {
						timer = setTimeout(() => reject(new Error('no pg_cron reclaim within 75 s')), 75_000);
					});
					await Promise.race([heard, outOfTime]).finally(() => clearTimeout(timer));
				} finally {
					await listening.unlisten();
				}
				const [row] = await sql`select status::text from public.jobs where id = ${id}`;
				expect(row!.status).toBe('queued');
				// pg_cron records the run's end in its own transaction, just after the
				// reclaim commits (and sends the NOTIFY we woke on): read until it has.
				await expect
					.poll(
						async () =>
							(
								await sql`
								select d.status from cron.job_run_details d join cron.job j using (jobid)
								where j.jobname = 'supabase-jobs-reclaim'`
							).map((r) => r.status),
						{ timeout: 10_000, interval: 50 },
					)
					.toContain('succeeded');
			},
		);

		it('npx supabase-jobs doctor sees the pg_cron extension and its schedules', async () => {
			const run = await promisify(execFile)(process.execPath, [
				'bin/supabase-jobs.mjs',
				'doctor',
				'--db-url',
				server.url,
			]).then(
				(r) => r.stdout,
				(e: { stdout: string }) => e.stdout,
			);
			expect(run).toMatch(/^✓ pg_cron: extension pg_cron \d/m);
			expect(run).toMatch(/^✓ schedules: supabase-jobs-/m);
		});

		it('every expression the package accepts, real pg_cron accepts; every value out of range, name unknown or step without a range it refuses, pg_cron refuses too', async () => {
			await sql`create extension if not exists pg_cron`;
			// '$' (the last day of the month) arrived in pg_cron 1.6; this is 1.4.
			const accepted = ACCEPTED.filter((e) => !e.includes('$'));
			const pgCronTakes = async (expr: string) =>
				sql
					.begin(async (tx) => {
						await tx`select cron.schedule('supabase-jobs-probe', ${expr}, 'select 1')`;
						throw new Error('roll back');
					})
					.catch((e: { code?: string; message: string }) => {
						if (e.message === 'roll back') return true;
						if (e.code === '22023') return false;
						throw e;
					});
			for (const expr of accepted) expect(await pgCronTakes(expr), expr).toBe(true);
			const outOfRange = REFUSED.filter(([, why]) =>
				/(minute|hour|day of month|month|day of week) is \d+-\d+; got|not a .* name|takes no names|step without a range|five fields/.test(
					why,
				),
			)
				.map(([expr]) => expr)
				.filter((expr) => expr !== '0 0 * * * *' && expr !== '@reboot'); // pg_cron ignores a sixth field and takes @reboot (we refuse both)
			expect(outOfRange.length).toBeGreaterThan(10);
			for (const expr of outOfRange) expect(await pgCronTakes(expr), expr).toBe(false);
		});
	});
}
