/**
 * Parent and child jobs under races of real connections (each client its own
 * PostgreSQL session): children ending at once resume their parent exactly
 * once, a parent's wait racing its last child never strands it, workers racing
 * to claim a resumed parent cannot both win, and a parent cancelled while its
 * children close ends with every child ended.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type Sql, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
beforeAll(async () => {
	db = await useTestDatabase();
});

function connections(n: number): Sql[] {
	return Array.from({ length: n }, () => db.connect({ max: 1 }));
}

/** A running parent with `n` running children. */
async function family(kind: string, n: number): Promise<{ parent: string; children: string[] }> {
	const [{ id: parent }] = await db.sql<{ id: string }[]>`select id from job_enqueue(${kind})`;
	await db.sql`select job_claim(${parent})`;
	const children: string[] = [];
	for (let i = 0; i < n; i++) {
		const [{ id }] = await db.sql<{ id: string }[]>`select id from job_enqueue_child(${parent}, ${kind + '-part'})`;
		await db.sql`select job_claim(${id})`;
		children.push(id);
	}
	return { parent, children };
}

/** How many times the parent went waiting -> queued, read from the messages its topic got. */
async function resumes(parent: string): Promise<number> {
	const [{ n }] = await db.sql<{ n: number }[]>`
		select count(*)::int as n from realtime.messages
		 where topic = ${'job:' + parent} and payload->>'id' = ${parent} and payload->>'status' = 'queued'`;
	return n;
}

describe('parent and child jobs, raced over real connections', () => {
	it('children ending concurrently on 6 connections resume the parent exactly once (20 rounds)', async () => {
		const conns = connections(6);
		for (let round = 0; round < 20; round++) {
			const { parent, children } = await family('race-resume', 6);
			await db.sql`select job_wait_for_children(${parent})`;
			await Promise.all(children.map((id, i) => as(conns[i]!, serviceRole, (tx) => tx`select job_succeed(${id})`)));
			const [row] = await db.sql`select status::text, attempts from jobs where id = ${parent}`;
			expect(row).toMatchObject({ status: 'queued', attempts: 0 });
			expect(await resumes(parent)).toBe(1);
		}
	});

	it("a parent's wait racing its last child never strands it: either it does not park, or it is resumed (30 rounds)", async () => {
		const [a, b] = connections(2);
		const outcomes = new Set<string>();
		for (let round = 0; round < 30; round++) {
			const { parent, children } = await family('race-wait', 1);
			const [[waited]] = await Promise.all([
				as(a!, serviceRole, (tx) => tx<{ s: string }[]>`select job_wait_for_children(${parent})::text as s`),
				as(b!, serviceRole, (tx) => tx`select job_succeed(${children[0]!})`),
			]);
			const [row] = await db.sql`select status::text from jobs where id = ${parent}`;
			// 'running': the child ended first and the handler goes on; 'waiting': it parked and was resumed.
			expect(row!.status).toBe(waited!.s === 'running' ? 'running' : 'queued');
			outcomes.add(waited!.s);
		}
		expect([...outcomes].every((s) => s === 'running' || s === 'waiting')).toBe(true);
	});

	it('two workers racing to claim a resumed parent: exactly one gets it', async () => {
		const [a, b] = connections(2);
		for (let round = 0; round < 10; round++) {
			const { parent, children } = await family('race-reclaim', 2);
			await db.sql`select job_wait_for_children(${parent})`;
			for (const id of children) await db.sql`select job_succeed(${id})`;
			const claims = await Promise.all(
				[a!, b!].map((sql) =>
					as(sql, serviceRole, (tx) => tx<{ id: string }[]>`select id from job_claim_next(array['race-reclaim'], 5)`),
				),
			);
			expect(claims.flat().map((r) => r.id)).toEqual([parent]);
			await db.sql`select job_succeed(${parent})`;
		}
	});

	it('a parent cancelled while its children close concurrently: every child ended, none left running', async () => {
		const conns = connections(5);
		for (let round = 0; round < 10; round++) {
			const { parent, children } = await family('race-cancel', 4);
			await db.sql`select job_wait_for_children(${parent})`;
			await Promise.all([
				as(conns[0]!, serviceRole, (tx) => tx`select job_cancel(${parent})`),
				...children.map((id, i) =>
					as(conns[i + 1]!, serviceRole, (tx) => tx`select job_succeed(${id})`).catch((e: { code?: string }) => {
						// Cancelled first: the close is refused as for any cancelled job.
						if (e.code !== 'PT410') throw e;
					}),
				),
			]);
			const rows = await db.sql`select status::text as s from jobs where parent_id = ${parent}`;
			expect(rows.every((r) => r.s === 'done' || r.s === 'cancelled')).toBe(true);
			const [row] = await db.sql`select status::text from jobs where id = ${parent}`;
			expect(row!.status).toBe('cancelled');
		}
	});

	it('a user cannot write parent_id: attaching a child to any job by a raw insert is refused', async () => {
		const user = await createUser(db.sql);
		const sub = user.sub;
		const { parent } = await family('raw-attach', 0);
		const e = await as(
			db.sql,
			user,
			(tx) => tx`insert into jobs (kind, owner_id, parent_id) values ('x', ${sub}, ${parent})`,
		).catch((err: { code?: string }) => err);
		expect((e as { code?: string }).code).toBe('42501');
		// Nor through a worker's insert naming another owner: the child belongs to the parent's owner.
		const err = await db.sql`insert into jobs (kind, owner_id, parent_id) values ('x', ${sub}, ${parent})`.catch(
			(x: { code?: string }) => x,
		);
		expect((err as { code?: string }).code).toBe('22023');
		const [{ n }] = await db.sql`select count(*)::int as n from jobs where parent_id = ${parent}`;
		expect(n).toBe(0);
	});
});

describe('parent and child triggers act only on what the parent shows', () => {
	/** Messages the parent's topic got about one child. */
	async function childMessages(parent: string, child: string): Promise<number> {
		const [{ n }] = await db.sql<{ n: number }[]>`
			select count(*)::int as n from realtime.messages where topic = ${'job:' + parent} and payload->>'id' = ${child}`;
		return n;
	}

	it("a child's tick with new progress reaches the parent; a heartbeat that changes nothing shown does not", async () => {
		const { parent, children } = await family('shown-changes', 1);
		const child = children[0]!;
		const before = await childMessages(parent, child);
		await db.sql`select job_tick(${child}, 40, 'reading')`;
		expect(await childMessages(parent, child)).toBe(before + 1);
		const [{ progress }] = await db.sql<{ progress: number }[]>`select progress from jobs where id = ${parent}`;
		expect(progress).toBe(40);
		// The same progress and stage again: a heartbeat, nothing for the parent's topic.
		await db.sql`select job_tick(${child}, 40, 'reading')`;
		expect(await childMessages(parent, child)).toBe(before + 1);
	});

	it('a parent resumed after its children keeps the progress they earned, waiting -> queued -> running', async () => {
		const { parent, children } = await family('kept-progress', 2);
		await db.sql`select job_tick(${children[0]!}, 50)`;
		await db.sql`select job_wait_for_children(${parent})`;
		for (const id of children) await db.sql`select job_succeed(${id})`;
		const [queued] = await db.sql`select status::text, progress from jobs where id = ${parent}`;
		expect(queued).toMatchObject({ status: 'queued' });
		expect(queued!.progress).toBeGreaterThan(0);
		await db.sql`select job_claim(${parent})`;
		const [running] = await db.sql`select status::text, progress from jobs where id = ${parent}`;
		expect(running).toEqual({ status: 'running', progress: queued!.progress });
	});
});
