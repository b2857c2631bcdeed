/**
 * One check per rule, at both layers: the same table of bad values goes to
 * the three enqueue paths (enqueue, an item of enqueueMany, enqueueChild)
 * over both adapters — refused with InvalidJobInputError naming the field the
 * caller wrote, before any round trip — and to the SQL functions called
 * directly, refused with 22023 naming their own argument. Nothing is written
 * on any path.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { InvalidJobInputError } from '../../src/lib/errors.ts';
import type { EnqueueInput } from '../../src/lib/store/store-options.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { as, claimsFor, serviceRole } from '../helpers/db.ts';
import { useRealtimeFixture } from '../realtime/helpers.ts';

const f = await useRealtimeFixture();
const KIND = 'bad.input';

interface BadValue {
	name: string;
	/** What a TypeScript caller passes, and the field the error names. */
	input: EnqueueInput;
	field: string;
	/** The same value as SQL arguments: per function, the argument and its SQL text; absent where SQL's types refuse it first. */
	sql?: { arg: string; type: string; value: unknown; item: [key: string, value: unknown]; child: boolean };
}

const BAD: BadValue[] = [
	{
		name: 'maxAttempts 0',
		input: { maxAttempts: 0 },
		field: 'maxAttempts',
		sql: { arg: 'max_attempts', type: 'integer', value: 0, item: ['max_attempts', 0], child: true },
	},
	{
		name: 'maxAttempts 101',
		input: { maxAttempts: 101 },
		field: 'maxAttempts',
		sql: { arg: 'max_attempts', type: 'integer', value: 101, item: ['max_attempts', 101], child: true },
	},
	{ name: 'maxAttempts 1.5', input: { maxAttempts: 1.5 }, field: 'maxAttempts' },
	{
		name: 'priority 40000',
		input: { priority: 40000 },
		field: 'priority',
		sql: { arg: 'priority', type: 'integer', value: 40000, item: ['priority', 40000], child: true },
	},
	{
		name: 'priority -40000',
		input: { priority: -40000 },
		field: 'priority',
		sql: { arg: 'priority', type: 'integer', value: -40000, item: ['priority', -40000], child: true },
	},
	{ name: 'priority NaN', input: { priority: Number.NaN }, field: 'priority' },
	{
		name: 'delayMs -1000',
		input: { delayMs: -1000 },
		field: 'delayMs',
		sql: { arg: 'delay', type: 'interval', value: '-1 seconds', item: ['delay_ms', -1000], child: false },
	},
	{ name: 'delayMs Infinity', input: { delayMs: Number.POSITIVE_INFINITY }, field: 'delayMs' },
	{
		name: 'delayMs 9e15 (a start in year 287225)',
		input: { delayMs: 9e15 },
		field: 'delayMs',
		sql: { arg: 'delay', type: 'interval', value: '9000000000000 seconds', item: ['delay_ms', 9e15], child: false },
	},
	{
		name: 'delayMs 1e300',
		input: { delayMs: 1e300 },
		field: 'delayMs',
		sql: { arg: 'delay', type: 'interval', value: '3651 days', item: ['delay_ms', 1e300], child: false },
	},
	{
		name: 'expireAfterMs 1e300',
		input: { expireAfterMs: 1e300 },
		field: 'expireAfterMs',
		sql: { arg: 'expire_after', type: 'interval', value: '3651 days', item: ['expire_after_ms', 1e300], child: false },
	},
	{ name: 'idempotencyTtlMs 1e300', input: { idempotencyTtlMs: 1e300 }, field: 'idempotencyTtlMs' },
	{ name: 'runAt the last Date (year 275760)', input: { runAt: new Date(8.64e15) }, field: 'runAt' },
	{ name: 'runAt the first Date (year -271821)', input: { runAt: new Date(-8.64e15) }, field: 'runAt' },
	{ name: 'a payload that is a number', input: { payload: 42 as never }, field: 'payload' },
	{
		name: 'expireAfterMs 0',
		input: { expireAfterMs: 0 },
		field: 'expireAfterMs',
		sql: { arg: 'expire_after', type: 'interval', value: '0 seconds', item: ['expire_after_ms', 0], child: false },
	},
	{ name: 'runAt an invalid Date', input: { runAt: new Date(Number.NaN) }, field: 'runAt' },
	{
		name: 'eleven tags',
		input: { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
		field: 'tags',
		sql: {
			arg: 'tags',
			type: 'text[]',
			value: Array.from({ length: 11 }, (_, i) => `t${i}`),
			item: ['tags', Array.from({ length: 11 }, (_, i) => `t${i}`)],
			child: true,
		},
	},
	{
		name: 'an empty tag',
		input: { tags: [''] },
		field: 'tags',
		sql: { arg: 'tags', type: 'text[]', value: [''], item: ['tags', ['']], child: true },
	},
	{
		name: 'an empty concurrencyKey',
		input: { concurrencyKey: '' },
		field: 'concurrencyKey',
		sql: { arg: 'concurrency_key', type: 'text', value: '', item: ['concurrency_key', ''], child: true },
	},
	{
		name: 'a locale that is no language tag',
		input: { locale: 'not a locale!' },
		field: 'locale',
		sql: { arg: 'locale', type: 'text', value: 'not a locale!', item: ['locale', 'not a locale!'], child: true },
	},
	{
		name: 'params that are an array',
		input: { params: [] as never },
		field: 'params',
		sql: { arg: 'params', type: 'jsonb', value: [], item: ['params', []], child: true },
	},
	{ name: 'an ownerId that is no UUID', input: { ownerId: 'someone' }, field: 'ownerId' },
];

const jobCount = async () => (await f.db.sql`select count(*)::int as n from supabase_jobs.job`)[0]!.n as number;

/** Runs `call`, expecting a refusal, and checks that no job row was written. */
async function refused(call: () => Promise<unknown>): Promise<unknown> {
	const before = await jobCount();
	let error: unknown;
	await call().then(
		() => (error = new Error('accepted')),
		(e: unknown) => (error = e),
	);
	expect(await jobCount(), 'nothing was written').toBe(before);
	return error;
}

let parentId: string;
beforeAll(async () => {
	await f.db.sql`select supabase_jobs.register_job_kind(${KIND}, 'jobs')`;
	const parent = await f.worker.enqueue(KIND);
	parentId = (await f.worker.claim(parent.id))!.id;
});

const stores = {
	'postgres.js': () => new JobStore(postgresAdapter(f.db.sql, { claims: claimsFor(serviceRole) }), { table: 'jobs' }),
	'supabase-js': () => new JobStore(f.harness.adapter({ role: 'service_role' })),
};

describe.each(Object.entries(stores))('JobStore over %s refuses each bad value on every enqueue path', (_, make) => {
	const store = make();
	it.each(BAD)('$name', async ({ input, field }) => {
		const one = await refused(() => store.enqueue(KIND, input));
		expect(one).toBeInstanceOf(InvalidJobInputError);
		expect(one).toMatchObject({ field, details: `field=${field}` });
		const sentence = (one as Error).message;

		const many = await refused(() => store.enqueueMany(KIND, [{}, input]));
		expect(many).toBeInstanceOf(InvalidJobInputError);
		expect(many).toMatchObject({ field: `items[1].${field}`, message: `items[1]: ${sentence}` });

		const child = await refused(() => store.enqueueChild(parentId, KIND, input as never));
		expect(child).toBeInstanceOf(InvalidJobInputError);
		expect(child).toMatchObject({ field, message: sentence });
	});
});

describe('the SQL functions refuse the same values with 22023 naming their argument', () => {
	const sqlError = (e: unknown) => e as { code?: string; detail?: string };
	it.each(BAD.filter((b) => b.sql))('$name', async ({ sql }) => {
		const { arg, type, value, item, child } = sql!;
		const param = (tx: { json(v: unknown): unknown }) => (type === 'jsonb' ? tx.json(value) : value) as never;

		const one = sqlError(
			await refused(() =>
				as(f.db.sql, serviceRole, (tx) =>
					tx.unsafe(`select * from public.job_enqueue(kind => $1, ${arg} => $2::${type})`, [KIND, param(tx)]),
				),
			),
		);
		expect(one).toMatchObject({ code: '22023', detail: `field=${arg}` });

		const items = [{}, Object.fromEntries([item])] as never;
		const many = sqlError(
			await refused(() =>
				as(f.db.sql, serviceRole, (tx) => tx`select * from public.job_enqueue_many(${KIND}, ${tx.json(items)})`),
			),
		);
		expect(many).toMatchObject({ code: '22023', detail: `field=items[1].${item[0]}` });

		if (!child) return;
		const fromParent = sqlError(
			await refused(() =>
				as(f.db.sql, serviceRole, (tx) =>
					tx.unsafe(`select * from public.job_enqueue_child(parent_id => $1, kind => $2, ${arg} => $3::${type})`, [
						parentId,
						KIND,
						param(tx),
					]),
				),
			),
		);
		expect(fromParent).toMatchObject({ code: '22023', detail: `field=${arg}` });
	});
});

describe.each(Object.entries(stores))('JobStore over %s takes any delay in range as PostgreSQL reads it', (_, make) => {
	const store = make();
	it.each([
		['the smallest number above 0 (5e-324: "5e-324 seconds" is no interval)', Number.MIN_VALUE, 0],
		['a fraction of a microsecond', 1e-7, 0],
		['a day and a half millisecond', 86_400_000.5, 86_400_000.5],
	])('delayMs %s', async (_, delayMs, expectedMs) => {
		const job = await store.enqueue(KIND, { delayMs });
		const [row] = await f.db.sql`select extract(epoch from available_at - created_at) * 1000 as ms
			from supabase_jobs.job where id = ${job.id}`;
		expect(Number(row!.ms)).toBeCloseTo(expectedMs, 0);
	});
});
