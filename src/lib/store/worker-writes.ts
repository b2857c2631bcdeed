/**
 * The worker's writes: claim, tick, read its status, park for children, and
 * close (succeed, fail, retry, release). Each remembers the attempt it
 * claimed, so a run whose job was reclaimed can never close the attempt that
 * owns it now, even when the caller names no attempt.
 */
import { isJobError } from '../errors.ts';
import { JOB_STATUSES, type JobStatusValue } from '../state.ts';
import type { RawRow } from './adapter.ts';
import {
	checkFinite,
	checkInt,
	checkMetadata,
	checkStorableJson,
	INT4_MAX,
	INT4_MIN,
	intervalText,
	invalid,
	isJobId,
	kindName,
	notFound,
} from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import { appendStream } from './job-streams.ts';

import { parseJobRow, UnexpectedRowError, type Job } from './job.ts';
import { writeLog, type LogLine } from './job-timeline.ts';
import { loadTracing, startJobSpan, traced } from '../internal/tracing.ts';
import type {
	AttemptOptions,
	ClaimNextOptions,
	ClaimOptions,
	FailOptions,
	RetryOptions,
	SucceedOptions,
	TickInput,
} from './store-options.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function asStatus(fn: string, status: unknown): JobStatusValue {
	if (typeof status !== 'string' || !(JOB_STATUSES as readonly string[]).includes(status))
		throw new UnexpectedRowError(`${fn} returned ${JSON.stringify(status)}, not a job status`);
	return status as JobStatusValue;
}

export class WorkerWrites<R extends Job = Job> {
	/** Attempts this store claimed, by job id; forgotten when the job is closed. */
	private readonly claimedAttempts = new Map<string, number>();

	constructor(private readonly calls: JobCalls<R>) {}

	private fence<J extends R | null>(job: J): J {
		if (job) this.claimedAttempts.set(job.id, job.attempts);
		return job;
	}

	private attemptOf(id: string, given: number | undefined): number | undefined {
		const attempt = checkInt('attempt', given);
		if (attempt !== undefined && (attempt < INT4_MIN || attempt > INT4_MAX))
			throw invalid('attempt', `attempt is the attempts value claim returned; got ${String(attempt)}`);
		return attempt ?? this.claimedAttempts.get(id);
	}

	private closed<J>(id: string, result: Promise<J>): Promise<J> {
		return result.finally(() => this.claimedAttempts.delete(id));
	}

	async claim(id: string, options: ClaimOptions): Promise<R | null> {
		const heartbeatMs = checkInt('heartbeatMs', options.heartbeatMs);
		if (!isJobId(id)) return null;
		return this.fence(
			await traced(
				'claim',
				{ id, table: this.calls.table },
				() => this.calls.maybeOne('job_claim', { id, heartbeat_ms: heartbeatMs }),
				(span, job) => span.set(job ? { kind: job.kind, attempt: job.attempts } : { outcome: 'not_claimed' }),
			),
		);
	}

	async claimNext(options: ClaimNextOptions): Promise<R[]> {
		const args = {
			kinds: options.kinds?.map(kindName),
			limit: checkInt('limit', options.limit),
			heartbeat_ms: checkInt('heartbeatMs', options.heartbeatMs),
		};
		await loadTracing();
		const startedAt = Date.now();
		const rows = await this.calls.rows('job_claim_next', args);
		const jobs = rows.map((r) => this.fence(parseJobRow(r) as R));
		// One claim span per job claimed, all spanning the one round trip that claimed them.
		for (const job of jobs) {
			const span = startJobSpan(
				'claim',
				{ id: job.id, kind: job.kind, attempt: job.attempts, table: this.calls.table },
				startedAt,
			);
			span?.set({ count: jobs.length });
			span?.end();
		}
		return jobs;
	}

	async succeed(id: string, options: SucceedOptions): Promise<R> {
		if (!isJobId(id)) throw notFound(id);
		const resultId = options.resultId ?? undefined;
		// job_succeed would answer 22P02 after the round trip; name the field instead.
		if (resultId !== undefined && !(typeof resultId === 'string' && UUID.test(resultId)))
			throw invalid(
				'resultId',
				`resultId must be a UUID (the id of the row the work produced); got ${JSON.stringify(resultId)}`,
			);
		return await this.closed(
			id,
			this.calls.one('job_succeed', {
				id,
				result_id: resultId,
				attempt: this.attemptOf(id, options.attempt),
				timings: options.timings ?? undefined,
			}),
		);
	}

	async succeedManyRows(items: readonly (SucceedOptions & { id: string })[]): Promise<RawRow[]> {
		const rows: RawRow[] = [];
		// A piece per max_rows items (PostgREST cuts a longer reply); a close is a compare-and-set, so a piece sent again is harmless.
		for (const piece of this.calls.pieces(this.succeedManyItems(items)))
			rows.push(...(await this.calls.rows('job_succeed_many', { items: piece })));
		return rows;
	}

	/** As {@link succeedManyRows}, answering only the ids that closed (one text through postgres.js). */
	async succeedManyIds(items: readonly (SucceedOptions & { id: string })[]): Promise<string[]> {
		const ids: string[] = [];
		for (const piece of this.calls.pieces(this.succeedManyItems(items)))
			ids.push(...(await this.calls.ids('job_succeed_many', { items: piece })));
		return ids;
	}

	private succeedManyItems(items: readonly (SucceedOptions & { id: string })[]) {
		const args: { id: string; attempt: number | null; timings: PhaseTimings | null; result_id?: string }[] = [];
		for (const item of items) {
			if (!isJobId(item.id)) continue;
			const arg: (typeof args)[number] = {
				id: item.id,
				attempt: this.attemptOf(item.id, item.attempt) ?? null,
				timings: item.timings ?? null,
			};
			// An absent result_id reads as null: most closes have none, and the key was a fifth of each item's bytes.
			if (item.resultId !== null && item.resultId !== undefined) arg.result_id = item.resultId;
			args.push(arg);
		}
		for (const arg of args) this.claimedAttempts.delete(arg.id);
		return args;
	}

	async fail(id: string, error: string, options: FailOptions): Promise<R> {
		if (!isJobId(id)) throw notFound(id);
		const permanent: unknown = options.permanent;
		if (permanent !== undefined && typeof permanent !== 'boolean')
			throw invalid('permanent', `permanent is true or false; got ${typeof permanent}`);
		return await this.closed(
			id,
			this.calls.one('job_fail', {
				id,
				error,
				attempt: this.attemptOf(id, options.attempt),
				error_code: options.errorCode,
				timings: options.timings ?? undefined,
				// Sent only when set: the common close keeps the call it always made.
				permanent: options.permanent === true ? true : undefined,
			}),
		);
	}

	async retry(id: string, error: string, options: RetryOptions): Promise<R> {
		if (!isJobId(id)) throw notFound(id);
		const delay = checkFinite('delaySeconds', options.delaySeconds);
		return await this.closed(
			id,
			this.calls.one('job_retry', {
				id,
				error,
				delay: delay === undefined ? undefined : intervalText(delay * 1000),
				attempt: this.attemptOf(id, options.attempt),
			}),
		);
	}

	async release(id: string, options: AttemptOptions): Promise<R> {
		if (!isJobId(id)) throw notFound(id);
		return await this.closed(id, this.calls.one('job_release', { id, attempt: this.attemptOf(id, options.attempt) }));
	}

	async waitForChildren(id: string, options: AttemptOptions): Promise<'waiting' | 'running'> {
		if (!isJobId(id)) throw notFound(id);
		const status = await this.calls.call('job_wait_for_children', {
			id,
			attempt: this.attemptOf(id, options.attempt),
		});
		if (status !== 'waiting' && status !== 'running')
			throw new UnexpectedRowError(`job_wait_for_children returned ${JSON.stringify(status)}`);
		return status;
	}

	async log(id: string, lines: readonly LogLine[], options: AttemptOptions & { dropped?: number }): Promise<number> {
		return await writeLog(this.calls, id, lines, {
			attempt: this.attemptOf(id, options.attempt),
			dropped: options.dropped,
		});
	}

	async tick(id: string, update: TickInput): Promise<JobStatusValue> {
		if (!isJobId(id)) throw notFound(id);
		const progress = checkFinite('progress', update.progress);
		const attempt = this.attemptOf(id, update.attempt);
		const etaSeconds = checkFinite('etaSeconds', update.etaSeconds);
		const metadata = checkMetadata(update.metadata);
		if (metadata !== undefined) checkStorableJson('metadata', metadata);
		const status = await this.calls.call('job_tick', {
			id,
			progress,
			stage: update.stage,
			attempt,
			eta_seconds: etaSeconds,
			metadata,
		});
		return asStatus('job_tick', status);
	}

	appendStream(id: string, stream: string, text: string, options: AttemptOptions): Promise<JobStatusValue> {
		return appendStream(this.calls, id, stream, text, this.attemptOf(id, options.attempt));
	}

	async readStatus(id: string, options: AttemptOptions): Promise<JobStatusValue> {
		if (!isJobId(id)) throw notFound(id);
		// job_get_status: a primary-key read of one column (PT409 once another attempt owns the job).
		const status = await this.calls.call('job_get_status', { id, attempt: this.attemptOf(id, options.attempt) });
		return asStatus('job_get_status', status);
	}

	cancellationWatch(id: string): () => Promise<boolean> {
		return async () => {
			try {
				return (await this.readStatus(id, {})) !== 'running';
			} catch (e) {
				if (isJobError(e, 'job_not_found')) return true;
				throw e;
			}
		};
	}
}
