/**
 * The producer's writes: enqueue one job, many, or a child, move a queued
 * job's start, cancel. All three enqueue paths check their input with the
 * same {@link checkEnqueue}.
 */
import { UnexpectedRowError, parseJobRow, type Job } from './job.ts';
import type { RawRow } from './adapter.ts';
import type { JobCalls } from './job-calls.ts';
import {
	checkEnqueue,
	checkKind,
	intervalText,
	invalid,
	isJobId,
	notFound,
	startArgs,
	type CheckedEnqueue,
} from './input-checks.ts';
import type { JobKind } from './job-kind.ts';
import type { CancelOptions, ChildInput, EnqueueInput, Enqueued, RescheduleOptions } from './store-options.ts';
import { BATCH_MAX } from '../internal/limits.ts';
import { traced } from '../internal/tracing.ts';

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : intervalText(ms));

/** Bytes as base64, the way job_enqueue_many takes a payload inside its JSON items. */
function toBase64(bytes: Uint8Array): string {
	let text = '';
	for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
	return btoa(text);
}

function sqlArgs(c: CheckedEnqueue) {
	return {
		params: c.params,
		payload: c.payload,
		max_attempts: c.maxAttempts,
		locale: c.locale,
		owner_id: c.ownerId,
		run_at: c.runAt?.toISOString(),
		delay: seconds(c.delayMs),
		tags: c.tags,
		priority: c.priority,
		expire_after: seconds(c.expireAfterMs),
		concurrency_key: c.concurrencyKey,
	};
}

/**
 * Runs one of the enqueue paths inside an `enqueue` span naming the kind and
 * the table, then the job written (id, attempt) or how many were.
 */
export async function tracedEnqueue<R extends Job, T extends Job | string[]>(
	calls: JobCalls<R>,
	kind: string | JobKind,
	write: () => Promise<T>,
): Promise<T> {
	return await traced(
		'enqueue',
		{ kind: typeof kind === 'string' ? kind : kind?.name, table: calls.table },
		write,
		(span, out) => span.set(Array.isArray(out) ? { count: out.length } : { id: out.id, attempt: out.attempts }),
	);
}

export async function enqueue<R extends Job>(
	calls: JobCalls<R>,
	kind: string | JobKind,
	input: EnqueueInput<unknown>,
): Promise<Job | Enqueued<Job>> {
	const name = checkKind(kind);
	const checked = checkEnqueue(kind, input);
	const args = { kind: name, ...sqlArgs(checked) };
	if (input.idempotencyKey === undefined) return await calls.one('job_enqueue', args);
	const [row] = await calls.call('job_enqueue_once', {
		...args,
		idempotency_key: input.idempotencyKey,
		key_ttl: seconds(input.idempotencyTtlMs),
	});
	if (!row) throw new UnexpectedRowError('job_enqueue_once returned no row');
	return { ...parseJobRow(row.job as RawRow), existing: row.existing === true };
}

/**
 * Writes the items as queued jobs of `kind` and returns their ids in order.
 * One call (one transaction, all or nothing) when the adapter's reply has no
 * row cap; over PostgREST, one call per {@link JobCalls.pieces} piece of at
 * most `max_rows` items, in order: a failing piece stops the rest, the pieces
 * before it stay written. Items with an `idempotencyKey` are written once per
 * key, so the same batch sent again writes only what is missing and answers
 * every id.
 */
export async function enqueueMany<R extends Job>(
	calls: JobCalls<R>,
	kind: string | JobKind,
	items: readonly EnqueueInput<unknown>[],
): Promise<string[]> {
	if (!Array.isArray(items) || items.length === 0)
		throw invalid('items', 'items must be a non-empty array of what enqueue takes');
	if (items.length > BATCH_MAX) throw invalid('items', `at most ${BATCH_MAX} items per call; got ${items.length}`);
	const name = checkKind(kind);
	const keys = new Set<string>();
	const rows = items.map((input, i) => {
		const c = checkEnqueue(kind, input, `items[${i}].`);
		const item: Record<string, unknown> = { params: c.params ?? {} };
		if (input.idempotencyKey !== undefined) {
			if (keys.has(input.idempotencyKey))
				throw invalid(
					`items[${i}].idempotencyKey`,
					`idempotencyKey ${JSON.stringify(input.idempotencyKey)} names an earlier item too: one key, one job`,
				);
			keys.add(input.idempotencyKey);
			item.idempotency_key = input.idempotencyKey;
		}
		if (input.idempotencyTtlMs !== undefined) item.key_ttl_ms = input.idempotencyTtlMs;
		if (c.payload) item.payload = toBase64(c.payload);
		if (c.maxAttempts !== undefined) item.max_attempts = c.maxAttempts;
		if (c.locale !== undefined) item.locale = c.locale;
		if (c.ownerId !== undefined) item.owner_id = c.ownerId;
		if (c.runAt !== undefined) item.run_at = c.runAt.toISOString();
		if (c.delayMs !== undefined) item.delay_ms = c.delayMs;
		if (c.tags !== undefined) item.tags = c.tags;
		if (c.priority !== undefined) item.priority = c.priority;
		if (c.expireAfterMs !== undefined) item.expire_after_ms = c.expireAfterMs;
		if (c.concurrencyKey !== undefined) item.concurrency_key = c.concurrencyKey;
		return item;
	});
	const ids: string[] = [];
	for (const piece of calls.pieces(rows)) {
		const written = await calls.call('job_enqueue_many', { kind: name, items: piece });
		if (!Array.isArray(written) || written.length !== piece.length)
			throw new UnexpectedRowError(
				`job_enqueue_many returned ${Array.isArray(written) ? written.length : typeof written} rows for ${piece.length} items`,
			);
		for (const row of written as RawRow[]) {
			if (!isJobId(row.id))
				throw new UnexpectedRowError(`job_enqueue_many returned a row without a job id: ${JSON.stringify(row)}`);
			ids.push(row.id);
		}
	}
	return ids;
}

export async function enqueueChild<R extends Job>(
	calls: JobCalls<R>,
	parentId: string,
	kind: string | JobKind,
	input: ChildInput<unknown>,
): Promise<Job> {
	if (!isJobId(parentId)) throw notFound(parentId);
	const name = checkKind(kind);
	const c = checkEnqueue(kind, input);
	return await calls.one('job_enqueue_child', {
		parent_id: parentId,
		kind: name,
		params: c.params,
		payload: c.payload,
		max_attempts: c.maxAttempts,
		locale: c.locale,
		expected_seconds: c.expectedSeconds,
		priority: c.priority,
		tags: c.tags,
		concurrency_key: c.concurrencyKey,
		owner_id: c.ownerId,
	});
}

export async function reschedule<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	options: RescheduleOptions,
): Promise<Job> {
	if (!isJobId(id)) throw notFound(id);
	return await calls.one('job_reschedule', { id, ...startArgs(options) });
}

export async function cancel<R extends Job>(
	calls: JobCalls<R>,
	id: string,
	options: CancelOptions,
): Promise<Job | null> {
	if (!isJobId(id)) return null;
	return await calls.maybeOne('job_cancel', { id, reason: options.reason });
}
