/**
 * Where a runWorkers drain spends the server's time, function by function
 * (not part of `npm run bench`): starts embedded PostgreSQL with
 * track_functions = 'all', drains BENCH_PROBE_SIZES jobs with `ours`, and
 * prints pg_stat_user_functions per job, with the Node process's CPU per job.
 */
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase } from '../src/local/postgres/migrate.ts';
import postgres from 'postgres';
import { ours } from './ours.ts';

const n = Number(process.env.BENCH_PROBE_SIZES ?? 20000);
const pg = await startLocalPostgres();
const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
await admin.unsafe(`alter system set track_functions = 'all'`);
await admin.unsafe(`select pg_reload_conf()`);
await admin.unsafe(`create database probe_fn`);
const url = withDatabase(pg.url, 'probe_fn');
const db = postgres(url, { max: 1, onnotice: () => {} });
const s = ours(url, 'probe');
try {
	await s.setup();
	// An experiment's SQL (BENCH_FN_SQL), run once after setup: a setting, a function redefined.
	if (process.env.BENCH_FN_SQL) await db.unsafe(process.env.BENCH_FN_SQL);
	await s.reset();
	await db.unsafe(`select pg_stat_reset()`);
	const cpu = process.cpuUsage();
	const ms = await s.process(n, 8);
	const used = process.cpuUsage(cpu);
	console.log(
		`${n} jobs: ${Math.round((n / ms) * 1000)} jobs/s, Node CPU ${((used.user + used.system) / n).toFixed(0)} us/job`,
	);
	await new Promise((r) => setTimeout(r, 1500)); // the backends report their counters at most once a second
	await db.unsafe(`select pg_stat_force_next_flush()`).catch(() => {});
	const rows = await db.unsafe<{ f: string; calls: string; total: number; self: number }[]>(
		`select schemaname || '.' || funcname as f, calls, total_time as total, self_time as self
		   from pg_stat_user_functions order by total_time desc limit 25`,
	);
	for (const r of rows)
		console.log(
			`${r.f.padEnd(48)} calls ${String(r.calls).padStart(7)}  total ${((r.total * 1000) / n).toFixed(1).padStart(6)} us/job  self ${((r.self * 1000) / n).toFixed(1).padStart(6)} us/job`,
		);
} finally {
	await s.close();
	await db.end();
	await admin.end();
	await pg.stop();
}
