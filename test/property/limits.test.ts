/**
 * Properties of a kind's concurrency and rate limits over both adapters
 * (setConcurrency, setRateLimit) and of public.job_set_concurrency /
 * job_set_rate_limit called directly: a limit is refused with a typed error
 * naming the field and the kind's limits are unchanged, or they read back as set.
 */
import { describe, expect, it } from 'vitest';
import type { ConcurrencyLimits, RateLimit } from '../../src/lib/store/store-options.ts';
import { checkProperty, fc } from '../helpers/property.ts';
import {
	anyNumber,
	as,
	expectSqlRefusal,
	expectTypedRefusal,
	hostileString,
	openSurfaces,
	refusedOrStored,
	serviceRole,
	someOf,
	wrongType,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();

const kind = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('limits.a', 'limits.b') }, hostileString, wrongType);
const count = fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 1000 }) }, anyNumber, wrongType);

/** Every kind's limits in the jobs table. */
const limits = async () =>
	(
		await f.db.sql`select kind, max_running, max_running_per_key, rate_starts, rate_per_ms, paused_at
		                 from supabase_jobs.kind_limits where job_table = 'jobs' order by kind`
	).map((r) => ({ ...r }));
const limitsOf = async (k: string) =>
	(await limits()).find((r) => r.kind === k) ?? {
		max_running: null,
		max_running_per_key: null,
		rate_starts: null,
		rate_per_ms: null,
	};

const concurrency = fc.record({
	kind,
	limits: fc.oneof({ weight: 6, arbitrary: someOf({ maxRunning: count, maxRunningPerKey: count }) }, wrongType),
});
const rate = fc.record({
	kind,
	limit: fc.oneof(
		{
			weight: 6,
			arbitrary: someOf({
				starts: fc.oneof(fc.integer({ min: 0, max: 100_001 }), anyNumber),
				perMs: fc.oneof(fc.integer({ min: 99, max: 86_400_001 }), anyNumber),
			}),
		},
		fc.constant(null),
		wrongType,
	),
});

describe.each(stores)('limits over $name', ({ store }) => {
	it('setConcurrency refuses a limit naming it, or the kind reads back with those limits', async () => {
		const seen = new Set<string>();
		await checkProperty(concurrency, async ({ kind, limits: asked }) => {
			seen.add(
				await refusedOrStored({
					call: () => store.setConcurrency(kind as string, asked as ConcurrencyLimits),
					snapshot: limits,
					refusal: (e) => expectTypedRefusal(e, ['kind', 'limits', 'maxRunning', 'maxRunningPerKey']),
					stored: async () => {
						const row = await limitsOf(kind as string);
						const a = asked as ConcurrencyLimits;
						expect(row.max_running).toBe(a.maxRunning ?? null);
						expect(row.max_running_per_key).toBe(a.maxRunningPerKey ?? null);
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});

	it('setRateLimit refuses a limit naming it, or the kind reads back with that limit', async () => {
		const seen = new Set<string>();
		await checkProperty(rate, async ({ kind, limit }) => {
			seen.add(
				await refusedOrStored({
					call: () => store.setRateLimit(kind as string, limit as RateLimit | null),
					snapshot: limits,
					refusal: (e) => expectTypedRefusal(e, ['kind', 'limit', 'starts', 'perMs']),
					stored: async () => {
						const row = await limitsOf(kind as string);
						const a = limit as RateLimit | null;
						expect(row.rate_starts).toBe(a?.starts ?? null);
						expect(row.rate_per_ms).toBe(a?.perMs ?? null);
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});

const sqlKind = fc.oneof(
	{ weight: 6, arbitrary: fc.constantFrom('limits.a', 'limits.b') },
	fc.constantFrom('', ' ', 'a b', 'x'.repeat(65), '\ud83d\ude00'),
	fc.constant(null),
);
const sqlCount = fc.oneof(
	fc.integer({ min: -2, max: 1000 }),
	fc.constantFrom(-2147483648, 2147483647, 100_001, 86_400_001, 99),
	fc.constant(null),
);

describe('public.job_set_concurrency and job_set_rate_limit called directly', () => {
	it('job_set_concurrency refuses with 22023 naming the argument, or the kind reads back with those limits', async () => {
		const seen = new Set<string>();
		await checkProperty(
			fc.record({ kind: sqlKind, max_running: sqlCount, max_running_per_key: sqlCount }),
			async (a) => {
				seen.add(
					await refusedOrStored({
						call: () =>
							as(
								f.db.sql,
								serviceRole,
								(tx) =>
									tx`select public.job_set_concurrency(${a.kind}::text, ${a.max_running}::integer, ${a.max_running_per_key}::integer)`,
							),
						snapshot: limits,
						refusal: (e) => expectSqlRefusal(e, ['kind', 'max_running', 'max_running_per_key']),
						stored: async () => {
							const row = await limitsOf(a.kind!);
							expect(row.max_running).toBe(a.max_running);
							expect(row.max_running_per_key).toBe(a.max_running_per_key);
						},
					}),
				);
			},
		);
		expectBothOutcomes(seen);
	});

	it('job_set_rate_limit refuses with 22023 naming the argument, or the kind reads back with that limit', async () => {
		const seen = new Set<string>();
		await checkProperty(fc.record({ kind: sqlKind, starts: sqlCount, per_ms: sqlCount }), async (a) => {
			seen.add(
				await refusedOrStored({
					call: () =>
						as(
							f.db.sql,
							serviceRole,
							(tx) => tx`select public.job_set_rate_limit(${a.kind}::text, ${a.starts}::integer, ${a.per_ms}::integer)`,
						),
					snapshot: limits,
					refusal: (e) => expectSqlRefusal(e, ['kind', 'starts', 'per_ms']),
					stored: async () => {
						const row = await limitsOf(a.kind!);
						expect(row.rate_starts).toBe(a.starts);
						expect(row.rate_per_ms).toBe(a.per_ms);
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});
