/**
 * The screen's reads: one job, a page of recent jobs, a job's children, why
 * queued jobs wait, a queue position, and the phase timings plans fit from.
 */
import { LIST_MAX } from '../internal/limits.ts';
import { JOB_STATUSES } from '../state.ts';
import type { PhaseTimings } from '../toolkit/phase-timings.ts';
import type { RawRow } from './adapter.ts';
import { checkInt, checkTags, invalid, isJobId, kindName, notFound } from './input-checks.ts';
import type { JobCalls } from './job-calls.ts';
import type { JobKind } from './job-kind.ts';
import { cursorOf, readTimings, UnexpectedRowError, type Job } from './job.ts';
import type { HoldReason, JobPage, ListRecentOptions } from './store-options.ts';

export async function listRecent<R extends Job>(calls: JobCalls<R>, options: ListRecentOptions): Promise<JobPage<R>> {
	const limit = checkInt('limit', options.limit) ?? 20;
	for (const s of [...(options.statuses ?? []), ...(options.status ? [options.status] : [])]) {
		if (!(JOB_STATUSES as readonly string[]).includes(s))
			throw invalid(options.status ? 'status' : 'statuses', `unknown job status ${String(s)}`);
	}
	const filter = {
		kind: options.kind === undefined ? undefined : kindName(options.kind),
		status: options.status,
		statuses: options.statuses,
		tags: checkTags('tags', options.tags),
	};
	// One row past the page says whether another page exists, so a count that is a
	// multiple of `limit` does not end on an empty page.
	const ask = limit >= 1 && limit < LIST_MAX ? limit + 1 : limit;
	const rows = await calls.rows('job_list_recent', { ...filter, limit: ask, cursor: options.cursor ?? undefined });
	const page = rows.slice(0, limit);
	const last = page.at(-1);
	let more = rows.length > limit;
	if (!more && last && ask === limit && page.length === limit) {
		// At the SQL ceiling there is no extra row to ask for: one short read answers instead.
		more = (await calls.rows('job_list_recent', { ...filter, limit: 1, cursor: cursorOf(last) })).length > 0;
	}
	// The cursor is the last row's as sent: a row left out as unreadable does not stop the next page.
	return { jobs: calls.readable(page), nextCursor: more && last ? cursorOf(last) : null };
}

export async function children<R extends Job>(calls: JobCalls<R>, parentId: string): Promise<R[]> {
	if (!isJobId(parentId)) throw notFound(parentId);
	return await calls.many('job_children', { parent_id: parentId });
}

const heldBy = (value: unknown): HoldReason['heldBy'] =>
	value === 'key' || value === 'paused' || value === 'rate' ? value : 'kind';

export async function holdReasons<R extends Job>(
	calls: JobCalls<R>,
	ids: readonly string[],
): Promise<Map<string, HoldReason>> {
	const known = ids.filter((id) => isJobId(id));
	if (known.length === 0) return new Map();
	const rows = await calls.rows('job_hold_reasons', { ids: known });
	return new Map(
		rows.map((r) => [
			String(r.id),
			{
				kind: String(r.kind),
				heldBy: heldBy(r.held_by),
				running: Number(r.running ?? 0),
				maxRunning: Number(r.max_running ?? 0),
			},
		]),
	);
}

export async function queuePosition<R extends Job>(calls: JobCalls<R>, id: string): Promise<number | null> {
	if (!isJobId(id)) throw notFound(id);
	const ahead = await calls.call('job_queue_position', { id });
	if (ahead === null) return null;
	if (typeof ahead !== 'number' || !Number.isInteger(ahead) || ahead < 0) {
		throw new UnexpectedRowError(`job_queue_position returned ${JSON.stringify(ahead)}, not a count`);
	}
	return ahead;
}

export async function phaseHistory<R extends Job>(
	calls: JobCalls<R>,
	kind: string | JobKind,
	limit: number,
): Promise<PhaseTimings[]> {
	const rows = await calls.call('job_phase_history', { kind: kindName(kind), limit: checkInt('limit', limit) });
	if (!Array.isArray(rows)) throw new UnexpectedRowError(`job_phase_history returned ${typeof rows}, not rows`);
	return rows.map((row) => {
		const timings = readTimings((row as RawRow).timings);
		if (timings === null) throw new UnexpectedRowError('job_phase_history returned a row without timings');
		return timings;
	});
}
