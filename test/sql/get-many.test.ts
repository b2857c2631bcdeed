/**
 * job_get_many: the rows job_get would return, for many ids in one call — the
 * caller's own jobs only under RLS, never a payload, unknown ids absent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { anon, as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let userA: Awaited<ReturnType<typeof createUser>>;
let userB: Awaited<ReturnType<typeof createUser>>;
let idsA: string[];
let idB: string;

beforeAll(async () => {
	db = await useTestDatabase();
	userA = await createUser(db.sql);
	userB = await createUser(db.sql);
	idsA = await as(db.sql, userA, async (tx) => [
		(await tx`select id from job_enqueue('extract', '{"n":1}', '\\x41'::bytea)`)[0]!.id as string,
		(await tx`select id from job_enqueue('extract', '{"n":2}')`)[0]!.id as string,
	]);
	idB = (await as(db.sql, userB, (tx) => tx`select id from job_enqueue('extract', '{}', '\\x42'::bytea)`))[0]!.id;
});

type Got = { id: string; payload: unknown; status: string }[];
const getMany =
	(ids: string[]) =>
	(tx: any): Promise<Got> =>
		tx`select id, payload, params, status from job_get_many(${ids}::uuid[]) order by params ->> 'n'`;

describe('job_get_many', () => {
	it("a user gets their own jobs, without payload; another user's id and an unknown id are absent", async () => {
		const rows = await as(db.sql, userA, getMany([...idsA, idB, '00000000-0000-4000-8000-000000000000']));
		expect(rows.map((r) => r.id).sort()).toEqual([...idsA].sort());
		expect(rows.every((r) => r.payload === null)).toBe(true);
		expect(rows.map((r) => r.status)).toEqual(['queued', 'queued']);
	});

	it('the service role reads every job (payload still omitted); anon may not call it', async () => {
		const rows = await as(db.sql, serviceRole, getMany([...idsA, idB]));
		expect(rows).toHaveLength(3);
		expect(rows.every((r) => r.payload === null)).toBe(true);
		await expect(as(db.sql, anon, getMany(idsA))).rejects.toMatchObject({ code: '42501' });
	});

	it('refuses a missing list and more than list_max ids, naming the field', async () => {
		await expect(as(db.sql, serviceRole, (tx) => tx`select * from job_get_many(null)`)).rejects.toMatchObject({
			code: '22023',
			detail: 'field=ids',
		});
		const many = Array.from({ length: 1001 }, () => '00000000-0000-4000-8000-000000000000');
		await expect(as(db.sql, serviceRole, getMany(many))).rejects.toMatchObject({ code: '22023', detail: 'field=ids' });
	});
});
