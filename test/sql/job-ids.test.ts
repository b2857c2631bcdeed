/**
 * Job ids are time-ordered UUIDs (RFC 9562 version 7, made in SQL by the
 * id column's default): a new id lands at the right edge of the primary-key
 * index, and ids sort by creation to the millisecond.
 */
import { describe, expect, test } from 'vitest';
import { as, createUser, useTestDatabase } from '../helpers/db.ts';

const db = await useTestDatabase();
const sql = db.sql;
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('job ids', () => {
	test('are version 7 UUIDs whose first 48 bits are the creation time in Unix milliseconds', async () => {
		const before = Date.now();
		const [job] = await sql<{ id: string; created_at: Date }[]>`select id, created_at from public.job_enqueue('ids')`;
		const after = Date.now();
		expect(job!.id).toMatch(V7);
		const ms = parseInt(job!.id.replaceAll('-', '').slice(0, 12), 16);
		expect(ms).toBeGreaterThanOrEqual(before - 1000);
		expect(ms).toBeLessThanOrEqual(after + 1000);
	});

	test('made by a signed-in user too (the default runs as the caller), their time prefixes in the order jobs were created', async () => {
		const user = await createUser(sql);
		const ids: string[] = [];
		for (let i = 0; i < 5; i++) {
			const [row] = await as(sql, user, (tx) => tx<{ id: string }[]>`select id from public.job_enqueue('ids')`);
			ids.push(row!.id);
		}
		for (const id of ids) expect(id).toMatch(V7);
		// Within one millisecond the rest is random: the time prefixes never go back.
		const prefixes = ids.map((id) => id.slice(0, 13));
		expect([...prefixes].sort()).toEqual(prefixes);
		const many = await sql<{ id: string }[]>`
			select id from public.job_enqueue_many('ids', (select jsonb_agg('{}'::jsonb) from generate_series(1, 50)))`;
		expect(new Set(many.map((r) => r.id)).size).toBe(50);
		for (const { id } of many) expect(id).toMatch(V7);
	});
});
