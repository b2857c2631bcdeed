/**
 * What every part of the store shares: one adapter, one job table, and the
 * calls that turn an SQL function's answer into job rows. Every call is its
 * own unit of work — nothing holds a connection or a transaction between two.
 */
import type { JobAdapter, JobCallArgs, JobFunctionName, RawRow } from './adapter.ts';
import { isJobId, notFound } from './input-checks.ts';
import { parseJobRow, UnexpectedRowError, type Job } from './job.ts';

/** The functions that return job rows. */
export type RowFunction = Exclude<
	JobFunctionName,
	'job_tick' | 'job_phase_history' | 'job_ask' | 'job_open_question' | 'job_stream_append' | 'job_stream_read'
>;

/** Ids per job_get_many call (the function's limit is list_max(), 1,000). */
const READS_PER_CALL = 500;

type Waiting<R> = { resolve: (job: R) => void; reject: (e: unknown) => void }[];

/** What a listing does with a row it cannot read: by default, a warning naming the job. */
export type UnreadableRowHandler = (error: UnexpectedRowError) => void;

const warnUnreadable: UnreadableRowHandler = (e) =>
	console.warn(`supabase-jobs: skipped job ${String(e.jobId)} in a listing: ${e.message}`);

export class JobCalls<R extends Job = Job> {
	constructor(
		readonly adapter: JobAdapter,
		readonly table: string,
		readonly onUnreadableRow: UnreadableRowHandler = warnUnreadable,
	) {}

	/**
	 * The rows of a listing as jobs. A row this package cannot read (a time no
	 * Date holds, a column of the wrong type) fails that row only: it is left
	 * out and reported to {@link onUnreadableRow} with its job's id, and the rest
	 * of the listing comes back. A row naming no job fails the whole call.
	 */
	readable(rows: readonly RawRow[]): R[] {
		const jobs: R[] = [];
		for (const row of rows) {
			try {
				jobs.push(parseJobRow(row) as R);
			} catch (e) {
				if (!(e instanceof UnexpectedRowError) || e.jobId === null) throw e;
				this.onUnreadableRow(e);
			}
		}
		return jobs;
	}

	/**
	 * `items` in pieces of at most the adapter's `maxRows` (PostgREST's cap on a
	 * reply): a batch whose reply has a row per item is sent as one call per
	 * piece, so no reply is cut after its writes committed. One piece when the
	 * adapter has no cap (postgres.js).
	 */
	pieces<T>(items: readonly T[]): T[][] {
		const per = this.adapter.maxRows ?? Math.max(items.length, 1);
		const out: T[][] = [];
		for (let from = 0; from < items.length; from += per) out.push(items.slice(from, from + per));
		return out;
	}

	call<F extends JobFunctionName>(fn: F, args: JobCallArgs<F>) {
		return this.adapter.call(fn, { ...args, job_table: this.table } as JobCallArgs<F>);
	}

	async rows<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<RawRow[]> {
		const rows = await this.call(fn, args);
		if (!Array.isArray(rows)) throw new UnexpectedRowError(`${fn} returned ${typeof rows}, not rows`);
		return rows as RawRow[];
	}

	/** The ids of the rows `fn` returns, in its order: the rows themselves are neither sent whole nor parsed. */
	async ids<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<string[]> {
		const rows = await this.adapter.call(fn, { ...args, job_table: this.table } as JobCallArgs<F>, 'ids');
		if (!Array.isArray(rows)) throw new UnexpectedRowError(`${fn} returned ${typeof rows}, not rows`);
		return rows.map((r: RawRow) => {
			if (typeof r.id !== 'string') throw new UnexpectedRowError(`${fn} returned a row without a job id`);
			return r.id;
		});
	}

	async one<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<R> {
		const [row] = await this.rows(fn, args);
		if (!row) throw new UnexpectedRowError(`${fn} returned no row`);
		return parseJobRow(row) as R;
	}

	async maybeOne<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<R | null> {
		const [row] = await this.rows(fn, args);
		return row ? (parseJobRow(row) as R) : null;
	}

	/** A listing: the rows `fn` returns, each unreadable one left out and reported ({@link readable}). */
	async many<F extends RowFunction>(fn: F, args: JobCallArgs<F>): Promise<R[]> {
		return this.readable(await this.rows(fn, args));
	}

	/** One job (payload omitted); JobNotFoundError when unknown or not the caller's. */
	async get(id: string): Promise<R> {
		if (!isJobId(id)) throw notFound(id);
		return await this.one('job_get', { id });
	}

	/** Reads asked for in the current turn of the event loop, by id: sent together at its end. */
	private pendingReads: Map<string, Waiting<R>> | null = null;

	/**
	 * `get`, gathered: the reads of every watch started (or caught up) in the
	 * same turn of the event loop go in one `job_get_many` call, so a screen
	 * opening 100 watches makes one request, not 100. A lone read is a plain
	 * `job_get`; if the batch call fails, each read is made alone, so the
	 * errors are exactly those of `get`.
	 */
	getGathered(id: string): Promise<R> {
		if (!isJobId(id)) return Promise.reject(notFound(id));
		return new Promise<R>((resolve, reject) => {
			let batch = this.pendingReads;
			if (!batch) {
				const created = (batch = this.pendingReads = new Map());
				setTimeout(() => void this.flushReads(created), 0);
			}
			const waiting = batch.get(id);
			if (waiting) waiting.push({ resolve, reject });
			else batch.set(id, [{ resolve, reject }]);
		});
	}

	private async flushReads(batch: Map<string, Waiting<R>>): Promise<void> {
		if (this.pendingReads === batch) this.pendingReads = null;
		const settle = (id: string, read: Promise<R>) =>
			read.then(
				(job) => batch.get(id)!.forEach((w) => w.resolve(job)),
				(e: unknown) => batch.get(id)!.forEach((w) => w.reject(e)),
			);
		const ids = [...batch.keys()];
		if (ids.length === 1) return void (await settle(ids[0]!, this.get(ids[0]!)));
		for (let from = 0; from < ids.length; from += READS_PER_CALL) {
			const chunk = ids.slice(from, from + READS_PER_CALL);
			let rows: RawRow[];
			try {
				rows = await this.rows('job_get_many', { ids: chunk });
			} catch {
				await Promise.all(chunk.map((id) => settle(id, this.get(id))));
				continue;
			}
			const byId = new Map(rows.map((row) => [String(row.id), row]));
			for (const id of chunk) {
				const row = byId.get(id);
				await settle(id, row ? Promise.resolve().then(() => parseJobRow(row) as R) : Promise.reject(notFound(id)));
			}
		}
	}
}
