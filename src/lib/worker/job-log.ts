/**
 * `ctx.log`: a handler's own log lines, kept on the job's timeline. Each line
 * is checked when logged (a bad one throws, naming the field); lines are sent
 * in batches (one job_log call per burst, at most every FLUSH_MS), through the
 * attempt that holds the job, and every pending line is written before the
 * run's close. Past the per-job bound the worker stops sending and counts.
 */
import { isJobError } from '../errors.ts';
import { LOG_LINES_MAX } from '../internal/limits.ts';
import { invalid } from '../store/input-checks.ts';
import { checkLogLine, type LogLevel, type LogLine } from '../store/job-timeline.ts';
import type { JobStore } from '../store/job-store.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';

/** A log line's fields; `userFacing: true` shows the line to the job's owner too (the key is not stored). */
export type JobLogFields = Record<string, unknown> & { userFacing?: boolean };

/** How long a line may wait for others before it is sent. */
const FLUSH_MS = 200;
/** A burst this long is sent at once. */
const FLUSH_LINES = 100;

/**
 * The lines of one run, batched. `log` never waits and never throws for the
 * database: a refused write (the job was reclaimed) is dropped, anything else
 * goes to the worker's own logger.
 *
 * @internal
 * @example
 * ```ts
 * const logs = new JobLogBuffer(store, job.id, job.attempts, console);
 * logs.log('info', 'Page 3 read', { userFacing: true });
 * await logs.close();
 * ```
 */
export class JobLogBuffer {
	#pending: LogLine[] = [];
	#sent = 0;
	#dropped = 0;
	#timer: ReturnType<typeof setTimeout> | undefined;
	#writing: Promise<void> = Promise.resolve();
	#gone = false;

	constructor(
		private readonly store: JobStore,
		private readonly jobId: string,
		private readonly attempt: number,
		private readonly logger: WorkerLogger,
	) {}

	log(level: LogLevel, message: string, fields?: JobLogFields | null): void {
		if (fields !== undefined && fields !== null && (typeof fields !== 'object' || Array.isArray(fields)))
			throw invalid('fields', 'fields must be a plain object of JSON values');
		let rest: Record<string, unknown> | null = null;
		let userFacing = false;
		if (fields) {
			const { userFacing: marked, ...others } = fields;
			if (marked !== undefined && typeof marked !== 'boolean')
				throw invalid('fields.userFacing', `userFacing must be a boolean; got ${typeof marked}`);
			userFacing = marked === true;
			rest = Object.keys(others).length > 0 ? others : null;
		}
		const line: LogLine = { level, message, fields: rest, userFacing, at: new Date() };
		checkLogLine(line);
		if (this.#gone) return;
		if (this.#sent + this.#pending.length >= LOG_LINES_MAX) {
			this.#dropped++;
			return;
		}
		this.#pending.push(line);
		if (this.#pending.length >= FLUSH_LINES) this.#flush();
		else this.#timer ??= setTimeout(() => this.#flush(), FLUSH_MS);
	}

	/** Sends what is pending and waits for every write so far. */
	async close(): Promise<void> {
		if (this.#pending.length > 0 || this.#dropped > 0) this.#flush();
		await this.#writing;
	}

	#flush(): void {
		clearTimeout(this.#timer);
		this.#timer = undefined;
		const lines = this.#pending;
		const dropped = this.#dropped;
		this.#pending = [];
		this.#dropped = 0;
		this.#sent += lines.length;
		// One write at a time, in order.
		this.#writing = this.#writing.then(async () => {
			if (this.#gone) return;
			try {
				await this.store.log(this.jobId, lines, { attempt: this.attempt, dropped });
			} catch (e) {
				if (
					isJobError(e, 'job_already_finished') ||
					isJobError(e, 'job_not_running') ||
					isJobError(e, 'job_not_found')
				) {
					// No longer this attempt's job: its lines have nowhere to go.
					this.#gone = true;
					return;
				}
				this.logger.warn(`${PREFIX} job ${this.jobId}: ${lines.length} log line(s) could not be written`, e);
			}
		});
	}
}
