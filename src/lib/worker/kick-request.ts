/**
 * The body of a wake-up (see supabase/schemas/13_kick.sql):
 * `{ job_id, job_table, kind, count, reason }`, every field optional.
 */
import { z } from 'zod';

/**
 * The wake-up as the worker reads it.
 */
export interface KickRequest {
	/** The job to claim; null means "drain": claim what is queued with claimNext. */
	jobId: string | null;
	/** The job table (`jobs`, or `schema.name` as supabase_jobs.table_label writes it); null means the store's table. */
	jobTable: string | null;
	/** Only this kind; null means every kind the worker handles. */
	kind: string | null;
	/** How many jobs the kick announced (a hint: a drain goes on until nothing is left). */
	count: number | null;
	reason: string | null;
}

const kickSchema = z
	.object({
		job_id: z.uuid().nullish(),
		job_table: z.string().min(1).max(200).nullish(),
		kind: z.string().min(1).max(200).nullish(),
		count: z.number().int().min(0).nullish(),
		reason: z.string().max(100).nullish(),
	})
	.loose();

/**
 * Reads a wake-up body (empty body = drain everything). Throws a TypeError
 * with a readable message for anything else.
 *
 * @example
 * ```ts
 * const kick = parseKickRequest(await req.text());
 * ```
 */
export function parseKickRequest(text: string): KickRequest {
	let raw: unknown = {};
	if (text.trim() !== '') {
		try {
			raw = JSON.parse(text);
		} catch {
			throw new TypeError('the body must be JSON: {"job_id": "<uuid>"} or {} to drain');
		}
	}
	const parsed = kickSchema.safeParse(raw);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		throw new TypeError(`invalid wake-up: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
	}
	const body = parsed.data;
	return {
		jobId: body.job_id ?? null,
		jobTable: body.job_table ?? null,
		kind: body.kind ?? null,
		count: body.count ?? null,
		reason: body.reason ?? null,
	};
}
