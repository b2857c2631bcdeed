/**
 * The server's limits, measured on a database of their own in the same server
 * and run, so every system's figure can also be read as a share of what the
 * server can do at all:
 *  - the commit ceiling: 8 loops (postgres.js pool of 8), each updating its own
 *    row (on a page of its own) of a small table, one autocommitted single-row
 *    UPDATE at a time;
 *  - bare-SQL enqueue: the minimal INSERT a queue needs, one row per statement
 *    and in batches;
 *  - bare-SQL claim + complete: the minimal SQL a queue needs on a plain table,
 *    per job (claim one with FOR UPDATE SKIP LOCKED, then mark it done: two
 *    commits a job) and batched (claim up to BENCH_BARE_CLAIM_BATCH with SKIP
 *    LOCKED in one statement, complete them in one statement), and batched
 *    again with one message row per change written in the same statements
 *    into a table shaped as Supabase's realtime.messages (the floor of a
 *    batched runner that keeps one Realtime message per visible change).
 * No triggers, no RLS, no functions, no JSON parsing on the client.
 */
import postgres from 'postgres';
import { drainLoops } from './drain-loops.ts';
import { now } from './stats.ts';

export interface BareSql {
	setup(): Promise<void>;
	/** `loops` connections each committing `perLoop` single-row UPDATEs of its own row; returns ms. */
	commitCeiling(loops: number, perLoop: number): Promise<number>;
	/** `n` single-row INSERTs from one client, one at a time; returns ms. */
	enqueueOne(n: number): Promise<number>;
	/** `n` rows in INSERT ... SELECT statements of `batch` rows (one round trip each); returns ms. */
	enqueueBatch(n: number, batch: number): Promise<number>;
	/** Fills `n` queued rows (untimed), then `concurrency` loops of claim-one + complete; returns ms. */
	claimComplete(n: number, concurrency: number): Promise<number>;
	/** Fills `n` queued rows (untimed), then `concurrency` loops claiming and completing `batch` at a time; returns ms. */
	claimCompleteBatched(n: number, concurrency: number, batch: number): Promise<number>;
	/**
	 * As {@link claimCompleteBatched}, with what the product adds that no rewrite can remove: each claim and
	 * each completion also writes one row per job into a table shaped as Supabase's `realtime.messages`
	 * (one message per visible change, two a job), in the same statement; returns ms.
	 */
	claimCompleteBatchedWithMessages(n: number, concurrency: number, batch: number): Promise<number>;
	close(): Promise<void>;
}

/** Rows between two loops' rows in the ceiling table (about 20 rows fit a page at fillfactor 10). */
const SPREAD = 100;

/** The bare-SQL reference on its own database at `url` (the table owner, a superuser). */
export function bareSql(url: string): BareSql {
	const sql = postgres(url, { max: 8, onnotice: () => {} });

	async function fill(n: number): Promise<void> {
		await sql`truncate bare_jobs`;
		await sql`insert into bare_jobs (params) select jsonb_build_object('i', g) from generate_series(1, ${n}) g`;
	}

	/** Fills `n` queued rows (untimed), then times `concurrency` loops each running `step` (which claims and completes a batch, and says how many) until one claims none. */
	async function drainBatches(n: number, concurrency: number, step: () => Promise<number>): Promise<number> {
		await fill(n);
		const started = now();
		let done = 0;
		await Promise.all(
			Array.from({ length: concurrency }, async () => {
				// Empty with SKIP LOCKED: every queued row is done or held by another loop, which completes it.
				for (let got = await step(); got > 0; got = await step()) done += got;
			}),
		);
		if (done !== n) throw new Error(`bare SQL batched: ${done} of ${n} jobs done`);
		return now() - started;
	}

	return {
		async setup() {
			await sql`create table ceiling (id int primary key, n bigint not null default 0) with (fillfactor = 10)`;
			await sql`create table bare_jobs (
				id bigint generated always as identity primary key,
				status text not null default 'queued',
				params jsonb not null default '{}'::jsonb,
				created_at timestamptz not null default now(),
				started_at timestamptz,
				finished_at timestamptz
			)`;
			await sql`create index bare_jobs_queued on bare_jobs (id) where status = 'queued'`;
			// realtime.messages as Supabase makes it: partitioned by day on inserted_at, primary key (id, inserted_at).
			await sql`create table bare_messages (
				topic text not null, extension text not null, payload jsonb, event text, private boolean default false,
				updated_at timestamp not null default now(), inserted_at timestamp not null default now(),
				id uuid not null default gen_random_uuid(), primary key (id, inserted_at)
			) partition by range (inserted_at)`;
			const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString();
			await sql.unsafe(
				`create table bare_messages_now partition of bare_messages for values from ('${day(-1)}') to ('${day(1)}')`,
			);
		},
		async commitCeiling(loops, perLoop) {
			// Each loop's row on a page of its own (fillfactor 10, rows SPREAD apart), so the loops never
			// wait on one another's buffer lock: what is measured is the commit path, not page contention.
			await sql`truncate ceiling`;
			await sql`insert into ceiling (id) select g from generate_series(1, ${loops * SPREAD}) g`;
			const loop = async (k: number, count: number) => {
				for (let i = 0; i < count; i++) await sql`update ceiling set n = n + 1 where id = ${(k + 1) * SPREAD}`;
			};
			// Untimed warm-up: all connections open, the statement prepared on each.
			await Promise.all(Array.from({ length: loops }, (_, k) => loop(k, 20)));
			const started = now();
			await Promise.all(Array.from({ length: loops }, (_, k) => loop(k, perLoop)));
			return now() - started;
		},
		async enqueueOne(n) {
			await sql`truncate bare_jobs`;
			const started = now();
			for (let i = 0; i < n; i++) await sql`insert into bare_jobs (params) values (${sql.json({ i })})`;
			return now() - started;
		},
		async enqueueBatch(n, batch) {
			await sql`truncate bare_jobs`;
			const started = now();
			for (let from = 0; from < n; from += batch) {
				const items = Array.from({ length: Math.min(batch, n - from) }, (_, k) => ({ i: from + k }));
				await sql`insert into bare_jobs (params) select e from jsonb_array_elements(${sql.json(items)}::jsonb) e`;
			}
			return now() - started;
		},
		async claimComplete(n, concurrency) {
			await fill(n);
			return await drainLoops(
				'bare SQL',
				n,
				concurrency,
				async () =>
					(
						await sql<{ id: string }[]>`update bare_jobs set status = 'running', started_at = now()
						where id = (select id from bare_jobs where status = 'queued' order by id limit 1 for update skip locked)
						returning id`
					)[0],
				(job) => sql`update bare_jobs set status = 'done', finished_at = now() where id = ${job.id}`,
			);
		},
		async claimCompleteBatched(n, concurrency, batch) {
			return await drainBatches(n, concurrency, async () => {
				const claimed = await sql<{ id: string }[]>`update bare_jobs b set status = 'running', started_at = now()
					from (select id from bare_jobs where status = 'queued' order by id limit ${batch} for update skip locked) c
					where b.id = c.id returning b.id`;
				if (claimed.length > 0)
					await sql`update bare_jobs set status = 'done', finished_at = now() where id = any(${claimed.map((r) => r.id)}::bigint[])`;
				return claimed.length;
			});
		},
		async claimCompleteBatchedWithMessages(n, concurrency, batch) {
			await sql`truncate bare_messages`;
			// The smallest message a screen can use (the job and its new status), so the floor is generous.
			return await drainBatches(n, concurrency, async () => {
				const claimed = await sql<{ id: string }[]>`with c as (
						update bare_jobs b set status = 'running', started_at = now()
						from (select id from bare_jobs where status = 'queued' order by id limit ${batch} for update skip locked) q
						where b.id = q.id returning b.id, b.status),
					m as (insert into bare_messages (payload, event, topic, private, extension)
						select jsonb_build_object('id', c.id, 'status', c.status), 'job', 'job:' || c.id, true, 'broadcast' from c)
					select id from c`;
				if (claimed.length > 0)
					await sql`with c as (
							update bare_jobs set status = 'done', finished_at = now()
							where id = any(${claimed.map((r) => r.id)}::bigint[]) returning id, status)
						insert into bare_messages (payload, event, topic, private, extension)
						select jsonb_build_object('id', c.id, 'status', c.status), 'job', 'job:' || c.id, true, 'broadcast' from c`;
				return claimed.length;
			});
		},
		async close() {
			await sql.end();
		},
	};
}
