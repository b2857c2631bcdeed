/**
 * 9. Several stages on the record itself — the SQL side of StageMap: atomic,
 * fenced compare-and-set writes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let owner: Caller & { sub: string };
let other: Caller & { sub: string };

const cols = { status_column: 'doc_status_summary', token_column: 'doc_run_summary' };

beforeAll(async () => {
	db = await useTestDatabase();
	// The application's own record table: the map declares no columns, we do.
	await db.sql`create table public.documents (
		id uuid primary key default gen_random_uuid(),
		owner_id uuid not null,
		doc_status_summary text, doc_error_summary text, doc_result_summary text, doc_run_summary uuid,
		doc_status_suggestions text, doc_run_suggestions uuid
	)`;
	await db.sql`alter table public.documents enable row level security`;
	await db.sql`create policy own on public.documents for all to authenticated using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()))`;
	await db.sql`grant select, insert, update on public.documents to authenticated, service_role`;
	owner = await createUser(db.sql);
	other = await createUser(db.sql);
});

async function doc(): Promise<string> {
	const [row] = await db.sql`insert into documents (owner_id) values (${owner.sub}) returning id`;
	return row!.id;
}
const start = (id: string, who: Caller = owner) =>
	as(
		db.sql,
		who,
		async (tx) =>
			(
				await tx`select stage_start('documents', ${id}, ${cols.status_column}, ${cols.token_column}, 'doc_error_summary') as t`
			)[0]!.t as string,
	);
const finish = (id: string, token: string, status: string, result: string | null) =>
	as(
		db.sql,
		owner,
		async (tx) =>
			(
				await tx`select stage_finish('documents', ${id}, ${cols.status_column}, ${cols.token_column}, ${token}, ${status}, 'doc_result_summary', ${result}, 'doc_error_summary', null) as ok`
			)[0]!.ok as boolean,
	);
const read = async (id: string) => (await db.sql`select * from documents where id = ${id}`)[0]!;

describe('Several stages on the record itself', () => {
	it('mark running returns a fencing token, and a finish with it lands', async () => {
		const id = await doc();
		const token = await start(id);
		expect(token).toMatch(/^[0-9a-f-]{36}$/);
		expect(await finish(id, token, 'done', 'the summary')).toBe(true);
		expect(await read(id)).toMatchObject({ doc_status_summary: 'done', doc_result_summary: 'the summary' });
	});

	it('owns is an ownership check: an old run can never overwrite a newer run, even when both saw running', async () => {
		const id = await doc();
		const oldRun = await start(id);
		const newRun = await start(id);
		expect((await read(id)).doc_status_summary).toBe('running');
		expect(await finish(id, oldRun, 'done', 'stale summary')).toBe(false);
		expect(await finish(id, newRun, 'done', 'fresh summary')).toBe(true);
		expect(await finish(id, oldRun, 'done', 'stale again')).toBe(false);
		expect((await read(id)).doc_result_summary).toBe('fresh summary');
	});

	it('two concurrent runs racing to finish: exactly the newest token lands', async () => {
		const id = await doc();
		const a = await start(id);
		const b = await start(id);
		const [ra, rb] = await Promise.all([finish(id, a, 'done', 'A'), finish(id, b, 'done', 'B')]);
		expect([ra, rb]).toEqual([false, true]);
		expect((await read(id)).doc_result_summary).toBe('B');
	});

	it("a cancelled stage is no longer the run's: its finish does not resurrect the work", async () => {
		const id = await doc();
		const token = await start(id);
		const res = await as(
			db.sql,
			owner,
			(tx) =>
				tx`select stage_cancel('documents', ${id}, ${tx.json([{ stage: 'summary', status: cols.status_column }])}) as r`,
		);
		expect(res[0]!.r).toEqual({ cancelled: ['summary'], ignored: [] });
		expect(await finish(id, token, 'done', 'too late')).toBe(false);
		expect((await read(id)).doc_status_summary).toBe('cancelled');
	});

	it('cancelling is deliberately partial: a finished stage lands in ignored, never an error', async () => {
		const id = await doc();
		const t = await start(id);
		await finish(id, t, 'done', 'kept');
		await as(
			db.sql,
			owner,
			(tx) => tx`select stage_start('documents', ${id}, 'doc_status_suggestions', 'doc_run_suggestions')`,
		);
		const [row] = await as(
			db.sql,
			owner,
			(tx) =>
				tx`select stage_cancel('documents', ${id}, ${tx.json([
					{ stage: 'summary', status: cols.status_column },
					{ stage: 'suggestions', status: 'doc_status_suggestions' },
				])}) as r`,
		);
		expect(row!.r).toEqual({ cancelled: ['suggestions'], ignored: ['summary'] });
		expect(await read(id)).toMatchObject({ doc_status_summary: 'done', doc_status_suggestions: 'cancelled' });
	});

	it('marking without a result does not erase the previous one', async () => {
		const id = await doc();
		const first = await start(id);
		await finish(id, first, 'done', 'the old summary');
		const regen = await start(id);
		expect(await finish(id, regen, 'failed', null)).toBe(true);
		expect(await read(id)).toMatchObject({ doc_status_summary: 'failed', doc_result_summary: 'the old summary' });
	});

	it("another user's record is not found, and nothing changes", async () => {
		const id = await doc();
		await expect(start(id, other)).rejects.toMatchObject({ code: 'PT404' });
		expect((await read(id)).doc_status_summary).toBeNull();
	});

	it('unknown columns and hostile table names are refused before any SQL runs', async () => {
		const id = await doc();
		await expect(
			as(db.sql, owner, (tx) => tx`select stage_start('documents', ${id}, 'doc_status_nope', 'doc_run_summary')`),
		).rejects.toMatchObject({ code: '22023', detail: 'field=status_column' });
		await expect(
			as(db.sql, owner, (tx) => tx`select stage_start('documents; drop table documents', ${id}, 'a', 'b')`),
		).rejects.toMatchObject({ code: '22023', detail: 'field=record_table' });
		await expect(
			as(
				db.sql,
				owner,
				(tx) =>
					tx`select stage_finish('documents', ${id}, ${cols.status_column}, ${cols.token_column}, gen_random_uuid(), 'running')`,
			),
		).rejects.toMatchObject({ code: '22023', detail: 'field=status' });
	});
});
