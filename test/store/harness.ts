/**
 * What the JobStore conformance suite needs from a transport under test, and
 * small event helpers. The suite never fakes the database: a harness gives it
 * adapters that reach the real one (postgres.js directly, or supabase-js
 * through the stand-in HTTP service), plus two superuser chores a test cannot
 * do through the job API: creating users and moving a heartbeat back in time.
 */
import type { Sql } from 'postgres';
import type { JobAdapter, JobFunctionName } from '../../src/lib/store/adapter.ts';
import { createUser } from '../helpers/db.ts';

/** A caller: the service role, or a signed-in user (an admin when `admin`: app_metadata.role = 'admin'). */
export type ConformanceCaller = { role: 'service_role' } | { role: 'authenticated'; sub: string; admin?: boolean };

export interface JobTableOptions {
	kinds?: string[];
	maxActivePerOwner?: number;
}

/**
 * The SQL behind createJobTable, for both harnesses.
 *
 * @example
 * await createJobTable(db.sql, 'exports', { kinds: ['csv'] });
 */
export async function createJobTable(sql: Sql, name: string, options: JobTableOptions = {}): Promise<void> {
	await sql`select supabase_jobs.create_job_table(${name})`;
	// Users invent kinds in most tests: the table is open unless kinds are named, and a
	// user may give priorities up to 10 (the suites order a user's own jobs by it).
	for (const kind of options.kinds ?? ['*'])
		await sql`select supabase_jobs.register_job_kind(${kind}, ${name}, user_priority_max => 10)`;
	if (options.maxActivePerOwner !== undefined)
		await sql`update supabase_jobs.job_tables set max_active_per_owner = ${options.maxActivePerOwner} where label = ${name}`;
}

export interface ConformanceHarness {
	/** An adapter that calls the job API as `caller` (PostgREST semantics: role + request.jwt.claims). */
	adapter(caller: ConformanceCaller): JobAdapter;
	/** Inserts a user into auth.users; returns its id. */
	createUser(): Promise<string>;
	/** Moves a running job's started_at and heartbeat_at `seconds` into the past (a worker that went silent). */
	backdate(id: string, seconds: number, table?: string): Promise<void>;
	/**
	 * Creates a job table with supabase_jobs.create_job_table. Users may enqueue
	 * any kind in it unless `kinds` names the registered ones; `maxActivePerOwner`
	 * sets the table's per-owner quota.
	 */
	createJobTable(name: string, options?: JobTableOptions): Promise<void>;
	/** Runs what the supabase-jobs-reclaim schedule runs (supabase_jobs.reclaim_all): reclaims and expiries. */
	reclaimAll(): Promise<void>;
}

/**
 * The superuser chores of a harness over the database at `sql`, the same for every transport:
 * users, heartbeats moved back in time, job tables and a reclaim of everything.
 *
 * @example
 * const harness: ConformanceHarness = { adapter, ...databaseChores(db.sql) };
 */
export function databaseChores(sql: Sql): Omit<ConformanceHarness, 'adapter'> {
	return {
		createUser: async () => (await createUser(sql)).sub,
		backdate: async (id, seconds, table = 'jobs') => {
			await sql.unsafe(
				`update public.${table} set started_at = started_at - make_interval(secs => $2), heartbeat_at = heartbeat_at - make_interval(secs => $2) where id = $1 and status = 'running'`,
				[id, seconds],
			);
		},
		createJobTable: (name, options) => createJobTable(sql, name, options),
		reclaimAll: async () => void (await sql`select count(*) from supabase_jobs.reclaim_all(null)`),
	};
}

/** Resolves once `predicate` holds, re-checked on every `notify()`: waits on events, never on time. */
export class Signal {
	#waiters: { check: () => boolean; resolve: () => void }[] = [];

	notify(): void {
		this.#waiters = this.#waiters.filter((w) => {
			if (!w.check()) return true;
			w.resolve();
			return false;
		});
	}

	until(check: () => boolean): Promise<void> {
		if (check()) return Promise.resolve();
		return new Promise((resolve) => this.#waiters.push({ check, resolve }));
	}
}

/** Wraps an adapter, recording every call (one call = one round trip) and signalling after each. */
export function counting(inner: JobAdapter): {
	adapter: JobAdapter;
	calls: JobFunctionName[];
	count(fn?: JobFunctionName): number;
	/** Calls that have settled (the others are still in flight). */
	settled(): number;
	signal: Signal;
} {
	const calls: JobFunctionName[] = [];
	let settled = 0;
	const signal = new Signal();
	const adapter: JobAdapter = {
		name: `counting(${inner.name})`,
		async call(fn, args, answer) {
			calls.push(fn);
			try {
				return await inner.call(fn, args, answer);
			} finally {
				settled++;
				signal.notify();
			}
		},
	};
	return {
		adapter,
		calls,
		count: (fn) => (fn ? calls.filter((c) => c === fn).length : calls.length),
		settled: () => settled,
		signal,
	};
}
