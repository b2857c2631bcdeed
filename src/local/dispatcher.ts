/**
 * The local dispatcher: does what pg_net's and pg_cron's background workers do
 * on Supabase, for a database that has the stand-ins from
 * src/local/postgres/compat-{net,cron}.sql instead of the extensions.
 *
 * - HTTP: LISTENs on `net_http_request_queue` (NOTIFYed by the stand-in's
 *   statement trigger, so only committed requests wake it), takes the queued
 *   rows out of net.http_request_queue, performs them with fetch and stores each
 *   outcome in net._http_response as pg_net does. A poll every `pollIntervalMs`
 *   is the backstop for a missed notification (NOTIFY is a hint only).
 * - Cron: at every second boundary, runs the active cron.job commands due then
 *   (five-field schedules at the start of a matching UTC minute, pg_cron 1.5's
 *   `'N seconds'` every N seconds), one run per job at a time, recorded in
 *   cron.job_run_details.
 *
 * Each half switches itself off where the real extension is installed, so the
 * dispatcher can run against any database. Local tooling only: product code
 * never imports it.
 */
import { EventEmitter } from 'node:events';
import postgres from 'postgres';
import { parseCron } from './cron-expression.ts';

export interface DispatcherOptions {
	/** Connection string of a role that owns the stand-ins (the local superuser). */
	url: string;
	/** Backstop poll of the request queue. @default 1000 */
	pollIntervalMs?: number;
	/** Requests taken from the queue per round. @default 50 */
	batchSize?: number;
	/** Run the stand-in cron jobs (the timer and {@link Dispatcher.runDueSchedules}). @default true */
	cron?: boolean;
	/** Run them on a timer, every second; false leaves it to runDueSchedules (tests that pick the moment). @default true */
	cronTimer?: boolean;
}

/** One request performed, as stored in net._http_response. */
export interface DispatchedResponse {
	id: string;
	method: string;
	url: string;
	statusCode: number | null;
	timedOut: boolean;
	errorMsg: string | null;
}

/** One cron job run, as recorded in cron.job_run_details. */
export interface CronRun {
	jobid: string;
	jobname: string | null;
	status: 'succeeded' | 'failed';
	returnMessage: string;
}

interface QueuedRequest {
	id: string;
	method: string;
	url: string;
	headers: Record<string, string> | null;
	body: Buffer | null;
	timeout_milliseconds: number;
}

interface CronJobRow {
	jobid: string;
	jobname: string | null;
	schedule: string;
	command: string;
	username: string;
}

/**
 * Events: `response` (DispatchedResponse, after its row is stored), `cron`
 * (CronRun, after its row is stored), `error` (Error: a round that failed; the
 * next notification or poll retries).
 */
export class Dispatcher extends EventEmitter {
	readonly #sql: postgres.Sql;
	readonly #options: Required<Omit<DispatcherOptions, 'url'>>;
	#net = false;
	#cron = false;
	#draining: Promise<number> | null = null;
	#again = false;
	#stopped = false;
	#timers: NodeJS.Timeout[] = [];
	#unlisten: (() => Promise<void>) | null = null;
	readonly #runningJobs = new Set<string>();
	readonly #refused = new Set<string>();
	readonly #inFlight = new Set<Promise<unknown>>();

	constructor(options: DispatcherOptions) {
		super();
		this.#sql = postgres(options.url, { max: 4, onnotice: () => {} });
		this.#options = {
			pollIntervalMs: options.pollIntervalMs ?? 1000,
			batchSize: options.batchSize ?? 50,
			cron: options.cron ?? true,
			cronTimer: options.cronTimer ?? true,
		};
	}

	/** True when this dispatcher sends net.http_request_queue (no real pg_net). */
	get sendsHttp(): boolean {
		return this.#net;
	}

	/** True when this dispatcher runs cron.job (stand-in cron, no real pg_cron). */
	get runsCron(): boolean {
		return this.#cron;
	}

	/** Detects the stand-ins, starts listening and the timers. */
	async start(): Promise<this> {
		const [found] = await this.#sql<{ net: boolean; cron: boolean }[]>`
			select to_regclass('net.http_request_queue') is not null
			         and not exists (select 1 from pg_extension where extname = 'pg_net') as net,
			       to_regclass('cron.job') is not null
			         and not exists (select 1 from pg_extension where extname = 'pg_cron') as cron`;
		this.#net = found!.net;
		this.#cron = found!.cron && this.#options.cron;
		if (this.#net) {
			const listening = await this.#sql.listen('net_http_request_queue', () => void this.#track(this.drain()));
			this.#unlisten = listening.unlisten;
			this.#timers.push(setInterval(() => void this.#track(this.drain()), this.#options.pollIntervalMs));
			await this.#track(this.drain());
		}
		if (this.#cron && this.#options.cronTimer) this.#armCron();
		return this;
	}

	/**
	 * Sends every request queued now; resolves with how many were sent. Calls
	 * made while a round runs join it and trigger one more round.
	 */
	drain(): Promise<number> {
		if (!this.#net || this.#stopped) return Promise.resolve(0);
		if (this.#draining) {
			this.#again = true;
			return this.#draining;
		}
		this.#draining = (async () => {
			let sent = 0;
			try {
				do {
					this.#again = false;
					for (;;) {
						const batch = await this.#take();
						if (batch.length === 0) break;
						sent += batch.length;
						await Promise.all(batch.map((request) => this.#send(request)));
					}
				} while (this.#again && !this.#stopped);
			} catch (error) {
				if (!this.#stopped) this.emit('error', error instanceof Error ? error : new Error(String(error)));
			} finally {
				this.#draining = null;
			}
			return sent;
		})();
		return this.#draining;
	}

	/**
	 * Runs the stand-in cron jobs due in the UTC minute of `at` (five fields)
	 * and those of `'N seconds'` due at its second: what the timer runs at the
	 * start of a minute.
	 */
	runDueSchedules(at: Date = new Date()): Promise<CronRun[]> {
		return this.#runDue(at, true);
	}

	async #runDue(at: Date, minute: boolean): Promise<CronRun[]> {
		if (!this.#cron || this.#stopped) return [];
		// Not filtered on cron.job.database: the stand-in table lives in the database
		// it serves (a database cloned from a template keeps the template's name there).
		const jobs = await this.#sql<CronJobRow[]>`
			select jobid::text as jobid, jobname, schedule, command, username
			from cron.job where active order by jobid`;
		const due = jobs.filter((job) => {
			try {
				const schedule = parseCron(job.schedule);
				if (schedule.everySeconds === null && !minute) return false;
				return schedule.matches(at) && !this.#runningJobs.has(job.jobid);
			} catch (error) {
				// Said once per schedule, not every second.
				if (!this.#refused.has(job.schedule)) {
					this.#refused.add(job.schedule);
					this.emit('error', error instanceof Error ? error : new Error(String(error)));
				}
				return false;
			}
		});
		return await Promise.all(due.map((job) => this.#runJob(job)));
	}

	/** Stops listening and the timers, waits for the rounds in flight, closes the connections. */
	async stop(): Promise<void> {
		if (this.#stopped) return;
		this.#stopped = true;
		for (const timer of this.#timers) clearTimeout(timer);
		await this.#unlisten?.().catch(() => {});
		await Promise.allSettled([...this.#inFlight]);
		await this.#sql.end({ timeout: 5 });
	}

	#track<T>(promise: Promise<T>): Promise<T> {
		this.#inFlight.add(promise);
		void promise.finally(() => this.#inFlight.delete(promise)).catch(() => {});
		return promise;
	}

	async #take(): Promise<QueuedRequest[]> {
		// Taking a request out of the queue is final, as with pg_net: at most once.
		return await this.#sql<QueuedRequest[]>`
			delete from net.http_request_queue q
			where q.id in (select r.id from net.http_request_queue r order by r.id limit ${this.#options.batchSize} for update skip locked)
			returning q.id::text as id, q.method, q.url, q.headers, q.body, q.timeout_milliseconds`;
	}

	async #send(request: QueuedRequest): Promise<void> {
		const result = {
			status_code: null as number | null,
			content_type: null as string | null,
			headers: null as Record<string, string> | null,
			content: null as string | null,
			timed_out: false,
			error_msg: null as string | null,
		};
		try {
			const response = await fetch(request.url, {
				method: request.method.toUpperCase(),
				headers: request.headers ?? {},
				body: request.method.toUpperCase() === 'GET' || !request.body ? undefined : new Uint8Array(request.body),
				signal: AbortSignal.timeout(request.timeout_milliseconds),
			});
			result.status_code = response.status;
			result.content_type = response.headers.get('content-type');
			result.headers = Object.fromEntries(response.headers.entries());
			result.content = await response.text();
		} catch (error) {
			const name = error instanceof Error ? error.name : '';
			result.timed_out = name === 'TimeoutError';
			result.error_msg = result.timed_out
				? `Timeout of ${request.timeout_milliseconds} ms reached`
				: error instanceof Error
					? String((error.cause as Error | undefined)?.message ?? error.message)
					: String(error);
		}
		await this.#sql`
			insert into net._http_response (id, status_code, content_type, headers, content, timed_out, error_msg)
			values (${request.id}, ${result.status_code}, ${result.content_type},
			        ${result.headers ? this.#sql.json(result.headers) : null}, ${result.content}, ${result.timed_out}, ${result.error_msg})`;
		this.emit('response', {
			id: request.id,
			method: request.method,
			url: request.url,
			statusCode: result.status_code,
			timedOut: result.timed_out,
			errorMsg: result.error_msg,
		} satisfies DispatchedResponse);
	}

	#armCron(after = 0): void {
		if (this.#stopped) return;
		const now = Date.now();
		// The next second boundary after the one just run: a timer may fire a little before its
		// time by Date.now(), and that second must not be run twice.
		const next = Math.max(Math.floor(now / 1000) * 1000 + 1000, after + 1000);
		const timer = setTimeout(() => {
			this.#timers.splice(this.#timers.indexOf(timer), 1);
			void this.#track(this.#runDue(new Date(next), next % 60_000 === 0));
			this.#armCron(next);
		}, next - now);
		this.#timers.push(timer);
	}

	async #runJob(job: CronJobRow): Promise<CronRun> {
		this.#runningJobs.add(job.jobid);
		const connection = await this.#sql.reserve();
		let run: CronRun;
		try {
			const [started] = await connection<{ runid: string }[]>`
				insert into cron.job_run_details (jobid, job_pid, database, username, command, status, start_time)
				values (${job.jobid}, pg_backend_pid(), current_database(), ${job.username}, ${job.command}, 'running', now())
				returning runid::text as runid`;
			const runid = started!.runid;
			let status: CronRun['status'] = 'succeeded';
			let message: string;
			try {
				await connection.unsafe(`set role ${quoteIdent(job.username)}`);
				const result = await connection.unsafe(job.command).simple();
				const last = (
					Array.isArray(result) && Array.isArray(result.at(-1)) ? result.at(-1) : result
				) as postgres.RowList<postgres.Row[]>;
				message =
					last.command === 'SELECT'
						? `${last.count} row${last.count === 1 ? '' : 's'}`
						: `${last.command} ${last.count ?? ''}`.trim();
			} catch (error) {
				status = 'failed';
				message = error instanceof Error ? `ERROR:  ${error.message}` : String(error);
			}
			await connection.unsafe('reset role');
			await connection`update cron.job_run_details set status = ${status}, return_message = ${message}, end_time = now() where runid = ${runid}`;
			run = { jobid: job.jobid, jobname: job.jobname, status, returnMessage: message };
		} finally {
			connection.release();
			this.#runningJobs.delete(job.jobid);
		}
		this.emit('cron', run);
		return run;
	}
}

function quoteIdent(name: string): string {
	return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Starts a dispatcher for one database.
 *
 * @example
 * const dispatcher = await startDispatcher({ url: process.env.DATABASE_URL! });
 * dispatcher.on('response', (r) => console.log(r.url, r.statusCode));
 * // ... later
 * await dispatcher.stop();
 */
export async function startDispatcher(options: DispatcherOptions): Promise<Dispatcher> {
	const dispatcher = new Dispatcher(options);
	try {
		return await dispatcher.start();
	} catch (error) {
		await dispatcher.stop();
		throw error;
	}
}
