/**
 * The stream table in SQL (15_streams.sql): who may read and write it
 * directly, with role and claims set as PostgREST sets them, and its
 * retention with the job's row.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { anon, as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let owner: Caller & { sub: string };
let other: Caller & { sub: string };

beforeAll(async () => {
	db = await useTestDatabase();
	owner = await createUser(db.sql);
	other = await createUser(db.sql);
});

/** A job of `owner` with `text` appended by a worker; returns its id. */
async function withOutput(text: string): Promise<string> {
	const [row] = await as(db.sql, owner, (tx) => tx`select id from job_enqueue('summary')`);
	const id = row!.id as string;
	await as(db.sql, serviceRole, (tx) => tx`select job_claim(${id})`);
	await as(db.sql, serviceRole, (tx) => tx`select job_stream_append(${id}, 'summary', ${text}, 1)`);
	return id;
}

async function outcome(caller: Caller, query: (tx: any) => Promise<any>): Promise<string> {
	try {
		const rows = await as(db.sql, caller, query);
		return Array.isArray(rows) ? `rows:${rows.length}` : 'ok';
	} catch (e) {
		return (e as { code: string }).code;
	}
}

describe('supabase_jobs.job_stream', () => {
	it('the owner reads their chunks straight from the table; another user and anon read none; nobody but a worker writes', async () => {
		const id = await withOutput('mine');
		const select = (tx: any) => tx`select body from supabase_jobs.job_stream where job_id = ${id}`;
		expect(await outcome(owner, select)).toBe('rows:1');
		expect(await outcome(other, select)).toBe('rows:0');
		expect(await outcome(anon, select)).toBe('42501');
		const forge = (tx: any) =>
			tx`insert into supabase_jobs.job_stream (job_id, attempt, seq, stream, body, job_bytes, job_table, owner_id)
			   values (${id}, 1, 99, 'summary', 'forged', 6, 'jobs', ${owner.sub})`;
		expect(await outcome(owner, forge)).toBe('42501');
		expect(await outcome(owner, (tx: any) => tx`delete from supabase_jobs.job_stream where job_id = ${id}`)).toBe(
			'42501',
		);
		expect(await outcome(owner, (tx: any) => tx`select job_stream_append(${id}, 'summary', 'x')`)).toBe('42501');
		expect(await outcome(anon, (tx: any) => tx`select job_stream_read(${id})`)).toBe('42501');
	});

	it("cleanup deletes a finished job's streamed output with its row, and leaves a live job's", async () => {
		const finished = await withOutput('old output');
		await as(db.sql, serviceRole, (tx) => tx`select job_succeed(${finished}, attempt => 1)`);
		const live = await withOutput('still being written');
		await db.sql`update supabase_jobs.settings set finished_retention = '1 microsecond'`;
		await db.sql`select * from supabase_jobs.cleanup()`;
		const left = await db.sql<{ job_id: string }[]>`select distinct job_id::text from supabase_jobs.job_stream`;
		expect(left.map((r) => r.job_id)).toContain(live);
		expect(left.map((r) => r.job_id)).not.toContain(finished);
		expect(await db.sql`select 1 from supabase_jobs.job where id = ${finished}`).toHaveLength(0);
	});
});
