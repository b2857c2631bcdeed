/**
 * Questions and try again in SQL (16_questions_and_try_again.sql): who reads
 * and writes the questions table, what the reclaim schedule's question expiry
 * touches, when questions are forgotten, the shapes check_answer checks, and
 * the bound of a replay.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { checkProperty, fc } from '../helpers/property.ts';
import { createJobTable } from '../store/harness.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

async function code(p: Promise<unknown>): Promise<string | null> {
	try {
		await p;
		return null;
	} catch (e) {
		return (e as { code: string }).code;
	}
}

/** A job of `owner`, claimed, that asked a yes/no question due in `timeout`. */
async function asking(owner: string, timeout = '1 hour') {
	const [{ id }] = await db.sql`select id from job_enqueue('asks', owner_id => ${owner})`;
	await db.sql`select job_claim(${id})`;
	await db.sql`select job_ask(${id}, 'ask-1', 'Sure?', '{"type": "boolean"}', ${timeout}::interval)`;
	return id as string;
}

describe('the questions table', () => {
	it('a user reads the questions of their own jobs only, and writes none directly; job_ask is for workers', async () => {
		const alice = await createUser(db.sql);
		const bob = await createUser(db.sql);
		const id = await asking(alice.sub);
		const seen = (caller: typeof alice) =>
			as(db.sql, caller, (tx) => tx`select key from supabase_jobs.job_question where job_id = ${id}`);
		expect((await seen(alice)).map((r) => r.key)).toEqual(['ask-1']);
		expect(await seen(bob)).toEqual([]);
		expect(
			await code(
				as(db.sql, alice, (tx) => tx`update supabase_jobs.job_question set answer = 'true', answered_at = now()`),
			),
		).toBe('42501');
		expect(
			await code(as(db.sql, alice, (tx) => tx`select job_ask(${id}, 'ask-2', 'Again?', '{"type": "boolean"}')`)),
		).toBe('42501');
		expect(
			(await as(db.sql, serviceRole, (tx) => tx`select key from supabase_jobs.job_question where job_id = ${id}`))
				.length,
		).toBe(1);
	});

	it('the reclaim schedule fails only jobs whose question is past its deadline: a parent waiting for its children, or a question still due, is left waiting', async () => {
		const alice = await createUser(db.sql);
		const due = await asking(alice.sub, '1 millisecond');
		const later = await asking(alice.sub, '1 hour');
		const [{ id: parent }] = await db.sql`select id from job_enqueue('parent', owner_id => ${alice.sub})`;
		await db.sql`select job_claim(${parent})`;
		await db.sql`select job_enqueue_child(${parent}, 'part')`;
		await db.sql`select job_wait_for_children(${parent})`;
		const closed =
			await db.sql`select id, status from supabase_jobs.reclaim_all(null) where id in (${due}, ${later}, ${parent})`;
		expect(closed.map((r) => [r.id, r.status])).toEqual([[due, 'failed']]);
		const rows =
			await db.sql`select id, status, error_code from jobs where id in (${due}, ${later}, ${parent}) order by id`;
		expect(Object.fromEntries(rows.map((r) => [r.id, [r.status, r.error_code]]))).toEqual({
			[due]: ['failed', 'question_unanswered'],
			[later]: ['waiting', null],
			[parent]: ['waiting', null],
		});
	});

	it('questions are forgotten when their job ends; answered ones are kept while it runs', async () => {
		const alice = await createUser(db.sql);
		const id = await asking(alice.sub);
		await as(db.sql, alice, (tx) => tx`select job_answer(${id}, 'true'::jsonb)`);
		await db.sql`select job_claim(${id})`;
		const [{ answered }] =
			await db.sql`select job_ask(${id}, 'ask-1', 'Sure?', '{"type": "boolean"}') -> 'answered' as answered`;
		expect(answered).toBe(true);
		expect((await db.sql`select 1 from supabase_jobs.job_question where job_id = ${id}`).length).toBe(1);
		await db.sql`select job_succeed(${id})`;
		expect(await db.sql`select 1 from supabase_jobs.job_question where job_id = ${id}`).toEqual([]);
	});

	it('check_answer names the field for the shapes it checks: integer, items, anyOf, bounds', async () => {
		const field = async (schema: unknown, value: unknown) => {
			try {
				await db.sql`select supabase_jobs.check_answer(${JSON.stringify(schema)}::text::jsonb, ${JSON.stringify(value)}::text::jsonb)`;
				return null;
			} catch (e) {
				return (e as { detail: string }).detail;
			}
		};
		expect(await field({ type: 'integer' }, 2)).toBeNull();
		expect(await field({ type: 'integer' }, 2.5)).toBe('field=answer');
		expect(await field({ type: 'number', minimum: 1, maximum: 5 }, 6)).toBe('field=answer');
		expect(await field({ type: 'array', items: { type: 'string' } }, ['a', 3])).toBe('field=answer[1]');
		expect(await field({ anyOf: [{ type: 'string' }, { type: 'null' }] }, null)).toBeNull();
		expect(await field({ anyOf: [{ type: 'string' }, { type: 'null' }] }, 1)).toBe('field=answer');
		expect(
			await field(
				{ type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'boolean' } } } } },
				{ a: { b: 'no' } },
			),
		).toBe('field=answer.a.b');
	});
});

/** The field check_answer names for `value` against `schema` (field=answer...), or null when it fits. */
async function answerField(schema: unknown, value: unknown): Promise<string | null> {
	try {
		await db.sql`select supabase_jobs.check_answer(${JSON.stringify(schema)}::text::jsonb, ${JSON.stringify(value)}::text::jsonb)`;
		return null;
	} catch (e) {
		return (e as { detail: string }).detail;
	}
}

/** The JSON Schema of a zod schema, as ctx.ask stores it. */
const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema) as Record<string, unknown>;

describe('check_answer checks the whole declared schema but pattern', () => {
	const pairs: [string, z.ZodType, unknown, string | null][] = [
		['multipleOf', z.number().multipleOf(0.5), 1.5, null],
		['multipleOf', z.number().multipleOf(0.5), 1.7, 'field=answer'],
		['multipleOf (decimal)', z.number().multipleOf(0.1), 0.3, null],
		['oneOf', z.xor([z.string(), z.number()]), 'a', null],
		['oneOf', z.xor([z.string(), z.number()]), true, 'field=answer'],
		['oneOf (both fit)', z.xor([z.number(), z.int()]), 2, 'field=answer'],
		[
			'oneOf (discriminated)',
			z.discriminatedUnion('k', [z.object({ k: z.literal('a') }), z.object({ k: z.literal('b'), n: z.number() })]),
			{ k: 'b' },
			'field=answer',
		],
		['format date', z.object({ on: z.iso.date() }), { on: '2028-02-29' }, null],
		['format date', z.object({ on: z.iso.date() }), { on: '2026-02-29' }, 'field=answer.on'],
		['format date-time', z.iso.datetime(), '2026-12-02T15:00:00.250Z', null],
		['format date-time', z.iso.datetime(), '2026-12-02T24:00:00Z', 'field=answer'],
		['format uuid', z.array(z.guid()), ['0190b7d2-4c3e-7c41-9b6a-2f1d8e4a5b6c'], null],
		['format uuid', z.array(z.guid()), ['0190b7d2-4c3e'], 'field=answer[0]'],
	];
	const cases = pairs.map(([keyword, schema, value, field]) => ({
		keyword,
		schema,
		value,
		field,
		shown: JSON.stringify(value),
	}));
	it.each(cases)('$keyword: check_answer decides $shown as zod does', async ({ schema, value, field }) => {
		expect(schema.safeParse(value).success).toBe(field === null);
		expect(await answerField(jsonSchema(schema), value)).toBe(field);
	});

	it('uniqueItems refuses the same item twice, 1 and 1.0 being the same number', async () => {
		const schema = { type: 'array', uniqueItems: true };
		expect(await answerField(schema, [1, 'a', { b: 1 }])).toBeNull();
		expect(await answerField(schema, [{ b: 1 }, { b: 1.0 }])).toBe('field=answer');
	});

	it('format date accepts exactly the calendar dates zod accepts', async () => {
		const digits = (n: number) => fc.stringMatching(new RegExp(`^[0-9]{${n}}$`));
		const dates = fc.oneof(
			fc.tuple(digits(4), digits(2), digits(2)).map(([y, m, d]) => `${y}-${m}-${d}`),
			fc
				.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 27, max: 31 }))
				.map(([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${d}`),
		);
		const schema = z.iso.date();
		await checkProperty(dates, async (date) => {
			expect(await answerField(jsonSchema(schema), date)).toBe(schema.safeParse(date).success ? null : 'field=answer');
		});
	});

	it('pattern and format email are left to the store and the worker: SQL takes what only they refuse', async () => {
		expect(await answerField(jsonSchema(z.string().regex(/^[A-Z]{3}$/)), 'abc')).toBeNull();
		expect(await answerField(jsonSchema(z.email()), 'not an address')).toBeNull();
	});

	it('job_answer refuses an answer breaking multipleOf, format or oneOf (22023 naming the field) and the job keeps waiting', async () => {
		const owner = await createUser(db.sql);
		const [{ id }] = await db.sql`select id from job_enqueue('asks', owner_id => ${owner.sub})`;
		await db.sql`select job_claim(${id})`;
		const schema = jsonSchema(
			z.object({ step: z.number().multipleOf(5), on: z.iso.date(), pick: z.xor([z.string(), z.number()]) }),
		);
		await db.sql`select job_ask(${id}, 'ask-1', 'When?', ${JSON.stringify(schema)}::text::jsonb)`;
		const answer = (value: unknown) =>
			as(db.sql, owner, (tx) => tx`select status from job_answer(${id}, ${JSON.stringify(value)}::text::jsonb)`);
		const refused = async (value: unknown) => {
			try {
				await answer(value);
				return null;
			} catch (e) {
				return `${(e as { code: string }).code} ${(e as { detail: string }).detail}`;
			}
		};
		expect(await refused({ step: 7, on: '2026-01-01', pick: 'a' })).toBe('22023 field=answer.step');
		expect(await refused({ step: 5, on: '2026-02-30', pick: 'a' })).toBe('22023 field=answer.on');
		expect(await refused({ step: 5, on: '2026-01-01', pick: false })).toBe('22023 field=answer.pick');
		expect((await db.sql`select status from public.jobs where id = ${id}`)[0]!.status).toBe('waiting');
		expect((await answer({ step: 10, on: '2026-01-01', pick: 3 }))[0]!.status).toBe('queued');
	});
});

describe('try again', () => {
	it("the owner's try again is an enqueue of theirs: over their quota it is refused (PT429) and nothing is written", async () => {
		const alice = await createUser(db.sql);
		await createJobTable(db.sql, 'retries', { maxActivePerOwner: 1 });
		const [{ id: failed }] =
			await db.sql`select id from job_enqueue('work', owner_id => ${alice.sub}, job_table => 'retries')`;
		await db.sql`select job_claim(${failed}, 'retries')`;
		await db.sql`select job_fail(${failed}, 'Falhou.', job_table => 'retries')`;
		await db.sql`select job_enqueue('work', owner_id => ${alice.sub}, job_table => 'retries')`;
		expect(await code(as(db.sql, alice, (tx) => tx`select job_try_again(${failed}, 'retries')`))).toBe('PT429');
		const [{ n }] = await db.sql`select count(*)::int as n from public.retries where retry_of = ${failed}`;
		expect(n).toBe(0);
	});

	it("an admin's try again and replay count in the job owner's quota: past it refused (PT429), nothing written; within it the retry keeps its owner", async () => {
		const alice = await createUser(db.sql);
		await createJobTable(db.sql, 'admin_retries', { maxActivePerOwner: 1 });
		const [{ id: failed }] =
			await db.sql`select id from job_enqueue('work', owner_id => ${alice.sub}, job_table => 'admin_retries')`;
		await db.sql`select job_claim(${failed}, 'admin_retries')`;
		await db.sql`select job_fail(${failed}, 'Falhou.', job_table => 'admin_retries')`;
		const [{ id: live }] =
			await db.sql`select id from job_enqueue('work', owner_id => ${alice.sub}, job_table => 'admin_retries')`;
		const boss = { ...(await createUser(db.sql)), admin: true };
		const tryAgain = () =>
			as(db.sql, boss, (tx) => tx`select retry_of, owner_id from job_try_again(${failed}, 'admin_retries')`);
		expect(await code(tryAgain())).toBe('PT429');
		expect(
			await code(as(db.sql, boss, (tx) => tx`select * from job_replay('work', job_table => 'admin_retries')`)),
		).toBe('PT429');
		const [{ n }] = await db.sql`select count(*)::int as n from public.admin_retries where retry_of = ${failed}`;
		expect(n).toBe(0);
		await db.sql`select job_cancel(${live}, job_table => 'admin_retries')`;
		expect(await tryAgain()).toEqual([{ retry_of: failed, owner_id: alice.sub }]);
	});

	it("an admin's try again and replay refuse a kind no longer registered (22023 naming kind), nothing written; a worker's may", async () => {
		const alice = await createUser(db.sql);
		await createJobTable(db.sql, 'retired_kinds', { kinds: ['old.kind'] });
		const [{ id: failed }] =
			await db.sql`select id from job_enqueue('old.kind', owner_id => ${alice.sub}, job_table => 'retired_kinds')`;
		await db.sql`select job_claim(${failed}, 'retired_kinds')`;
		await db.sql`select job_fail(${failed}, 'Falhou.', job_table => 'retired_kinds')`;
		await db.sql`delete from supabase_jobs.job_kinds where job_table = 'retired_kinds'`;
		const boss = { ...(await createUser(db.sql)), admin: true };
		const refused = (p: Promise<unknown>) =>
			p.then(
				() => null,
				(e: { code: string; detail: string }) => e,
			);
		expect(await refused(as(db.sql, boss, (tx) => tx`select job_try_again(${failed}, 'retired_kinds')`))).toMatchObject(
			{ code: '22023', detail: 'field=kind' },
		);
		expect(
			await refused(as(db.sql, boss, (tx) => tx`select * from job_replay('old.kind', job_table => 'retired_kinds')`)),
		).toMatchObject({ code: '22023', detail: 'field=kind' });
		expect(await code(as(db.sql, alice, (tx) => tx`select job_try_again(${failed}, 'retired_kinds')`))).toBe('22023');
		const count = async () =>
			(await db.sql`select count(*)::int as n from public.retired_kinds where retry_of = ${failed}`)[0]!.n as number;
		expect(await count()).toBe(0);
		const [row] = await as(
			db.sql,
			serviceRole,
			(tx) => tx`select owner_id from job_try_again(${failed}, 'retired_kinds')`,
		);
		expect([row?.owner_id, await count()]).toEqual([alice.sub, 1]);
	});

	it('an admin may not insert a job for another user outside try again: the retry must name a failed job of that owner and kind', async () => {
		const alice = await createUser(db.sql);
		const [{ id: done }] = await db.sql`select id from job_enqueue('work', owner_id => ${alice.sub})`;
		const boss = { ...(await createUser(db.sql)), admin: true };
		const insert = (retryOf: string | null) =>
			as(
				db.sql,
				boss,
				(tx) =>
					tx`insert into supabase_jobs.job (job_table, kind, owner_id, retry_of) values ('jobs', 'work', ${alice.sub}, ${retryOf})`,
			);
		expect(await code(insert(null))).toBe('42501');
		expect(await code(insert(done))).toBe('42501');
	});
});

describe('replay', () => {
	it('more failed jobs than a batch match: refused naming the filter, nothing written', async () => {
		const [{ max }] = await db.sql`select supabase_jobs.batch_max() as max`;
		await db.sql.begin(async (tx) => {
			await tx`set local session_replication_role = replica`;
			await tx`
				insert into supabase_jobs.job (job_table, kind, status, error, error_code, finished_at, attempts)
				select 'jobs', 'bulk', 'failed', 'x', 'boom', now(), 1 from generate_series(1, ${max + 1})`;
		});
		const refused = await db.sql`select * from job_replay('bulk')`.catch((e: { code: string; detail: string }) => e);
		expect(refused).toMatchObject({ code: '22023', detail: 'field=filter' });
		const [{ n }] = await db.sql`select count(*)::int as n from jobs where retry_of is not null and kind = 'bulk'`;
		expect(n).toBe(0);
		const some =
			await db.sql`select id from job_replay('bulk', ended_from => now() - interval '1 hour', ended_to => now() + interval '1 hour')`.catch(
				(e: { code: string }) => e,
			);
		expect(some).toMatchObject({ code: '22023' });
	});
});
