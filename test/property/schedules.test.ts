/**
 * Properties of recurring schedules over both adapters (syncSchedules) and of
 * public.job_sync_schedules called directly: a set is refused whole with a
 * typed error naming the schedule's field (`schedules["nightly"].cron`) and
 * the stored set is unchanged, or the stored set reads back as the one given.
 */
import { describe, expect, it } from 'vitest';
import type { JobSchedule } from '../../src/lib/store/job-schedule.ts';
import { checkProperty, fc } from '../helpers/property.ts';
import {
	as,
	expectSqlRefusal,
	expectTypedRefusal,
	hostileString,
	openSurfaces,
	refusedOrStored,
	serviceRole,
	sqlJsonObject,
	wrongType,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();

const GOOD_CRON = [
	'* * * * *',
	'0 2 * * *',
	'*/5 * * * *',
	'0 0 1 jan *',
	'@daily',
	' 0 3 * * 1-5 ',
	'30 seconds',
	'0 0 $ * *',
];
const BAD_CRON = [
	'',
	'61 * * * *',
	'0 0 31 2 *',
	'* * * *',
	'*/0 * * * *',
	'0 24 * * *',
	'@sometimes',
	'0 0 * * 8',
	'\t* * * * *',
	'* * * * *\n',
	'0-70 * * * *',
	'5/15 * * * *',
	'1e3 seconds',
	'0 seconds',
	'60 seconds',
];

const cron = fc.oneof(fc.constantFrom(...GOOD_CRON), fc.constantFrom(...BAD_CRON), hostileString, wrongType);
const name = fc.oneof(
	{ weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,10}$/) },
	fc.constantFrom('Nightly', '-x', 'a'.repeat(64), 'a b', 'ä'),
	hostileString,
	wrongType,
);
const kind = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('report.build', 'mail') }, hostileString, wrongType);
const params = fc.oneof({ weight: 4, arbitrary: sqlJsonObject }, wrongType);

const schedule = fc.record({ name, kind, cron, params }, { requiredKeys: ['name', 'cron'] });
const schedules = fc.array(schedule, { maxLength: 3 });

/** The schedules the database holds for the jobs table, as a sorted list. */
const stored = async () =>
	(await f.db.sql`select name, kind, cron, params from supabase_jobs.schedules where job_table = 'jobs'`)
		.map((r) => ({ ...r }))
		.sort(byName);
const byName = (a: Record<string, unknown>, b: Record<string, unknown>) => (String(a.name) < String(b.name) ? -1 : 1);

/** What the database should hold after syncing `set`: each schedule, its cron trimmed, params defaulting to {}. */
const expected = (set: readonly Record<string, unknown>[]) =>
	set
		.map((s) => ({
			name: s.name,
			kind: s.kind,
			cron: (s.cron as string).replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, ''),
			params: s.params ?? {},
		}))
		.sort(byName);

describe.each(stores)('syncSchedules over $name', ({ store }) => {
	it('refuses a set naming the schedule and field, or stores exactly that set', async () => {
		const seen = new Set<string>();
		await checkProperty(schedules, async (set) => {
			seen.add(
				await refusedOrStored({
					call: () => store.syncSchedules(set as unknown as JobSchedule[]),
					snapshot: stored,
					refusal: (e) => expectTypedRefusal(e, ['schedules']),
					stored: async (n) => {
						expect(n).toBe(set.length);
						expect(await stored()).toEqual(expected(set));
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});

describe('public.job_sync_schedules called directly', () => {
	it('refuses a set with 22023 naming the schedule and field, or stores exactly that set', async () => {
		const seen = new Set<string>();
		const body = fc.oneof(
			{ weight: 6, arbitrary: schedules.map((s) => s as unknown) },
			wrongType,
			fc.array(wrongType, { maxLength: 2 }),
		);
		await checkProperty(body, async (set) => {
			const text = JSON.stringify(set);
			// jsonb holds no NUL and no lone surrogate: no SQL caller can send one.
			fc.pre(!/\\u(0000|d[89a-f])/i.test(text));
			seen.add(
				await refusedOrStored({
					call: () =>
						as(
							f.db.sql,
							serviceRole,
							async (tx) =>
								(await tx.unsafe(`select public.job_sync_schedules($1::text::jsonb) as n`, [text]))[0]!.n as number,
						),
					snapshot: stored,
					refusal: (e) => expectSqlRefusal(e, ['schedules']),
					stored: async (n) => {
						const list = JSON.parse(text) as Record<string, unknown>[];
						expect(n).toBe(list.length);
						expect(await stored()).toEqual(expected(list));
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});
