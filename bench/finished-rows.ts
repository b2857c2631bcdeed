/**
 * A job table that has been in use for a while: BENCH_FINISHED_ROWS finished
 * (done) rows in public.jobs, written by ONE set-based
 * `INSERT ... SELECT ... generate_series` as the table owner (a superuser),
 * so claim + complete can be measured next to the empty-table figure.
 *
 * How the fill gets past the job table's rules, and why that is fair:
 *  - the guard trigger lets a row be inserted only as 'queued' (a job must
 *    earn 'done' through the job_* functions), and the broadcast/notify/kick
 *    triggers would send a message per row. The fill runs with
 *    `set local session_replication_role = replica` (this transaction only):
 *    ordinary triggers do not fire, which is what a fill wants (no wake-ups, no
 *    Realtime messages for history);
 *  - every row is valid under the row rules (as a CHECK they are enforced
 *    here; held by a trigger they would not fire, so the rows are written
 *    valid): status 'done', finished_at set (terminal iff finished),
 *    started_at set, attempts 1 of 3, progress 100, payload null, params an
 *    object;
 *  - the indexes are maintained as for any insert. Then VACUUM ANALYZE, as
 *    autovacuum would eventually do, so the planner knows the table's size and
 *    no hint-bit or visibility-map work is left for the measured run.
 * Columns are named explicitly and no trigger is relied on, so the fill keeps
 * working when public.jobs becomes a partition of supabase_jobs.job: a
 * partition key column (`job_table`) without a default is filled from the
 * partition's own bound.
 */
import postgres from 'postgres';
import { now } from './stats.ts';

/** Kind of the filler rows, so the work of each measured round can be removed without touching them. */
export const FINISHED_KIND = 'finished-history';

export async function fillFinishedRows(url: string, count: number): Promise<{ fillMs: number; vacuumMs: number }> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		// A partition of a LIST-partitioned parent: the key value from `FOR VALUES IN ('...')`.
		const [part] = await sql<{ bound: string | null; has_job_table: boolean; job_table_default: string | null }[]>`
			select pg_get_expr(c.relpartbound, c.oid) as bound,
				exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'job_table' and not a.attisdropped) as has_job_table,
				(select pg_get_expr(d.adbin, d.adrelid) from pg_attrdef d join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
					where d.adrelid = c.oid and a.attname = 'job_table') as job_table_default
			from pg_class c where c.oid = 'public.jobs'::regclass`;
		const boundValue = /IN \('((?:[^']|'')*)'\)/.exec(part?.bound ?? '')?.[1]?.replaceAll("''", "'");
		const jobTable = part?.has_job_table && !part.job_table_default ? (boundValue ?? 'jobs') : null;

		const started = now();
		await sql.begin(async (tx) => {
			await tx`set local session_replication_role = replica`;
			// Finished over the past count seconds: created 2 s, started 1 s before each one finished.
			const insert = tx`insert into public.jobs (
					id, is_active, created_at, updated_at, kind, status, params, payload, result_id, error, error_code,
					attempts, max_attempts, started_at, finished_at, progress, stage, heartbeat_at, owner_id, locale,
					available_at, timings${jobTable === null ? tx`` : tx`, job_table`})
				select gen_random_uuid(), true, t - interval '2 seconds', t, ${FINISHED_KIND}, 'done', jsonb_build_object('i', g), null, null, null, null,
					1, 3, t - interval '1 second', t, 100, null, t, null, null,
					t - interval '2 seconds', null${jobTable === null ? tx`` : tx`, ${jobTable}`}
				from generate_series(1, ${count}::int) g, lateral (select now() - make_interval(secs => g) as t) s`;
			await insert;
		});
		const fillMs = now() - started;
		const vacuumStarted = now();
		await sql`vacuum analyze public.jobs`;
		return { fillMs, vacuumMs: now() - vacuumStarted };
	} finally {
		await sql.end();
	}
}

/** Deletes every job but the finished filler rows (the work a measured round left). */
export async function clearWork(url: string): Promise<void> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		await sql`delete from public.jobs where kind <> ${FINISHED_KIND}`;
	} finally {
		await sql.end();
	}
}

/** Rows in public.jobs by kind: filler and the rest. */
export async function countRows(url: string): Promise<{ finished: number; other: number }> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		const [row] = await sql<{ finished: number; other: number }[]>`select
			count(*) filter (where kind = ${FINISHED_KIND})::int as finished,
			count(*) filter (where kind <> ${FINISHED_KIND})::int as other from public.jobs`;
		return row!;
	} finally {
		await sql.end();
	}
}
