/**
 * Floors: what the parts the product requires cost with everything else taken
 * away, measured in the same run as the peers. A target below its floor is out
 * of reach for any SQL layer that keeps those parts, however the functions and
 * triggers around them are written.
 *
 * - The job row and its indexes: the batch enqueue as one bare `INSERT ...
 *   SELECT` into `public.jobs`, as the table owner with ordinary triggers off
 *   (`session_replication_role = replica`): no function, no validation, no
 *   guard (nor any row rule a trigger holds), no NOTIFY or kick, no Realtime
 *   message. What is left is the row the
 *   interface reads and the indexes the listings, the claim order, the
 *   reclaimer, idempotency, expiry, owners, tags and parents need.
 * - The same batch enqueue with every trigger on (`rowFloor(url, { triggers:
 *   true })`, on the bench's own database as installed): the row rules, the
 *   refusal of a row that does not start queued, the NOTIFY and the wake-up,
 *   the owner's foreign key. What is left out is the `job_enqueue_many`
 *   function: reading the items, the per-item options, the naming of a bad
 *   item, the owner and range checks.
 * - The per-job path as two plain UPDATEs by id through the partitioned
 *   parent, every trigger on: the guard that enforces the state machine, the
 *   row rules (a CHECK or the guard, whichever holds them), the indexes of two non-HOT updates, and the Realtime
 *   message of each visible change. What is left out is the `job_*`
 *   functions: argument checks, the job table lookup, the kind-limit check,
 *   the refusal sentences, RETURN QUERY.
 * - The per-job path without its Realtime messages: a database of its own on
 *   which the update trigger that writes one `realtime.messages` row per
 *   visible change (`after_jobs_updated`) is disabled; everything else stays.
 *   (That trigger also moves parents, kicks requeues and records the
 *   timeline; a claim and a close of a job without parent do none of those.)
 * - The batched drain (what `runWorkers` does) as two plain UPDATEs per batch
 *   through the parent, every trigger on: `concurrency` loops each claiming up
 *   to `batch` queued jobs in one UPDATE (FOR UPDATE SKIP LOCKED, in the claim
 *   order, the ids as an array probed through the primary key, as
 *   `job_claim_next` writes it) and closing them in a second (the status in a
 *   subquery and the attempt checked, as `job_succeed_many` writes it). The
 *   guard, the row rules, one Realtime message per visible change (each
 *   statement's in one insert, as those functions send them), the indexes and
 *   RLS as installed all stay; what is left out is the `job_*`
 *   functions and the Node runner (its slots, local queue, handler calls and
 *   batched close).
 */
import postgres from 'postgres';
import { drainByIds } from './drain-loops.ts';
import { clockStart, now } from './stats.ts';

/** The update trigger that writes the Realtime messages of claims and closes. */
export const REALTIME_UPDATE_TRIGGER = 'after_jobs_updated';

/** Disables {@link REALTIME_UPDATE_TRIGGER} on a migrated database (as its owner). */
export async function disableRealtimeMessages(url: string): Promise<void> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	try {
		await sql.unsafe(`alter table supabase_jobs.job disable trigger ${REALTIME_UPDATE_TRIGGER}`);
	} finally {
		await sql.end();
	}
}

/** The batch enqueue reduced to the row and its indexes (see the file header). */
export interface RowFloor {
	/** Inserts `n` jobs in batches of `batch`, one statement and round trip each; returns the elapsed ms. */
	enqueueBatch(n: number, batch: number): Promise<number>;
	close(): Promise<void>;
}

/**
 * Opens the one connection the floor writes through: with ordinary triggers off for its whole session,
 * or, with `triggers: true`, as installed (every trigger on).
 */
export function rowFloor(url: string, { triggers = false }: { triggers?: boolean } = {}): RowFloor {
	const sql = postgres(url, {
		max: 1,
		onnotice: () => {},
		connection: triggers ? {} : { session_replication_role: 'replica' },
	});
	return {
		async enqueueBatch(n, batch) {
			const started = await clockStart();
			for (let from = 0; from < n; from += batch) {
				const items = Array.from({ length: Math.min(batch, n - from) }, (_, k) => ({ i: from + k }));
				// The same JSON array the enqueueMany call sends, and the ids back as it returns them.
				await sql`insert into public.jobs (kind, params)
					select 'noop', e from jsonb_array_elements(${sql.json(items)}) e returning id`;
			}
			return now() - started;
		},
		close: () => sql.end(),
	};
}

/** The per-job path reduced to its two UPDATEs (see the file header). */
export interface UpdateFloor {
	/** Puts `n` jobs in the queue (untimed), then claims and closes each by id from `concurrency` loops; returns ms. */
	processById(n: number, concurrency: number): Promise<number>;
	close(): Promise<void>;
}

/** The per-job floor on a migrated database whose triggers are all on (the bench's own `bench_ours`). */
export function updateFloor(url: string): UpdateFloor {
	const sql = postgres(url, { max: 8, onnotice: () => {} });
	return {
		async processById(n, concurrency) {
			const ids = (
				await sql<{ id: string }[]>`insert into public.jobs (kind, params)
					select 'noop', jsonb_build_object('i', i) from generate_series(1, ${n}::int) i returning id`
			).map((r) => r.id);
			// The status in a subquery, as the functions write it: the primary key, never the claim index.
			return await drainByIds(
				'per-job floor',
				ids,
				concurrency,
				async (id) =>
					(
						await sql<{ id: string; attempts: number }[]>`update supabase_jobs.job as t
							set status = 'running', attempts = t.attempts + 1
							where t.job_table = 'jobs' and t.id = ${id} and t.status = (select 'queued'::public.job_status)
							returning t.*`
					)[0],
				async (job) => {
					const [closed] = await sql`update supabase_jobs.job as t set status = 'done'
						where t.job_table = 'jobs' and t.id = ${job.id} and t.status = (select 'running'::public.job_status)
							and t.attempts = ${job.attempts}
						returning t.*`;
					if (!closed) throw new Error(`per-job floor: job ${job.id} was not closed`);
				},
			);
		},
		close: () => sql.end(),
	};
}

/** The `runWorkers` drain reduced to two UPDATEs per batch, every guarantee on (see the file header). */
export interface BatchFloor {
	/**
	 * Puts `n` jobs in the queue (untimed), then `concurrency` loops each claim up to `batch` and close
	 * them until one claims none; returns the elapsed ms.
	 */
	processBatched(n: number, concurrency: number, batch: number): Promise<number>;
	close(): Promise<void>;
}

/** The batched floor on a migrated database whose triggers are all on (the bench's own `bench_ours`). */
export function batchFloor(url: string): BatchFloor {
	// Planned as the functions plan their statements (their SET clauses): generic plans, no sequential scans.
	const sql = postgres(url, {
		max: 8,
		onnotice: () => {},
		connection: { plan_cache_mode: 'force_generic_plan', enable_seqscan: 'off' },
	});
	return {
		async processBatched(n, concurrency, batch) {
			// The table's label as a parameter, as the functions have it: one plan for any job table.
			const label = 'jobs';
			// Untimed, as ours is enqueued before its clock starts.
			await sql`insert into public.jobs (kind, params)
				select 'noop', jsonb_build_object('i', i) from generate_series(1, ${n}::int) i`;
			const started = await clockStart();
			let done = 0;
			// The claim of job_claim_next (no kind limit, every kind) and the close of job_succeed_many, as plain
			// SQL: the claimed rows come back whole and the closed ids alone, as runWorkers gets them.
			const step = async () => {
				// Each statement's Realtime messages in one insert, as those functions send them
				// (send_statement_messages; the row trigger then sends none for those rows).
				const claimed = await sql<{ id: string; attempts: number }[]>`with claimed as (
						update supabase_jobs.job as t
						set status = 'running', attempts = t.attempts + 1
						where t.job_table = ${label}
							and t.id = any (array(
								select n.id from supabase_jobs.job as n
								where n.job_table = ${label} and n.status = 'queued' and n.available_at <= now()
									and n.attempts < n.max_attempts and (n.expires_at is null or n.expires_at > now())
								order by n.priority desc, n.available_at, n.created_at, n.id
								limit ${batch}
								for update skip locked))
						returning t.*)
					select c.* from claimed as c
					where (select supabase_jobs.send_statement_messages(${label}, array_agg(x.id)) from claimed as x) is not null`;
				if (claimed.length === 0) return 0;
				const closed = await sql`with closed as (
						update supabase_jobs.job as t set status = 'done'
						from unnest(${claimed.map((j) => j.id)}::uuid[], ${claimed.map((j) => j.attempts)}::int[]) as w(id, attempt)
						where t.job_table = ${label} and t.id = any (${claimed.map((j) => j.id)}::uuid[]) and t.id = w.id
							and t.status = (select 'running'::public.job_status) and t.attempts = w.attempt
						returning t.id)
					select c.id from closed as c
					where (select supabase_jobs.send_statement_messages(${label}, array_agg(x.id)) from closed as x) is not null`;
				if (closed.length !== claimed.length)
					throw new Error(`batched floor: ${closed.length} of ${claimed.length} claimed jobs closed`);
				return claimed.length;
			};
			await Promise.all(
				Array.from({ length: concurrency }, async () => {
					// Empty with SKIP LOCKED: every queued job is done or held by another loop, which closes it.
					for (let got = await step(); got > 0; got = await step()) done += got;
				}),
			);
			if (done !== n) throw new Error(`batched floor: ${done} of ${n} jobs done`);
			return now() - started;
		},
		close: () => sql.end(),
	};
}
