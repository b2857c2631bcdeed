/**
 * Properties of a worker's log lines over both adapters (log) and of
 * public.job_log called directly: a call is refused with a typed error naming
 * the line and field (`lines[1].level`, `dropped`) and the job's log is
 * unchanged, or every line reads back as written, in order (its `at` held
 * within the attempt: not before it started, not after the write).
 */
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/lib/store/job-store.ts';
import type { LogLine } from '../../src/lib/store/job-timeline.ts';
import { checkProperty, fc } from '../helpers/property.ts';
import {
	anyNumber,
	as,
	expectSqlRefusal,
	expectTypedRefusal,
	hostileDate,
	hostileString,
	jsonObject,
	openSurfaces,
	orHostile,
	refusedOrStored,
	serviceRole,
	sqlJsonObject,
	wrongType,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();
const KIND = 'property.log';

async function runningJob(store: JobStore): Promise<{ id: string; attempt: number; startedAt: Date }> {
	const job = await store.enqueue(KIND);
	const claimed = (await store.claim(job.id))!;
	return { id: job.id, attempt: claimed.attempts, startedAt: claimed.startedAt! };
}

const logOf = async (id: string) =>
	(
		await f.db
			.sql`select seq, level, message, fields, user_facing, at from supabase_jobs.job_logs where job_id = ${id} order by seq`
	).map((r) => ({ ...r }));

const line = fc.oneof(
	{
		weight: 6,
		arbitrary: fc.record(
			{
				level: orHostile(fc.constantFrom('debug', 'info', 'warn', 'error')),
				message: fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 40 }) }, hostileString, wrongType),
				fields: fc.oneof({ weight: 3, arbitrary: jsonObject }, fc.constant(null), wrongType),
				userFacing: orHostile(fc.boolean()),
				at: fc.oneof(hostileDate, wrongType),
			},
			{ requiredKeys: ['level', 'message'] },
		),
	},
	wrongType,
);
const call = fc.record({
	lines: fc.oneof({ weight: 8, arbitrary: fc.array(line, { maxLength: 3 }) }, wrongType),
	dropped: fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 5 }), anyNumber, wrongType),
});

describe.each(stores)('log lines over $name', ({ store }) => {
	it('log refuses a line naming it and its field, or every line reads back as written', async () => {
		const seen = new Set<string>();
		await checkProperty(call, async ({ lines, dropped }) => {
			const job = await runningJob(store);
			seen.add(
				await refusedOrStored({
					call: () => store.log(job.id, lines as LogLine[], { dropped: dropped as number, attempt: job.attempt }),
					snapshot: () => logOf(job.id),
					refusal: (e) => expectTypedRefusal(e, ['lines', 'dropped']),
					stored: async (n) => {
						const asked = lines as LogLine[];
						expect(n).toBe(asked.length);
						const after = new Date();
						const got = (await logOf(job.id)).filter((r) => r.seq > 0);
						expect(got.map((r) => [r.level, r.message, r.fields, r.user_facing])).toEqual(
							asked.map((l) => [
								l.level,
								l.message,
								l.fields == null ? null : JSON.parse(JSON.stringify(l.fields)),
								l.userFacing ?? false,
							]),
						);
						got.forEach((r, i) => {
							const at = (r.at as Date).getTime();
							expect(at).toBeGreaterThanOrEqual(Math.floor(job.startedAt.getTime()));
							expect(at).toBeLessThanOrEqual(after.getTime() + 1);
							const wanted = asked[i]!.at?.getTime();
							if (wanted !== undefined && wanted >= job.startedAt.getTime() && wanted <= at) expect(at).toBe(wanted);
						});
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});

const sqlLine = fc.oneof(
	{
		weight: 6,
		arbitrary: fc.record(
			{
				level: fc.oneof(fc.constantFrom('debug', 'info', 'warn', 'error', 'INFO', ''), wrongType),
				message: fc.oneof(fc.string({ maxLength: 40 }), fc.constant('m'.repeat(5000)), wrongType),
				fields: fc.oneof(sqlJsonObject, wrongType),
				user_facing: fc.oneof(fc.boolean(), wrongType),
				at: fc.oneof(
					fc.constantFrom(
						'2026-01-01T00:00:00Z',
						'9999-12-31T23:59:59Z',
						'0000-01-01T00:00:00Z',
						'2026-13-45T99:99:99Z',
						'now',
					),
					wrongType,
				),
			},
			{ requiredKeys: ['level', 'message'] },
		),
	},
	wrongType,
);

describe('public.job_log called directly', () => {
	it('refuses a line with 22023 naming it and its field, or every line reads back as written', async () => {
		const seen = new Set<string>();
		const worker = stores[0]!.store;
		const sqlCall = fc.record({
			lines: fc.oneof({ weight: 8, arbitrary: fc.array(sqlLine, { maxLength: 3 }) }, wrongType),
			dropped: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom(-1, 2147483647), fc.constant(null)),
		});
		await checkProperty(sqlCall, async ({ lines, dropped }) => {
			const job = await runningJob(worker);
			const text = JSON.stringify(lines);
			seen.add(
				await refusedOrStored({
					call: () =>
						as(f.db.sql, serviceRole, async (tx) =>
							Number(
								(
									await tx`select public.job_log(${job.id}::uuid, ${text}::text::jsonb, ${job.attempt}::integer, dropped => ${dropped}::integer) as n`
								)[0]!.n,
							),
						),
					snapshot: () => logOf(job.id),
					refusal: (e) => expectSqlRefusal(e, ['lines', 'dropped']),
					stored: async (n) => {
						const asked = JSON.parse(text) as Record<string, unknown>[];
						expect(n).toBe(asked.length);
						const got = (await logOf(job.id)).filter((r) => r.seq > 0);
						expect(got.map((r) => [r.level, r.message, r.fields, r.user_facing])).toEqual(
							asked.map((l) => [l.level, l.message, l.fields ?? null, l.user_facing ?? false]),
						);
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});
