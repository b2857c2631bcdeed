/**
 * The Realtime messages in SQL: which writes broadcast (and which do not),
 * on which one topic, that users' writes broadcast without any
 * right on realtime.messages, the topic authorization function, privileges,
 * and that attach stayed cumulative.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { anon, as, createUser, serviceRole, useTestDatabase, type Caller } from '../helpers/db.ts';
import { createJobTable } from '../store/harness.ts';

const db = await useTestDatabase();
const sql = db.sql;

beforeAll(async () => {
	await createJobTable(sql, 'exports'); // users invent kinds in it
	await createJobTable(sql, 'batches');
});

const messages = async (topic: string) =>
	(
		await sql<
			{ n: number }[]
		>`select count(*)::int as n from realtime.messages where topic = ${topic} and extension = 'broadcast'`
	)[0]!.n;

/** The messages of `topic` after the first `after` of them, oldest first. */
const since = async (topic: string, after: number) =>
	await sql<
		{ event: string; payload: { id?: string; job_table?: string; jobs?: { id: string; status: string }[] } }[]
	>`select event, payload from realtime.messages where topic = ${topic} order by inserted_at, id offset ${after}`;

async function enqueue(caller: Caller, kind = 'extract', table = 'jobs'): Promise<string> {
	return await as(sql, caller, async (tx) => {
		const [row] = await tx<{ id: string }[]>`select id from public.job_enqueue(${kind}, job_table => ${table})`;
		return row!.id;
	});
}

describe('which writes broadcast', () => {
	test("exactly one message per change of status, progress or stage, on the owner's topic only — none for heartbeats or unchanged ticks", async () => {
		const user = await createUser(sql);
		const id = await enqueue(user);
		const topic = `jobs:${user.sub}`;
		expect(await messages(topic)).toBe(1);
		const [claimed] = await sql<{ attempts: number }[]>`select attempts from public.job_claim(${id})`;
		expect(await messages(topic)).toBe(2);
		await sql`select public.job_tick(${id})`; // heartbeat only
		expect(await messages(topic)).toBe(2);
		await sql`select public.job_tick(${id}, 10, 'pdf')`;
		expect(await messages(topic)).toBe(3);
		await sql`select public.job_tick(${id}, 10, 'pdf')`; // nothing a screen shows changed
		expect(await messages(topic)).toBe(3);
		await sql`select public.job_tick(${id}, 10, 'table')`;
		expect(await messages(topic)).toBe(4);
		await sql`select public.job_succeed(${id}, attempt => ${claimed!.attempts})`;
		expect(await messages(topic)).toBe(5);
		// An owned job never speaks on its own job:<id>.
		expect(await messages(`job:${id}`)).toBe(0);
		const [last] = await sql<{ payload: Record<string, unknown>; private: boolean; event: string }[]>`
			select payload, private, event from realtime.messages where topic = ${topic} order by inserted_at desc limit 1`;
		expect(last).toMatchObject({
			private: true,
			event: 'job',
			payload: { id, status: 'done', progress: 100, job_table: 'jobs' },
		});
	});

	test('a rolled-back change broadcasts nothing', async () => {
		const id = await enqueue(serviceRole);
		await sql`select public.job_claim(${id})`;
		const before = await messages(`job:${id}`);
		await sql
			.begin(async (tx) => {
				await tx`select public.job_tick(${id}, 50, 'table')`;
				throw new Error('roll back');
			})
			.catch(() => {});
		expect(await messages(`job:${id}`)).toBe(before);
	});

	test("users' inserts and cancels broadcast, though a user may not insert into realtime.messages", async () => {
		const user = await createUser(sql);
		await expect(
			as(
				sql,
				user,
				(tx) =>
					tx`insert into realtime.messages (topic, extension, payload, event, private) values (${`jobs:${user.sub}`}, 'broadcast', '{}', 'job', true)`,
			),
		).rejects.toMatchObject({ code: '42501' });
		const id = await enqueue(user);
		await as(sql, user, (tx) => tx`select public.job_cancel(${id})`);
		expect(await messages(`job:${id}`)).toBe(0);
		expect(await messages(`jobs:${user.sub}`)).toBe(2);
	});

	test("a user cancelling two of their jobs in one update (RLS in force) gets one 'job' message for each, on their topic only", async () => {
		const user = await createUser(sql);
		const [a, b] = [await enqueue(user), await enqueue(user)];
		const before = await messages(`jobs:${user.sub}`);
		await as(sql, user, (tx) => tx`update public.jobs set status = 'cancelled' where id in (${a}, ${b})`);
		expect(await messages(`job:${a}`)).toBe(0);
		expect(await messages(`job:${b}`)).toBe(0);
		const sent = await since(`jobs:${user.sub}`, before);
		expect(sent.map((m) => [m.event, m.payload.id, (m.payload as { status?: string }).status]).sort()).toEqual(
			[
				['job', a, 'cancelled'],
				['job', b, 'cancelled'],
			].sort(),
		);
	});

	test('a job without an owner goes to its job topic only; other tables name themselves', async () => {
		const id = await enqueue(serviceRole, 'extract', 'exports');
		await sql`select public.job_claim(${id}, job_table => 'exports')`;
		const [row] = await sql<{ payload: Record<string, unknown> }[]>`
			select payload from realtime.messages where topic = ${`job:${id}`}`;
		// No owner: the job:<id> topic says so, and the body has no owner_id key.
		expect(row!.payload).toMatchObject({ job_table: 'exports' });
		expect(row!.payload).not.toHaveProperty('owner_id');
		expect(
			await sql`select 1 from realtime.messages where topic like 'jobs:%' and payload ->> 'id' = ${id}`,
		).toHaveLength(0);
	});

	test("one statement changing many jobs: one 'job' message per changed row, an ownerless job on its job topic, an owned one on its owner's topic only", async () => {
		const [a, b] = [await createUser(sql), await createUser(sql)];
		const enqueueFor = (owner: Caller, n: number) =>
			as(
				sql,
				owner,
				(tx) => tx<{ id: string }[]>`select id from public.job_enqueue_many('extract', (
				select jsonb_agg('{}'::jsonb) from generate_series(1, ${n})), job_table => 'batches')`,
			);
		const ofA = await enqueueFor(a, 101);
		const [b1, b2] = await enqueueFor(b, 2);
		const ownerless = await enqueue(serviceRole, 'extract', 'batches');
		const [listA, listB] = [(await since(`jobs:${a.sub}`, 0)).length, (await since(`jobs:${b.sub}`, 0)).length];

		// One owned row and one without an owner, in one statement.
		await sql`update supabase_jobs.job set status = 'running' where id in (${b1!.id}, ${ownerless})`;
		expect(await messages(`job:${ownerless}`)).toBe(1);
		expect(await messages(`job:${b1!.id}`)).toBe(0);
		const toB = await since(`jobs:${b.sub}`, listB);
		expect(toB).toHaveLength(1);
		expect(toB[0]).toMatchObject({ event: 'job', payload: { id: b1!.id, status: 'running' } });

		// 101 rows of A and one of B, in one statement.
		await sql`update supabase_jobs.job set status = 'running'
			where id = any (${[...ofA.map((r) => r.id), b2!.id]}::uuid[])`;
		const onJobTopics = await sql`select 1 from realtime.messages
			where topic = any (${[...ofA, b2!].map((r) => `job:${r.id}`)}::text[])`;
		expect(onJobTopics).toHaveLength(0);
		const toA = await since(`jobs:${a.sub}`, listA);
		expect(toA).toHaveLength(101);
		expect(toA.every((m) => m.event === 'job' && (m.payload as { status?: string }).status === 'running')).toBe(true);
		expect(new Set(toA.map((m) => m.payload.id))).toEqual(new Set(ofA.map((r) => r.id)));
		const toB2 = await since(`jobs:${b.sub}`, listB + 1);
		expect(toB2).toHaveLength(1);
		expect(toB2[0]).toMatchObject({ event: 'job', payload: { id: b2!.id, status: 'running' } });
	});
});

describe("children's messages", () => {
	test("an ownerless child speaks on its parent's job topic only, an owned child on its owner's topic only: one message per change", async () => {
		const parent = await enqueue(serviceRole, 'book');
		await sql`select public.job_claim(${parent})`;
		const [child] = await sql<{ id: string }[]>`select id from public.job_enqueue_child(${parent}, 'page')`;
		const [claimed] = await sql<{ attempts: number }[]>`select attempts from public.job_claim(${child!.id})`;
		await sql`select public.job_tick(${child!.id}, 50)`;
		await sql`select public.job_succeed(${child!.id}, attempt => ${claimed!.attempts})`;
		const ofChild = await sql<{ status: string; parent_id: string }[]>`
			select payload ->> 'status' as status, payload ->> 'parent_id' as parent_id from realtime.messages
			 where topic = ${`job:${parent}`} and payload ->> 'id' = ${child!.id} order by inserted_at, id`;
		expect(ofChild.map((m) => m.status)).toEqual(['queued', 'running', 'running', 'done']);
		expect(ofChild.every((m) => m.parent_id === parent)).toBe(true);
		expect(
			await sql`select 1 from realtime.messages where payload ->> 'id' = ${child!.id} and topic <> ${`job:${parent}`}`,
		).toHaveLength(0);

		const user = await createUser(sql);
		const owned = await enqueue(user, 'book');
		await sql`select public.job_claim(${owned})`;
		const [ownedChild] = await sql<{ id: string }[]>`select id from public.job_enqueue_child(${owned}, 'page')`;
		await sql`select public.job_cancel(${ownedChild!.id})`;
		const topics = await sql<{ topic: string }[]>`
			select topic from realtime.messages where payload ->> 'id' = ${ownedChild!.id}`;
		expect(topics.map((t) => t.topic)).toEqual([`jobs:${user.sub}`, `jobs:${user.sub}`]);
	});
});

describe('supabase_jobs.owns_job_topic', () => {
	const owns = (caller: Caller, topic: string) =>
		as(
			sql,
			caller,
			async (tx) => (await tx<{ ok: boolean }[]>`select supabase_jobs.owns_job_topic(${topic}) as ok`)[0]!.ok,
		);

	test('a user owns jobs:<their uid>, nothing else: not even job:<id> of their own jobs, where nothing of theirs is sent', async () => {
		const alice = await createUser(sql);
		const bob = await createUser(sql);
		const inJobs = await enqueue(alice);
		const inExports = await enqueue(alice, 'extract', 'exports');
		expect(await owns(alice, `job:${inJobs}`)).toBe(false);
		expect(await owns(alice, `job:${inExports}`)).toBe(false);
		expect(await owns(alice, `jobs:${alice.sub}`)).toBe(true);
		expect(await owns(bob, `job:${inJobs}`)).toBe(false);
		expect(await owns(bob, `jobs:${alice.sub}`)).toBe(false);
		for (const topic of [`job:${inJobs.toUpperCase()}`, `job:${inJobs} `, 'job:', 'jobs:', `user:${alice.sub}`, ''])
			expect(await owns(alice, topic)).toBe(false);
	});

	test('anon may not call it, and the realtime.messages policy is for authenticated only', async () => {
		await expect(as(sql, anon, (tx) => tx`select supabase_jobs.owns_job_topic('jobs:x')`)).rejects.toMatchObject({
			code: '42501',
		});
		const [policy] = await sql<{ roles: string[]; cmd: string; qual: string }[]>`
			select roles, cmd, qual from pg_policies where schemaname = 'realtime' and tablename = 'messages' and policyname = 'supabase_jobs_read_job_topics'`;
		expect(policy).toMatchObject({ roles: ['authenticated'], cmd: 'SELECT' });
		expect(policy!.qual).toMatch(/extension = 'broadcast'/);
		expect(policy!.qual).toMatch(/SELECT supabase_jobs\.owns_job_topic\(\( SELECT realtime\.topic\(\)/);
	});
});

describe('the realtime.messages policy reads each message by its own topic', () => {
	test("a connection authorized for its own jobs:<uid> reads none of another user's stored messages", async () => {
		const alice = await createUser(sql);
		const bob = await createUser(sql);
		const id = await enqueue(alice);
		await sql`select public.job_claim(${id})`;
		await enqueue(bob);
		const ownerless = await enqueue(serviceRole);
		await sql`select public.job_claim(${ownerless})`;
		const readAs = (caller: Caller, topic: string) =>
			as(sql, caller, async (tx) => {
				await tx`select set_config('realtime.topic', ${topic}, true)`;
				return await tx<{ topic: string }[]>`select topic from realtime.messages where extension = 'broadcast'`;
			});
		// Bob's own topic is his to read: the policy passes, yet only messages stored under it come back.
		const seen = await readAs(bob, `jobs:${bob.sub}`);
		expect(seen.length).toBeGreaterThan(0);
		expect(new Set(seen.map((m) => m.topic))).toEqual(new Set([`jobs:${bob.sub}`]));
		expect(await readAs(alice, `job:${ownerless}`)).toEqual([]);
		const mine = await readAs(alice, `jobs:${alice.sub}`);
		expect(mine.length).toBeGreaterThan(0);
		expect(mine.every((m) => m.topic === `jobs:${alice.sub}`)).toBe(true);
	});
});

describe('privileges and attach', () => {
	test('the trigger function is SECURITY DEFINER with an empty search_path, executable by nobody else', async () => {
		const rows = await sql<
			{ fn: string; definer: boolean; config: string[] | null; anon: boolean; auth: boolean; pub: boolean }[]
		>`
			select p.proname as fn, p.prosecdef as definer, p.proconfig as config,
			       has_function_privilege('anon', p.oid, 'execute') as anon,
			       has_function_privilege('authenticated', p.oid, 'execute') as auth,
			       exists (select 1 from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a where a.grantee = 0 and a.privilege_type = 'EXECUTE') as pub
			  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			 where n.nspname = 'supabase_jobs' and p.proname in ('after_jobs_inserted', 'after_jobs_updated', 'owns_job_topic')
			 order by p.proname`;
		// Each also plans once per session (plan_cache_mode), besides its empty search_path.
		const config = ['search_path=""', 'plan_cache_mode=force_generic_plan'];
		expect(rows).toEqual([
			{ fn: 'after_jobs_inserted', definer: true, config, anon: false, auth: false, pub: false },
			{ fn: 'after_jobs_updated', definer: true, config, anon: false, auth: false, pub: false },
			{ fn: 'owns_job_topic', definer: true, config, anon: false, auth: true, pub: false },
		]);
	});

	test('every job table has the guards, the statement triggers (admission, kick, notify), the one update trigger and the child and cancel triggers', async () => {
		const rows = await sql<{ t: string; triggers: string[] }[]>`
			select c.oid::regclass::text as t, array_agg(tg.tgname::text order by tg.tgname) as triggers
			  from supabase_jobs.job_tables j join pg_class c on c.oid = j.table_name
			  join pg_trigger tg on tg.tgrelid = c.oid and not tg.tgisinternal
			                   and tg.tgfoid::regproc::text like 'supabase_jobs.%' -- the package's (the demo adds its own to jobs)
			 group by c.oid order by 1`;
		const expected = [
			'admit_jobs_inserted',
			'after_child_inserted',
			'after_jobs_inserted',
			'after_jobs_updated',
			'cancel_children',
			'check_child_insert',
			'forget_job_timeline',
			'guard_job_update',
		];
		expect(rows).toEqual([
			{ t: 'batches', triggers: expected },
			{ t: 'exports', triggers: expected },
			{ t: 'jobs', triggers: expected },
		]);
	});
});
