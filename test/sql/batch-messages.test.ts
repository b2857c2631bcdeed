/**
 * The Realtime messages of a batched claim or close (job_claim_next,
 * job_succeed_many): one insert for the statement (send_statement_messages,
 * supabase/schemas/09_realtime.sql) instead of one per row from the row
 * trigger, with the same guarantees: each job carried exactly once (grouped by topic), on the
 * job's one topic, with the job_messages payload; a child's parent still gets its
 * own; a write after the batch in the same transaction still gets its own; and
 * when realtime.messages cannot take them the claim and close still commit,
 * with one warning.
 */
import type postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let alice: Caller & { sub: string };
let bob: Caller & { sub: string };

type Row = Record<string, any>;
interface Message {
	topic: string;
	event: string;
	payload: Row;
}

beforeAll(async () => {
	db = await useTestDatabase();
	[alice, bob] = [await createUser(db.sql), await createUser(db.sql)];
});

const worker = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> => as(db.sql, serviceRole, fn);

/** Jobs of one kind: owned by alice, by bob, and ownerless, interleaved. */
async function enqueueMixed(kind: string, n: number): Promise<string[]> {
	const owners = [alice.sub, null, bob.sub];
	const ids: string[] = [];
	for (let i = 0; i < n; i++) {
		const owner = owners[i % owners.length] ?? null;
		const [row] = await worker((tx) => tx`select id from job_enqueue(${kind}, owner_id => ${owner})`);
		ids.push(row!.id);
	}
	return ids;
}

/** Each job change that carries these jobs in this status, oldest first: a 'job' message, or an entry of a 'jobs' list. */
const messagesIn = async (ids: string[], status: string): Promise<Message[]> =>
	(await db.sql`
		select r.topic, 'job' as event, e.payload from realtime.messages r
		 cross join lateral (select r.payload where r.event = 'job'
		                     union all select x from jsonb_array_elements(r.payload -> 'jobs') x where r.event = 'jobs') as e(payload)
		 where e.payload ->> 'id' = any (${ids}::text[]) and e.payload ->> 'status' = ${status}
		 order by r.inserted_at, r.id`) as unknown as Message[];

/** The rows of realtime.messages (one per Realtime message) that carry any of these jobs. */
const rowsCarrying = async (ids: string[]) =>
	(await db.sql`
		select r.topic, r.event, octet_length(r.payload::text) as bytes from realtime.messages r
		 where r.payload ->> 'id' = any (${ids}::text[])
		    or exists (select 1 from jsonb_array_elements(r.payload -> 'jobs') x where x ->> 'id' = any (${ids}::text[]))`) as unknown as {
		topic: string;
		event: string;
		bytes: number;
	}[];

/** What the row trigger would have written for each job now: the job_messages view of its row. */
const expectedNow = async (ids: string[]): Promise<Message[]> =>
	(await db.sql`
		select m.topic, 'job' as event, m.body as payload
		  from supabase_jobs.job_messages m
		 where m.id = any (${ids}::uuid[])`) as unknown as Message[];

const byId = (messages: Message[]) =>
	[...messages].sort((a, b) => String(a.payload.id).localeCompare(String(b.payload.id)));

const topicOf = (row: Row) => (row.owner_id ? `jobs:${row.owner_id}` : `job:${row.parent_id ?? row.id}`);

describe('a batched claim', () => {
	it('job_claim_next of 9 jobs, owned and ownerless, carries each job exactly once, on its topic, with the job_messages view of the claimed row, one message per topic', async () => {
		const ids = await enqueueMixed('batch_claim', 9);
		const claimed = await worker((tx) => tx`select * from job_claim_next(array['batch_claim'], 9)`);
		expect(claimed.map((r) => r.id).sort()).toEqual([...ids].sort());

		const sent = await messagesIn(ids, 'running');
		expect(sent).toHaveLength(9);
		expect(byId(sent)).toEqual(byId(await expectedNow(ids)));
		for (const row of claimed) {
			const mine = sent.filter((m) => m.payload.id === row.id);
			expect(mine).toHaveLength(1);
			expect(mine[0]!.topic).toBe(topicOf(row));
			expect(mine[0]!.payload).toMatchObject({ status: 'running', attempts: 1 });
		}
		expect(new Set(sent.map((m) => m.topic))).toEqual(
			new Set([`jobs:${alice.sub}`, `jobs:${bob.sub}`, ...ids.filter((_, i) => i % 3 === 1).map((id) => `job:${id}`)]),
		);
		// Grouped by topic: alice's three and bob's three are one list message each, an ownerless job its own.
		const lists = await db.sql`
			select topic, jsonb_array_length(payload -> 'jobs') as n from realtime.messages
			 where event = 'jobs' and payload -> 'jobs' -> 0 ->> 'kind' = 'batch_claim' order by topic`;
		expect(lists.map((l) => [l.topic, l.n])).toEqual(
			[`jobs:${alice.sub}`, `jobs:${bob.sub}`].sort().map((t) => [t, 3]),
		);
	});

	it('a batched close of 150 jobs of one owner, each with 16 KiB of metadata, is split into list messages under 256 KB that carry each job once', async () => {
		const ids: string[] = [];
		for (const row of await worker(
			(tx) =>
				tx`select id from job_enqueue_many('batch_big', ${tx.json(Array.from({ length: 150 }, () => ({ owner_id: alice.sub })))})`,
		))
			ids.push(row.id as string);
		await worker((tx) => tx`select id from job_claim_next(array['batch_big'], 150)`);
		const metadata = { notes: 'x'.repeat(16_000) };
		await worker((tx) => tx`select job_tick(j, 50, metadata => ${tx.json(metadata)}) from unnest(${ids}::uuid[]) j`);
		const items = ids.map((id) => ({ id, attempt: 1 }));
		await worker((tx) => tx`select id from job_succeed_many(${tx.json(items)})`);

		const sent = await messagesIn(ids, 'done');
		expect(sent).toHaveLength(150);
		expect(new Set(sent.map((m) => m.payload.id)).size).toBe(150);
		expect(sent.every((m) => (m.payload.metadata as { notes: string }).notes.length === 16_000)).toBe(true);
		const rows = await rowsCarrying(ids);
		expect(Math.max(...rows.map((r) => r.bytes))).toBeLessThan(256_000);
		expect(rows.filter((r) => r.event === 'jobs').length).toBeGreaterThan(150 / 100);
	});

	it('a kind with a concurrency limit (claimed through admit) carries each claimed job once, none of the jobs it holds back', async () => {
		await worker((tx) => tx`select job_set_concurrency('batch_limited', 4)`);
		const ids = await enqueueMixed('batch_limited', 6);
		const claimed = await worker((tx) => tx`select * from job_claim_next(array['batch_limited'], 6)`);
		expect(claimed).toHaveLength(4);

		const sent = await messagesIn(ids, 'running');
		expect(sent).toHaveLength(4);
		expect(byId(sent)).toEqual(byId(await expectedNow(claimed.map((r) => r.id))));
		for (const row of claimed) expect(sent.find((m) => m.payload.id === row.id)!.topic).toBe(topicOf(row));
	});

	it('a claim that finds nothing writes nothing', async () => {
		const before = Number((await db.sql`select count(*)::int as n from realtime.messages`)[0]!.n);
		expect(await worker((tx) => tx`select * from job_claim_next(array['batch_none'], 5)`)).toHaveLength(0);
		expect(Number((await db.sql`select count(*)::int as n from realtime.messages`)[0]!.n)).toBe(before);
	});
});

describe('a batched close', () => {
	it('job_succeed_many of 9 jobs carries exactly 9 done changes on their topics, none for an item it could not close', async () => {
		const ids = await enqueueMixed('batch_close', 10);
		await worker((tx) => tx`select id from job_claim_next(array['batch_close'], 10)`);
		const [lost, ...closing] = ids;
		await worker((tx) => tx`select job_fail(${lost!}, 'gone')`);
		const items = [...closing, lost!].map((id) => ({ id, attempt: 1, result_id: null }));
		const closed = await worker((tx) => tx`select * from job_succeed_many(${tx.json(items)})`);
		expect(closed.map((r) => r.id).sort()).toEqual([...closing].sort());

		const sent = await messagesIn(ids, 'done');
		expect(sent).toHaveLength(9);
		expect(byId(sent)).toEqual(byId(await expectedNow(closing)));
		for (const row of closed)
			expect(sent.filter((m) => m.payload.id === row.id).map((m) => m.topic)).toEqual([topicOf(row)]);
	});

	it("children closed in one batch each get their message, and the parent still gets its own from the row trigger (a child's parent is one trigger level deeper)", async () => {
		const [parent] = await worker((tx) => tx`select id from job_enqueue('batch_parent', owner_id => ${alice.sub})`);
		await worker((tx) => tx`select job_claim(${parent!.id})`);
		const children: string[] = [];
		for (let i = 0; i < 3; i++) {
			const [child] = await worker((tx) => tx`select id from job_enqueue_child(${parent!.id}, 'batch_child')`);
			children.push(child!.id);
		}
		await worker((tx) => tx`select id from job_claim_next(array['batch_child'], 3)`);
		const parentMessagesBefore = (
			await db.sql`select count(*)::int as n from realtime.messages where payload ->> 'id' = ${parent!.id}`
		)[0]!.n;

		const items = children.map((id) => ({ id, attempt: 1 }));
		await worker((tx) => tx`select id from job_succeed_many(${tx.json(items)})`);

		const sent = await messagesIn(children, 'done');
		expect(sent).toHaveLength(3);
		expect(byId(sent)).toEqual(byId(await expectedNow(children)));
		const parentMessagesAfter = (
			await db.sql`select count(*)::int as n from realtime.messages where payload ->> 'id' = ${parent!.id}`
		)[0]!.n;
		expect(parentMessagesAfter).toBeGreaterThan(parentMessagesBefore);
		const [latest] = await db.sql`
			select payload from realtime.messages where payload ->> 'id' = ${parent!.id} order by inserted_at desc limit 1`;
		const [parentNow] = await expectedNow([parent!.id]);
		expect(latest!.payload).toEqual(parentNow!.payload);
	});
});

describe('the mark is the statement’s alone', () => {
	it('a write after a batched claim in the same transaction still gets its message from the row trigger', async () => {
		const ids = await enqueueMixed('batch_then_tick', 3);
		await worker(async (tx) => {
			await tx`select id from job_claim_next(array['batch_then_tick'], 3)`;
			await tx`select job_tick(${ids[0]!}, 40)`;
			await tx`select job_succeed(${ids[1]!})`;
		});
		expect(await messagesIn(ids, 'running')).toHaveLength(4);
		expect((await messagesIn(ids, 'running')).filter((m) => m.payload.progress === 40)).toHaveLength(1);
		expect(await messagesIn(ids, 'done')).toHaveLength(1);
	});

	it('a mark set by hand for another transaction silences nothing', async () => {
		const ids = await enqueueMixed('batch_forged', 1);
		await worker(async (tx) => {
			await tx`select set_config('supabase_jobs.statement_messages', '1 1', true)`;
			await tx`select job_claim(${ids[0]!})`;
		});
		expect(await messagesIn(ids, 'running')).toHaveLength(1);
	});
});

describe('when realtime.messages cannot take messages', () => {
	it('a batched claim and close still commit, and each warns once that its messages were dropped', async () => {
		const ids = await enqueueMixed('batch_unready', 4);
		const warnings: string[] = [];
		// A connection of its own: realtime_ready remembers its answer per session.
		const conn = db.connect({ max: 1, onnotice: (n) => warnings.push(String(n.message)) });
		await db.sql`alter table realtime.messages rename to messages_away`;
		try {
			const claimed = await as(conn, serviceRole, (tx) => tx`select id from job_claim_next(array['batch_unready'], 4)`);
			expect(claimed).toHaveLength(4);
			const items = ids.map((id) => ({ id, attempt: 1 }));
			const closed = await as(conn, serviceRole, (tx) => tx`select id from job_succeed_many(${tx.json(items)})`);
			expect(closed).toHaveLength(4);
		} finally {
			await db.sql`alter table realtime.messages_away rename to messages`;
			await conn.end();
		}
		const statuses = await db.sql`select status from supabase_jobs.job where id = any (${ids}::uuid[])`;
		expect(statuses.map((r) => r.status)).toEqual(['done', 'done', 'done', 'done']);
		expect(warnings.filter((w) => w.startsWith('ErrorSendingBroadcastMessage'))).toEqual([
			'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; 4 dropped',
			'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; 4 dropped',
		]);
		expect(await messagesIn(ids, 'running')).toHaveLength(0);
		expect(await messagesIn(ids, 'done')).toHaveLength(0);
	});
});

describe('a claim or close of one job by id (the per-job path)', () => {
	it('sends its one message directly, without grouping by topic (no topic_messages call)', async () => {
		const [job] = await worker((tx) => tx`select id from job_enqueue('one-by-id', owner_id => ${alice.sub})`);
		const calls = await db.sql.begin(async (tx) => {
			await tx`set local track_functions = 'all'`;
			await tx`select job_claim(${job!.id})`;
			await tx`select job_succeed(${job!.id})`;
			const [c] = await tx<{ grouped: number; sent: number; messages: number }[]>`
				select coalesce(pg_stat_get_xact_function_calls('supabase_jobs.topic_messages'::regproc), 0)::int as grouped,
				       coalesce(pg_stat_get_xact_function_calls('supabase_jobs.send_statement_messages'::regproc), 0)::int as sent,
				       (select count(*)::int from realtime.messages
				         where payload ->> 'id' = ${job!.id} and payload ->> 'status' in ('running', 'done')) as messages`;
			return c!;
		});
		// Two statements, each its one message; grouping is for a statement of several jobs.
		expect(calls).toEqual({ grouped: 0, sent: 2, messages: 2 });
	});
});
