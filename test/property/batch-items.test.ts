/**
 * Properties of enqueueMany's items over both adapters and of
 * public.job_enqueue_many called directly: a batch is refused whole with a
 * typed error naming the item and its field (`items[2].delayMs`) and writes no
 * job, or every job reads back as its item asked, in order.
 */
import { describe, expect, it } from 'vitest';
import type { EnqueueInput } from '../../src/lib/store/store-options.ts';
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
	someOf,
	sqlJsonObject,
	wrongType,
	jsonRoundTrip,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();
const KIND = 'property.batch';

const jobCount = async () => (await f.db.sql`select count(*)::int as n from supabase_jobs.job`)[0]!.n as number;

/** One item: a few fields, each good or hostile; sometimes not an object at all. */
const item = fc.oneof(
	{
		weight: 6,
		arbitrary: someOf(
			{
				params: orHostile(jsonObject),
				payload: fc.oneof(fc.uint8Array({ maxLength: 16 }), hostileString, fc.constant(null)),
				maxAttempts: orHostile(fc.integer({ min: 0, max: 101 })),
				locale: orHostile(fc.constantFrom('en', 'pt-BR')),
				runAt: fc.oneof(hostileDate, wrongType),
				delayMs: fc.oneof(fc.integer({ min: 0, max: 86_400_000 }), anyNumber),
				tags: orHostile(fc.array(hostileString, { maxLength: 11 })),
				priority: orHostile(fc.integer({ min: -40_000, max: 40_000 })),
				expireAfterMs: orHostile(fc.integer({ min: 1, max: 86_400_000 })),
				concurrencyKey: orHostile(fc.string({ minLength: 1, maxLength: 20 })),
				idempotencyKey: fc.string({ maxLength: 8 }),
			},
			2,
		),
	},
	wrongType,
);

const items = fc.oneof(
	{ weight: 8, arbitrary: fc.array(item, { minLength: 1, maxLength: 4 }) },
	fc.constant([]),
	wrongType,
);

/** The TS fields a batch error may name: items, or a field of one of them. */
const FIELDS = [
	'items',
	'input',
	'params',
	'payload',
	'maxAttempts',
	'locale',
	'runAt',
	'delayMs',
	'tags',
	'priority',
	'expireAfterMs',
	'concurrencyKey',
	'idempotencyKey',
];

describe.each(stores)('enqueueMany over $name', ({ store }) => {
	it('refuses a batch naming the item and field, or stores every item as asked, in order', async () => {
		const seen = new Set<string>();
		await checkProperty(items, async (batch) => {
			seen.add(
				await refusedOrStored({
					call: () => store.enqueueMany(KIND, batch as EnqueueInput[]),
					snapshot: jobCount,
					refusal: (e) => expectTypedRefusal(e, FIELDS),
					stored: async (ids) => {
						const list = batch as Record<string, unknown>[];
						expect(ids).toHaveLength(list.length);
						const jobs = await Promise.all(ids.map((id) => store.get(id)));
						jobs.forEach((job, i) => {
							const asked = list[i]!;
							expect(job.kind).toBe(KIND);
							// A keyed item answers with the job its key already names, perhaps from an earlier run.
							if (asked.idempotencyKey != null) return;
							if (asked.params != null) expect(job.params).toEqual(jsonRoundTrip(asked.params));
							if (asked.maxAttempts != null) expect(job.maxAttempts).toBe(asked.maxAttempts);
							if (asked.locale != null) expect(job.locale).toBe(asked.locale);
							if (asked.tags != null) expect(job.tags).toEqual(asked.tags);
							if (asked.priority != null) expect(job.priority).toBe(Number(asked.priority) + 0); // -0 is the priority 0
							if (asked.concurrencyKey != null) expect(job.concurrencyKey).toBe(asked.concurrencyKey);
							if (asked.runAt != null) expect(job.availableAt.getTime()).toBe((asked.runAt as Date).getTime());
							if (asked.delayMs != null)
								expect(
									Math.abs(job.availableAt.getTime() - job.createdAt.getTime() - (asked.delayMs as number)),
								).toBeLessThan(1);
						});
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});

/** An item as job_enqueue_many takes it: SQL's names, any JSON value in each. */
const sqlItem = fc.oneof(
	{
		weight: 6,
		arbitrary: someOf(
			{
				params: fc.oneof(sqlJsonObject, wrongType),
				payload: fc.oneof(fc.constantFrom('AAEC', 'not base64!', ''), wrongType),
				max_attempts: fc.oneof(fc.integer({ min: 0, max: 101 }), anyNumber, wrongType),
				locale: fc.oneof(fc.constantFrom('en', 'pt-BR', 'not a locale!'), wrongType),
				run_at: fc.oneof(
					fc.constantFrom('2027-01-01T00:00:00Z', 'infinity', '294277-01-01T00:00:00Z', 'yesterday', ''),
					wrongType,
				),
				delay_ms: fc.oneof(fc.integer({ min: 0, max: 86_400_000 }), anyNumber, wrongType),
				tags: fc.oneof(fc.array(fc.string({ maxLength: 70 }), { maxLength: 11 }), wrongType),
				priority: fc.oneof(fc.integer({ min: -40_000, max: 40_000 }), anyNumber, wrongType),
				expire_after_ms: fc.oneof(fc.integer({ min: 1, max: 86_400_000 }), anyNumber, wrongType),
				concurrency_key: fc.oneof(fc.string({ maxLength: 20 }), wrongType),
			},
			2,
		),
	},
	wrongType,
);
const sqlItems = fc.oneof({ weight: 8, arbitrary: fc.array(sqlItem, { minLength: 1, maxLength: 4 }) }, wrongType);
const SQL_FIELDS = [
	'items',
	'params',
	'payload',
	'max_attempts',
	'locale',
	'run_at',
	'delay_ms',
	'tags',
	'priority',
	'expire_after_ms',
	'concurrency_key',
];

describe('public.job_enqueue_many called directly', () => {
	it('refuses a batch with 22023 naming the item and field, or stores every item as asked', async () => {
		const seen = new Set<string>();
		await checkProperty(sqlItems, async (batch) => {
			// JSON.stringify drops NaN and Infinity to null: send the JSON text the caller would.
			const text = JSON.stringify(batch);
			seen.add(
				await refusedOrStored({
					call: () =>
						as(f.db.sql, serviceRole, async (tx) =>
							(await tx.unsafe(`select id from public.job_enqueue_many($1, $2::text::jsonb)`, [KIND, text])).map(
								(r) => r.id as string,
							),
						),
					snapshot: jobCount,
					refusal: (e) => expectSqlRefusal(e, SQL_FIELDS),
					stored: async (ids) => {
						const list = JSON.parse(text) as Record<string, unknown>[];
						expect(ids).toHaveLength(list.length);
						for (const [i, id] of ids.entries()) {
							const asked = list[i]!;
							const [row] = await f.db.sql`select * from supabase_jobs.job where id = ${id}`;
							if (asked.params != null) expect(row!.params).toEqual(asked.params);
							if (asked.max_attempts != null) expect(row!.max_attempts).toBe(asked.max_attempts);
							if (asked.locale != null) expect(row!.locale).toBe(asked.locale);
							if (asked.tags != null) expect(row!.tags).toEqual(asked.tags);
							if (asked.priority != null) expect(row!.priority).toBe(asked.priority);
							if (asked.concurrency_key != null) expect(row!.concurrency_key).toBe(asked.concurrency_key);
						}
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});
