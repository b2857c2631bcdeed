/**
 * A Realtime message's body (the view job_messages, supabase/schemas/09_realtime.sql)
 * carries the screen columns a screen reads and no more: the same keys always,
 * the others only when set (never a key with null), no owner_id (the topic
 * names it), locale or expected_seconds. The client reads such a body, alone
 * ('job') or in a list ('jobs'), into exactly the summary a full read of the
 * row gives, and reads a body of the former full shape the same way. Each
 * message row gets a time-ordered id (UUID version 7), not realtime.messages'
 * random default.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseJobBroadcast, SUMMARY_FIELDS, type JobSummary } from '../../src/lib/store/job-summary.ts';
import { parseJobRow } from '../../src/lib/store/job.ts';
import { createUser, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let alice: Caller & { sub: string };

beforeAll(async () => {
	db = await useTestDatabase();
	alice = await createUser(db.sql);
});

type Body = Record<string, unknown>;

/** Keys every message has. */
const ALWAYS = [
	'id',
	'kind',
	'status',
	'progress',
	'attempts',
	'max_attempts',
	'job_table',
	'created_at',
	'updated_at',
	'available_at',
];
/** Keys a message has only when the column is set (tags: not empty; failed_for_good: true). */
const WHEN_SET = [
	'stage',
	'error',
	'error_code',
	'result_id',
	'started_at',
	'finished_at',
	'heartbeat_ms',
	'expected_end_at',
	'parent_id',
	'tags',
	'metadata',
	'failed_for_good',
];

const messageOf = async (id: string) =>
	(
		await db.sql<{ topic: string; body: Body }[]>`
		select topic, body from supabase_jobs.job_messages where job_table = 'jobs' and id = ${id}`
	)[0]!;

const rowOf = async (id: string) => (await db.sql<Body[]>`select * from public.jobs where id = ${id}`)[0]!;

/** The summary fields of a full read of the row. */
const summaryOfRow = (row: Body): JobSummary => {
	const job = parseJobRow(row);
	return Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, job[f]])) as unknown as JobSummary;
};

/** Checks the body's keys against the row, and that the client reads it as a full read. */
async function expectSlim(id: string): Promise<Body> {
	const { topic, body } = await messageOf(id);
	const row = await rowOf(id);
	const isSet = (k: string) =>
		k === 'tags' ? (row.tags as string[]).length > 0 : k === 'failed_for_good' ? row[k] === true : row[k] !== null;
	const set = WHEN_SET.filter(isSet);
	expect(Object.keys(body).sort()).toEqual([...ALWAYS, ...set].sort());
	expect(Object.entries(body).filter(([, v]) => v === null)).toEqual([]);
	expect(parseJobBroadcast(body, topic)).toEqual({ jobTable: 'jobs', job: summaryOfRow(row) });
	return body;
}

describe('the Realtime message body', () => {
	it('holds the keys a screen reads, those of null columns left out, and reads as a full read of the row at every step', async () => {
		const [queued] = await db.sql<{ id: string }[]>`select id from job_enqueue('slim', owner_id => ${alice.sub})`;
		const id = queued!.id;
		expect(Object.keys(await expectSlim(id))).toHaveLength(ALWAYS.length);
		await db.sql`select job_claim(${id}, heartbeat_ms => 5000)`;
		await expectSlim(id);
		await db.sql`select job_tick(${id}, 40, 'table', eta_seconds => 30, metadata => ${db.sql.json({ rows: 3, note: null })})`;
		const ticked = await expectSlim(id);
		// A null the handler wrote in its metadata is its own: only the top-level keys are left out.
		expect(ticked.metadata).toEqual({ rows: 3, note: null });
		await db.sql`select job_succeed(${id}, ${'0197f7a4-0000-7000-8000-000000000001'})`;
		const done = await expectSlim(id);
		expect(done).toMatchObject({ status: 'done', progress: 100, result_id: '0197f7a4-0000-7000-8000-000000000001' });
	});

	it('leaves out owner_id, locale and expected_seconds: the owner is the topic’s, ownerless on job:<id>', async () => {
		const [owned] = await db.sql<{ id: string }[]>`
			select id from job_enqueue('slim', locale => 'pt-BR', owner_id => ${alice.sub}, tags => array['a', 'b'])`;
		const [ownerless] = await db.sql<{ id: string }[]>`select id from job_enqueue('slim', locale => 'pt-BR')`;
		for (const id of [owned!.id, ownerless!.id]) {
			const { topic, body } = await messageOf(id);
			expect(Object.keys(body)).not.toContain('owner_id');
			expect(Object.keys(body)).not.toContain('locale');
			const job = parseJobBroadcast(body, topic)!.job;
			expect(job.ownerId).toBe(id === owned!.id ? alice.sub : null);
			expect(topic).toBe(id === owned!.id ? `jobs:${alice.sub}` : `job:${id}`);
		}
		expect((await expectSlim(owned!.id)).tags).toEqual(['a', 'b']);
		await db.sql`select job_claim(${ownerless!.id})`;
		await db.sql`select job_fail(${ownerless!.id}, 'Broken.', error_code => 'broken')`;
		const failed = await expectSlim(ownerless!.id);
		expect(failed).toMatchObject({ status: 'failed', error: 'Broken.', error_code: 'broken' });
		expect(parseJobBroadcast(failed, `job:${ownerless!.id}`)!.job.failedForGood).toBe(false);
		// A message the client cannot place (a topic that is neither jobs:<owner> nor job:<id>) is not a job change.
		expect(parseJobBroadcast((await messageOf(owned!.id)).body, 'elsewhere')).toBeNull();
	});

	it('a job failed for good says so (failed_for_good: true), so a screen watching it offers no Try again', async () => {
		const [queued] = await db.sql<{ id: string }[]>`select id from job_enqueue('slim', owner_id => ${alice.sub})`;
		await db.sql`select job_claim(${queued!.id})`;
		await db.sql`select job_fail(${queued!.id}, 'Empty.', error_code => 'empty_file', permanent => true)`;
		const { topic, body } = await messageOf(queued!.id);
		expect(body.failed_for_good).toBe(true);
		expect(parseJobBroadcast(body, topic)!.job).toMatchObject({ status: 'failed', failedForGood: true });
		await expectSlim(queued!.id);
	});

	it('a child’s message has its parent_id and no expected_seconds', async () => {
		const [parent] = await db.sql<{ id: string }[]>`select id from job_enqueue('slim-parent')`;
		await db.sql`select job_claim(${parent!.id})`;
		const [child] = await db.sql<{ id: string }[]>`
			select id from job_enqueue_child(${parent!.id}, 'slim-child', expected_seconds => 12)`;
		const body = await expectSlim(child!.id);
		expect(body.parent_id).toBe(parent!.id);
		expect(Object.keys(body)).not.toContain('expected_seconds');
		expect((await messageOf(child!.id)).topic).toBe(`job:${parent!.id}`);
	});

	it('a list message of several jobs reads, job by job, as their full reads', async () => {
		const ids: string[] = [];
		for (const i of [1, 2, 3]) {
			const [r] = await db.sql<{ id: string }[]>`select id from job_enqueue('slim-list', owner_id => ${alice.sub})`;
			ids.push(r!.id);
			if (i === 2) await db.sql`select job_claim(${r!.id})`;
		}
		const [list] = await db.sql<{ topic: string; event: string; payload: { job_table: string; jobs: Body[] } }[]>`
			select g.topic, g.event, g.payload
			  from (select array_agg(m.topic) as topics, array_agg(m.body) as payloads
			          from supabase_jobs.job_messages m where m.job_table = 'jobs' and m.id = any (${ids}::uuid[])) a
			 cross join lateral supabase_jobs.topic_messages(a.topics, a.payloads) g`;
		expect(list!.event).toBe('jobs');
		expect(list!.payload.job_table).toBe('jobs');
		expect(list!.payload.jobs.map((b) => b.id)).toEqual([...ids].sort());
		for (const body of list!.payload.jobs)
			expect(parseJobBroadcast(body, list!.topic)).toEqual({
				jobTable: 'jobs',
				job: summaryOfRow(await rowOf(body.id as string)),
			});
	});

	it('a body of the former full shape (every key, nulls, owner_id and locale) reads as the slim one', async () => {
		const [r] = await db.sql<
			{ id: string }[]
		>`select id from job_enqueue('slim-old', locale => 'pt-BR', owner_id => ${alice.sub})`;
		await db.sql`select job_claim(${r!.id})`;
		const { topic, body } = await messageOf(r!.id);
		const full = {
			// The former shape had no failed_for_good (it came with the slim one).
			...Object.fromEntries(WHEN_SET.filter((k) => k !== 'failed_for_good').map((k) => [k, null])),
			...body,
			tags: [],
			owner_id: alice.sub,
			locale: 'pt-BR',
		};
		expect(parseJobBroadcast(full, topic)).toEqual(parseJobBroadcast(body, topic));
	});

	it('the view’s comment names every key a body can have', async () => {
		const [c] = await db.sql<
			{ d: string }[]
		>`select obj_description('supabase_jobs.job_messages'::regclass, 'pg_class') as d`;
		for (const key of [...ALWAYS, ...WHEN_SET]) expect(c!.d).toMatch(new RegExp(`\\b${key}\\b`));
	});

	it('every message row has a time-ordered id (version 7, from the time it was written), from every function that writes one', async () => {
		const [r] = await db.sql<{ id: string }[]>`select id from job_enqueue('slim-id', owner_id => ${alice.sub})`;
		const before = Date.now();
		await db.sql`select job_claim(${r!.id})`; // send_statement_messages
		await db.sql`select job_tick(${r!.id}, 50)`; // after_jobs_updated
		await db.sql`select job_succeed(${r!.id})`;
		const rows = await db.sql<{ id: string; event: string }[]>`
			select id::text, event from realtime.messages where payload ->> 'id' = ${r!.id} order by inserted_at, id`;
		expect(rows.length).toBe(4); // queued, running, 50 %, done
		for (const { id } of rows) {
			expect(id[14]).toBe('7');
			// The first 48 bits: the Unix milliseconds it was written at.
			const ms = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
			expect(Math.abs(ms - before)).toBeLessThan(60_000);
		}
		// Every insert into realtime.messages in the package's functions gives the id itself.
		const writers = await db.sql<{ name: string; def: string }[]>`
			select p.proname as name, pg_get_functiondef(p.oid) as def from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			 where n.nspname in ('public', 'supabase_jobs') and p.prokind = 'f' and pg_get_functiondef(p.oid) ilike '%insert into realtime.messages%'`;
		expect(writers.map((w) => w.name).sort()).toEqual(
			['after_jobs_updated', 'send_job_messages', 'send_statement_messages', 'send_stream_chunk'].sort(),
		);
		for (const w of writers) {
			const inserts = w.def.match(/insert into realtime\.messages \([^)]*\)/gi) ?? [];
			expect(inserts.length, w.name).toBeGreaterThan(0);
			for (const i of inserts) expect(i, w.name).toMatch(/\(id, /);
			expect(w.def, w.name).toContain("pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())");
		}
	});
});
