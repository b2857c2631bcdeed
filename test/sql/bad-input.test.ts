/**
 * Bad input gets a clear error naming what was wrong (22023, DETAIL field=...),
 * and changes nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let user: Caller & { sub: string };
beforeAll(async () => {
	db = await useTestDatabase();
	user = await createUser(db.sql);
});

async function refused(caller: Caller, query: (tx: any) => Promise<unknown>) {
	const [{ before }] = await db.sql`select count(*)::int as before from jobs`;
	const [{ fingerprint: f0 }] =
		await db.sql`select md5(coalesce(string_agg(j::text, ',' order by id), '')) as fingerprint from jobs j`;
	let error: any;
	try {
		await as(db.sql, caller, query);
	} catch (e) {
		error = e;
	}
	expect(error, 'the call should have been refused').toBeDefined();
	const [{ after }] = await db.sql`select count(*)::int as after from jobs`;
	const [{ fingerprint: f1 }] =
		await db.sql`select md5(coalesce(string_agg(j::text, ',' order by id), '')) as fingerprint from jobs j`;
	expect(after, 'nothing was written').toBe(before);
	expect(f1, 'nothing changed').toBe(f0);
	return error as { code: string; message: string; detail?: string };
}

describe('bad input is refused with an error naming the field, and changes nothing', () => {
	it('a non-UUID id', async () => {
		const e = await refused(serviceRole, (tx) => tx`select * from job_get(${'not-a-uuid'})`);
		expect(e.code).toBe('22P02');
		expect(e.message).toMatch(/uuid/);
	});

	it('an empty kind', async () => {
		const e = await refused(user, (tx) => tx`select * from job_enqueue('')`);
		expect(e).toMatchObject({ code: '22023', detail: 'field=kind' });
		expect(e.message).toBe('kind is required');
	});

	it('an oversized kind', async () => {
		const e = await refused(user, (tx) => tx`select * from job_enqueue(${'k'.repeat(65)})`);
		expect(e).toMatchObject({ code: '22023', detail: 'field=kind' });
		expect(e.message).toMatch(/at most 64 characters; got 65/);
	});

	it('a hostile kind name', async () => {
		for (const kind of ["x'; drop table jobs; --", '../etc', ' extract', 'ex tract', 'café']) {
			const e = await refused(user, (tx) => tx`select * from job_enqueue(${kind})`);
			expect(e).toMatchObject({ code: '22023', detail: 'field=kind' });
		}
	});

	it('params that are not a JSON object', async () => {
		for (const params of ['[1,2]', '"text"', '42', 'null']) {
			const e = await refused(user, (tx) => tx`select * from job_enqueue('extract', ${params}::jsonb)`);
			if (params === 'null') {
				// JSON null is not SQL null: it is a value of the wrong type too.
				expect(e.detail).toBe('field=params');
			} else {
				expect(e).toMatchObject({ code: '22023', detail: 'field=params' });
			}
			expect(e.message).toMatch(/params must be a JSON object/);
		}
	});

	it('params over 64 KiB', async () => {
		const big = { text: 'x'.repeat(70_000) };
		const e = await refused(user, (tx) => tx`select * from job_enqueue('extract', ${tx.json(big)})`);
		expect(e).toMatchObject({ code: '22023', detail: 'field=params' });
	});

	it('a payload over the documented 10 MiB limit', async () => {
		const payload = Buffer.alloc(10 * 1024 * 1024 + 1, 1);
		const e = await refused(user, (tx) => tx`select * from job_enqueue('extract', '{}', ${payload})`);
		expect(e).toMatchObject({ code: '22023', detail: 'field=payload' });
		expect(e.message).toMatch(/at most 10485760 bytes; got 10485761/);
	});

	it('max_attempts out of range, a malformed locale', async () => {
		expect(await refused(user, (tx) => tx`select * from job_enqueue('extract', max_attempts => 0)`)).toMatchObject({
			detail: 'field=max_attempts',
		});
		expect(
			await refused(user, (tx) => tx`select * from job_enqueue('extract', locale => 'portuguese please')`),
		).toMatchObject({ detail: 'field=locale' });
	});

	it('hostile job table names', async () => {
		for (const t of ['jobs; drop table jobs', 'auth.users', 'pg_catalog.pg_authid', 'Jobs', '"jobs"', 'nope']) {
			const e = await refused(user, (tx) => tx`select * from job_enqueue('extract', job_table => ${t})`);
			expect(['22023', '42P01']).toContain(e.code);
			expect(e.message).toMatch(/job_table|not a job table/);
		}
	});

	it('claim_next looks the table name up only when it claims nothing, and still refuses every name that is not a job table', async () => {
		for (const t of [
			'jobs; drop table jobs',
			'auth.users',
			'pg_catalog.pg_authid',
			'Jobs',
			'"jobs"',
			'nope',
			'public.nope',
		]) {
			const e = await refused(serviceRole, (tx) => tx`select * from job_claim_next(job_table => ${t})`);
			expect(['22023', '42P01']).toContain(e.code);
			expect(e.message).toMatch(/job_table|not a job table/);
		}
		// The name as written, "public." or not, finds the table's jobs.
		const kind = 'claim.by.label';
		await as(db.sql, serviceRole, (tx) => tx`select job_enqueue(${kind}), job_enqueue(${kind})`);
		for (const t of ['public.jobs', 'jobs']) {
			const claimed = await as(
				db.sql,
				serviceRole,
				(tx) => tx`select kind from job_claim_next(kinds => ${[kind]}, job_table => ${t})`,
			);
			expect(claimed).toEqual([{ kind }]);
		}
	});

	it('progress outside 0..100 and an empty or whitespace-only failure sentence', async () => {
		const [job] = await as(db.sql, user, (tx) => tx`select id from job_enqueue('extract')`);
		await as(db.sql, serviceRole, (tx) => tx`select * from job_claim(${job!.id})`);
		expect(await refused(serviceRole, (tx) => tx`select job_tick(${job!.id}, 101)`)).toMatchObject({
			code: '22023',
			detail: 'field=progress',
		});
		expect(await refused(serviceRole, (tx) => tx`select job_tick(${job!.id}, 'NaN')`)).toMatchObject({
			code: '22023',
			detail: 'field=progress',
		});
		expect(await refused(serviceRole, (tx) => tx`select * from job_fail(${job!.id}, '  ')`)).toMatchObject({
			code: '22023',
			detail: 'field=error',
		});
		// Any whitespace, not only spaces: the user would read an empty "why it stopped".
		expect(await refused(serviceRole, (tx) => tx`select * from job_fail(${job!.id}, ${' \n\t\r '})`)).toMatchObject({
			code: '22023',
			detail: 'field=error',
		});
		expect(await refused(serviceRole, (tx) => tx`select * from job_retry(${job!.id}, ${'\n'})`)).toMatchObject({
			code: '22023',
			detail: 'field=error',
		});
	});

	it('a threshold that is not positive, even given to supabase_jobs.reclaim_jobs directly', async () => {
		const [job] = await as(db.sql, user, (tx) => tx`select id from job_enqueue('extract')`);
		await as(db.sql, serviceRole, (tx) => tx`select * from job_claim(${job!.id})`);
		for (const threshold of ['-1 day', '0 seconds']) {
			const e = await refused(
				serviceRole,
				(tx) => tx`select * from supabase_jobs.reclaim_jobs('jobs', ${threshold}::interval)`,
			);
			expect(e).toMatchObject({ code: '22023', detail: 'field=stale_after' });
			expect(e.message).toMatch(/stale_after must be positive/);
		}
		const [row] = await db.sql`select status from jobs where id = ${job!.id}`;
		expect(row!.status).toBe('running');
	});

	it('a batch item that is not a JSON object, named by its index (enqueue_many and succeed_many)', async () => {
		for (const items of ['[[[1]]]', '[{}, 42]', '[{}, {}, "x"]']) {
			const e = await refused(user, (tx) => tx`select * from job_enqueue_many('extract', ${items}::text::jsonb)`);
			expect(e.code).toBe('22023');
			expect(e.detail).toBe(`field=items[${JSON.parse(items).length - 1}]`);
			expect(e.message).toMatch(/each item is a JSON object/);
		}
		const e = await refused(serviceRole, (tx) => tx`select * from job_succeed_many('[["x"]]'::jsonb)`);
		expect(e).toMatchObject({ code: '22023', detail: 'field=items[0]' });
	});

	it('job_succeed_many names the item and field of an id, attempt or result_id of the wrong type', async () => {
		const id = '00000000-0000-4000-8000-000000000001';
		for (const [items, field] of [
			[[{ id: 'not-a-uuid' }], 'items[0].id'],
			[[{ id }, { id, attempt: 1e300 }], 'items[1].attempt'],
			[[{ id, attempt: 1.5 }], 'items[0].attempt'],
			[[{ id }, { id }, { id, result_id: 42 }], 'items[2].result_id'],
		] as const) {
			const e = await refused(
				serviceRole,
				(tx) => tx`select * from job_succeed_many(${JSON.stringify(items)}::text::jsonb)`,
			);
			expect(e).toMatchObject({ code: '22023', detail: `field=${field}` });
		}
	});

	it('limit, statuses and cursor of list_recent', async () => {
		expect(await refused(user, (tx) => tx`select * from job_list_recent("limit" => 0)`)).toMatchObject({
			detail: 'field=limit',
		});
		expect(
			await refused(user, (tx) => tx`select * from job_list_recent(status => 'queued', statuses => '{running}')`),
		).toMatchObject({ detail: 'field=statuses' });
		expect(await refused(user, (tx) => tx`select * from job_list_recent(cursor => 'garbage')`)).toMatchObject({
			detail: 'field=cursor',
		});
	});
});

describe('worker inputs past what PostgreSQL can hold are refused naming the field', () => {
	it('job_retry refuses a delay past 100 years with 22023 naming delay (never a raw 22008), and the job keeps running', async () => {
		const [{ id }] = await as(db.sql, serviceRole, (tx) => tx`select id from job_enqueue('far.retry')`);
		await as(db.sql, serviceRole, (tx) => tx`select job_claim(${id}::uuid)`);
		const e = await refused(serviceRole, (tx) => tx`select job_retry(${id}::uuid, 'boom', delay => '100000000 years')`);
		expect({ code: e.code, detail: e.detail }).toEqual({ code: '22023', detail: 'field=delay' });
		expect((await db.sql`select status from jobs where id = ${id}`)[0]!.status).toBe('running');
	});
});
