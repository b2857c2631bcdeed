/**
 * What recording a job's timeline costs on the per-job path (claim + succeed
 * by id, through JobStore over postgres.js, as the edge worker runs it), on
 * three databases of one server:
 *  - plain:   the schema with record_job_event doing nothing;
 *  - compact: the schema as it is (after_jobs_updated records only a change
 *             that erases something: retry, reclaim, release, parking, cancel);
 *  - full:    one job_events row for every status change (a trigger of its
 *             own, record_job_event doing nothing).
 *
 *   npx tsx bench/timeline-cost.ts setup          # starts a server, prints the 3 URLs, runs until killed
 *   npx tsx bench/timeline-cost.ts run <url> [n]  # n jobs (default 2000): enqueue untimed, then claim + succeed each
 *   npx tsx bench/timeline-cost.ts rounds [n] [r] # all three in one process, r interleaved rounds, medians
 *   npx tsx bench/timeline-cost.ts solo <variant> [n] # its own server, one variant: for a whole-process A/B
 *
 * `run` prints one JSON line: {jobs, ms, perJobUs}. `rounds` also reads the
 * CPU the server process serving the loop spent (/proc/<pid>/stat; Linux), which
 * other load on the machine does not inflate. `solo` starts and stops its own
 * server, so a whole-process timer (e.g. /usr/bin/time, hyperfine) pairing
 * `solo plain` with `solo compact` counts the server's CPU too.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { postgresAdapter } from '../src/lib/adapters/postgres.ts';
import { JobStore } from '../src/lib/store/job-store.ts';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { applyCompat, applySchemaFiles } from '../src/local/postgres/migrate.ts';

const VARIANTS = ['plain', 'compact', 'full'] as const;

const FULL_TRIGGER = `
  alter table supabase_jobs.job_events drop constraint job_events_event;
  create or replace function supabase_jobs.record_job_event(old_row supabase_jobs.job, new_row supabase_jobs.job)
  returns void language plpgsql set search_path = '' as $$ begin end $$;
  create or replace function supabase_jobs.record_every_change() returns trigger
  language plpgsql security definer set search_path = '' as $$
  begin
    insert into supabase_jobs.job_events (job_id, job_table, event, attempt, started_at, progress, error, error_code, actor)
    values (new.id, new.job_table, new.status::text, new.attempts, old.started_at, old.progress, new.error, new.error_code,
            coalesce((select auth.uid())::text, (select auth.jwt()) ->> 'role', session_user::text));
    return null;
  end $$;
  create trigger record_job_event after update of status on supabase_jobs.job for each row
    when (old.status is distinct from new.status) execute function supabase_jobs.record_every_change();`;

function withDatabase(url: string, name: string): string {
	const u = new URL(url);
	u.pathname = `/${name}`;
	return u.toString();
}

async function setup(pg?: Awaited<ReturnType<typeof startLocalPostgres>>): Promise<Record<string, string>> {
	pg ??= await startLocalPostgres();
	const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
	await admin.unsafe('create database tl_compact');
	const compact = withDatabase(pg.url, 'tl_compact');
	await applyCompat(compact);
	await applySchemaFiles(compact);
	await admin.unsafe('create database tl_plain template tl_compact');
	await admin.unsafe('create database tl_full template tl_compact');
	await admin.end();
	const urls = { plain: withDatabase(pg.url, 'tl_plain'), compact, full: withDatabase(pg.url, 'tl_full') };
	const plain = postgres(urls.plain, { max: 1, onnotice: () => {} });
	await plain.unsafe(`create or replace function supabase_jobs.record_job_event(old_row supabase_jobs.job, new_row supabase_jobs.job)
  returns void language plpgsql set search_path = '' as $$ begin end $$;`);
	await plain.end();
	const full = postgres(urls.full, { max: 1, onnotice: () => {} });
	await full.unsafe(FULL_TRIGGER);
	await full.end();
	return urls;
}

/** CPU seconds (user + system) a process has spent, from /proc (Linux clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
	const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
	return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Enqueues n jobs (untimed), then claims and succeeds each by id, one after the other; returns ms. */
async function perJob(sql: postgres.Sql, n: number, cpu?: { backend: number; spent: number[] }): Promise<number> {
	const store = new JobStore(postgresAdapter(sql));
	const ids = (
		await sql<
			{ id: string }[]
		>`insert into jobs (kind) select 'bench.timeline' from generate_series(1, ${n}) returning id`
	).map((r) => r.id);
	const cpuBefore = cpu ? cpuSeconds(cpu.backend) : 0;
	const started = performance.now();
	for (const id of ids) {
		const job = await store.claim(id, { heartbeatMs: 5000 });
		await store.succeed(id, { attempt: job!.attempts });
	}
	const ms = performance.now() - started;
	if (cpu) cpu.spent.push(cpuSeconds(cpu.backend) - cpuBefore);
	await sql`delete from jobs where id = any(${ids})`;
	return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const [mode, ...args] = process.argv.slice(2);
if (mode === 'setup') {
	console.log(JSON.stringify(await setup()));
	// Keep the server up until killed.
	await new Promise(() => {});
} else if (mode === 'run') {
	const [url, n = '2000'] = args;
	if (!url) throw new Error('run <url> [n]');
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	const ms = await perJob(sql, Number(n));
	await sql.end();
	console.log(JSON.stringify({ jobs: Number(n), ms: Math.round(ms), perJobUs: Math.round((ms * 1000) / Number(n)) }));
} else if (mode === 'rounds') {
	const [n = '2000', r = '7'] = args;
	const urls = await setup();
	const clients = Object.fromEntries(VARIANTS.map((v) => [v, postgres(urls[v], { max: 1, onnotice: () => {} })]));
	for (const v of VARIANTS) await perJob(clients[v]!, 200); // warm-up
	const times: Record<string, number[]> = { plain: [], compact: [], full: [] };
	const cpu: Record<string, { backend: number; spent: number[] }> = {};
	for (const v of VARIANTS)
		cpu[v] = { backend: (await clients[v]!`select pg_backend_pid() as pid`)[0]!.pid as number, spent: [] };
	// Pairs of rounds: the ratio of each variant to plain in the same round, then the median ratio.
	const ratios: Record<string, number[]> = { compact: [], full: [] };
	for (let i = 0; i < Number(r); i++) {
		for (const v of i % 2 ? [...VARIANTS].reverse() : VARIANTS)
			times[v]!.push(await perJob(clients[v]!, Number(n), cpu[v]));
		for (const v of ['compact', 'full'] as const) ratios[v]!.push(cpu[v]!.spent.at(-1)! / cpu.plain!.spent.at(-1)!);
	}
	const us = (xs: number[], scale: number) => Math.round((median(xs) * scale) / Number(n));
	console.log(
		JSON.stringify({
			jobs: Number(n),
			rounds: Number(r),
			wallPerJobUs: Object.fromEntries(VARIANTS.map((v) => [v, us(times[v]!, 1000)])),
			serverCpuPerJobUs: Object.fromEntries(VARIANTS.map((v) => [v, us(cpu[v]!.spent, 1e6)])),
			serverCpuRatio: {
				compactVsPlain: +median(ratios.compact!).toFixed(3),
				fullVsPlain: +median(ratios.full!).toFixed(3),
			},
		}),
	);
	await Promise.all(Object.values(clients).map((c) => c.end()));
	process.exit(0);
} else if (mode === 'solo') {
	const [variant, n = '2000'] = args;
	if (!VARIANTS.includes(variant as never)) throw new Error(`solo ${VARIANTS.join('|')} [n]`);
	const pg = await startLocalPostgres();
	try {
		const urls = await setup(pg);
		const sql = postgres(urls[variant as (typeof VARIANTS)[number]]!, { max: 1, onnotice: () => {} });
		await perJob(sql, 200);
		const ms = await perJob(sql, Number(n));
		await sql.end();
		console.log(JSON.stringify({ variant, jobs: Number(n), perJobUs: Math.round((ms * 1000) / Number(n)) }));
	} finally {
		await pg.stop();
	}
}
