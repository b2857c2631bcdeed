/**
 * Properties of enqueue's options, every field, over both adapters and over
 * public.job_enqueue / job_enqueue_once called as PostgREST would: an input
 * is refused with a typed error naming the field and writes no job, or the
 * job reads back as asked.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/lib/store/job.ts';
import type { EnqueueInput } from '../../src/lib/store/store-options.ts';
import { createUser } from '../helpers/db.ts';
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
	pgArray,
	someOf,
	sqlJsonObject,
	refusedOrStored,
	serviceRole,
	wrongType,
	jsonRoundTrip,
	expectBothOutcomes,
} from './surfaces.ts';

const { f, stores } = await openSurfaces();
const KIND = 'property.enqueue';
let user: string;
beforeAll(async () => {
	user = (await createUser(f.db.sql)).sub;
});

const jobCount = async () => (await f.db.sql`select count(*)::int as n from supabase_jobs.job`)[0]!.n as number;

/** An EnqueueInput whose every field is sometimes good, sometimes hostile, sometimes absent. */
export const enqueueInput = someOf({
	params: orHostile(jsonObject),
	payload: fc.oneof(fc.uint8Array({ maxLength: 64 }), hostileString, fc.constant(null), wrongType),
	maxAttempts: orHostile(fc.integer({ min: 0, max: 101 })),
	locale: orHostile(fc.constantFrom('en', 'pt-BR', 'zh-Hant-TW', 'not a locale!')),
	ownerId: orHostile(fc.constantFrom('USER', randomUUID())),
	runAt: fc.oneof(hostileDate, wrongType),
	delayMs: fc.oneof(fc.integer({ min: 0, max: 86_400_000 }), anyNumber, wrongType),
	tags: orHostile(fc.array(hostileString, { maxLength: 12 })),
	priority: orHostile(fc.integer({ min: -40_000, max: 40_000 })),
	expireAfterMs: orHostile(fc.integer({ min: 1, max: 86_400_000 })),
	concurrencyKey: orHostile(fc.string({ minLength: 1, maxLength: 20 })),
	idempotencyKey: orHostile(fc.uuid()),
	idempotencyTtlMs: orHostile(fc.integer({ min: 0, max: 86_400_000 })),
});

/** The TS fields an enqueue error may name for this input (any field it was given). */
const given = (input: Record<string, unknown>) => ['input', ...Object.keys(input)];

/** The job read back equals what was asked, field by field. */
function expectAsAsked(job: Job, input: Record<string, unknown>): void {
	if (input.params != null) expect(job.params).toEqual(jsonRoundTrip(input.params));
	if (input.maxAttempts != null) expect(job.maxAttempts).toBe(input.maxAttempts);
	if (input.locale != null) expect(job.locale).toBe(input.locale);
	if (input.ownerId != null) expect(job.ownerId).toBe(input.ownerId);
	if (input.tags != null) expect(job.tags).toEqual(input.tags);
	if (input.priority != null) expect(job.priority).toBe(Number(input.priority) + 0); // -0 is the priority 0
	if (input.concurrencyKey != null) expect(job.concurrencyKey).toBe(input.concurrencyKey);
	if (input.idempotencyKey != null) expect(job.idempotencyKey).toBe(input.idempotencyKey);
	if (input.runAt != null) expect(job.availableAt.getTime()).toBe((input.runAt as Date).getTime());
	if (input.delayMs != null)
		expect(Math.abs(job.availableAt.getTime() - job.createdAt.getTime() - (input.delayMs as number))).toBeLessThan(1);
	if (input.expireAfterMs != null)
		expect(
			Math.abs(job.expiresAt!.getTime() - job.availableAt.getTime() - (input.expireAfterMs as number)),
		).toBeLessThan(1);
}

describe.each(stores)('enqueue over $name', ({ store }) => {
	it('refuses every option with an error naming it, or stores the job as asked', async () => {
		const seen = new Set<string>();
		await checkProperty(enqueueInput, async (raw) => {
			const input = { ...raw };
			if (input.ownerId === 'USER') input.ownerId = user;
			seen.add(
				await refusedOrStored({
					call: () => store.enqueue(KIND, input as EnqueueInput),
					snapshot: jobCount,
					refusal: (e) => expectTypedRefusal(e, given(input)),
					stored: async (job) => {
						if ((job as { existing?: boolean }).existing) return;
						expectAsAsked(job, input);
						const [row] = await f.db.sql`select payload from supabase_jobs.job where id = ${job.id}`;
						const payload = input.payload;
						const bytes = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
						if (payload !== undefined)
							expect(row!.payload === null ? null : new Uint8Array(row!.payload)).toEqual(bytes);
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});

/** SQL literals of each argument: good ones and the hostile ones each type can carry. */
const sqlText = fc.oneof(
	fc.constantFrom('', ' ', '\ud83d\ude00', 'a'.repeat(70_000), 'not a locale!', 'pt-BR', "'; select 1; --"),
	fc.string({ maxLength: 20 }).filter((s) => !s.includes('\u0000')),
);
const sqlInterval = fc.constantFrom(
	'-1 seconds',
	'0',
	'-0.000001 seconds',
	'1 millisecond',
	'90 seconds',
	'1 mon',
	'178000000 years',
	'infinity',
	'-infinity',
);
const sqlTime = fc.constantFrom(
	'infinity',
	'-infinity',
	'294276-12-31 23:59:59+00',
	'4713-01-01 00:00:00+00 BC',
	'2027-01-01T00:00:00Z',
);
const sqlInt = fc.oneof(
	fc.constantFrom(-2147483648, 2147483647, 0, -1, 101, 32768, -32769),
	fc.integer({ min: -5, max: 200 }),
);
const sqlJson = fc.oneof(sqlJsonObject, wrongType).map((v) => JSON.stringify(v));
const sqlTags = fc.array(fc.oneof(sqlText, fc.constant(null)), { maxLength: 12 });

const sqlArgs = someOf({
	params: sqlJson,
	max_attempts: sqlInt,
	locale: sqlText,
	run_at: sqlTime,
	delay: sqlInterval,
	tags: sqlTags,
	priority: sqlInt,
	expire_after: sqlInterval,
	concurrency_key: sqlText,
	idempotency_key: sqlText,
	key_ttl: sqlInterval,
}) as fc.Arbitrary<Record<string, string | (string | null)[]>>;

const TYPES: Record<string, string> = {
	params: 'jsonb',
	max_attempts: 'integer',
	locale: 'text',
	run_at: 'timestamptz',
	delay: 'interval',
	tags: 'text[]',
	priority: 'integer',
	expire_after: 'interval',
	concurrency_key: 'text',
	idempotency_key: 'text',
	key_ttl: 'interval',
};

describe('public.job_enqueue and job_enqueue_once called directly', () => {
	it('refuse every argument with 22023 naming it, or store the job as asked', async () => {
		const seen = new Set<string>();
		await checkProperty(sqlArgs, async (args) => {
			const keyed = args.idempotency_key !== undefined;
			if (!keyed) delete args.key_ttl;
			const names = Object.keys(args);
			// Every value goes as text and is cast in SQL: the driver never reinterprets it.
			const call = ['kind => $1', ...names.map((n, i) => `${n} => $${i + 2}::text::${TYPES[n]}`)].join(', ');
			const fn = keyed ? 'job_enqueue_once' : 'job_enqueue';
			const values = names.map((n) => {
				const v = (args as Record<string, unknown>)[n];
				return Array.isArray(v) ? pgArray(v as (string | null)[]) : String(v);
			});
			seen.add(
				await refusedOrStored({
					call: () =>
						as(f.db.sql, serviceRole, async (tx) => {
							const select = keyed ? `(e.job->>'id')::uuid as id, e.existing` : 'e.id, false as existing';
							const [made] = await tx.unsafe(`select ${select}, now()::text as now from public.${fn}(${call}) e`, [
								KIND,
								...values,
							] as never[]);
							return made!;
						}),
					snapshot: jobCount,
					refusal: (e) => expectSqlRefusal(e, ['kind', ...names]),
					stored: async (made) => {
						if (made.existing) return;
						const [row] = await f.db.sql.unsafe(
							`select j.*, j.available_at = coalesce($2::text::timestamptz, $3::text::timestamptz + coalesce($4::text::interval, '0'))
						        as start_ok,
						        j.expires_at is not distinct from j.available_at + $5::text::interval as expiry_ok
						   from supabase_jobs.job j where j.id = $1`,
							[made.id, args.run_at ?? null, made.now, args.delay ?? null, args.expire_after ?? null] as never[],
						);
						expect(row!.start_ok, 'available_at is run_at or now + delay').toBe(true);
						if (args.expire_after != null) expect(row!.expiry_ok, 'expires_at is the start + expire_after').toBe(true);
						if (args.params != null) expect(row!.params).toEqual(JSON.parse(args.params as string));
						if (args.max_attempts != null) expect(row!.max_attempts).toBe(args.max_attempts);
						if (args.locale != null) expect(row!.locale).toBe(args.locale);
						if (args.tags != null) expect(row!.tags).toEqual(args.tags);
						if (args.priority != null) expect(row!.priority).toBe(args.priority);
						if (args.concurrency_key != null) expect(row!.concurrency_key).toBe(args.concurrency_key);
					},
				}),
			);
		});
		expectBothOutcomes(seen);
	});
});
