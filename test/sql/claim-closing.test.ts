/**
 * job_claim_next(succeed => items): the closes of a worker's finished jobs
 * ride with its next claim, one call and one commit for both. The closed rows
 * come back too, with status done; a job missing from them was not closable.
 */
import { describe, expect, test } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';

const db = await useTestDatabase();
const sql = db.sql;

describe('job_claim_next with succeed', () => {
	test('closes the running jobs it is given, then claims: the closed rows come back done, the claimed running', async () => {
		const [a, b] = await sql<{ id: string }[]>`
			select id from public.job_enqueue_many('closing', '[{}, {}]'::jsonb)`;
		const running = await sql<{ id: string; attempts: number }[]>`
			select id, attempts from public.job_claim_next(array['closing'], 2)`;
		expect(running.map((r) => r.id).sort()).toEqual([a!.id, b!.id].sort());
		const [c] = await sql<{ id: string }[]>`select id from public.job_enqueue('closing')`;
		const items = [
			{ id: a!.id, attempt: running.find((r) => r.id === a!.id)!.attempts, result_id: null, timings: null },
			{ id: b!.id, attempt: 99, result_id: null, timings: null }, // another attempt's: not closable
		];
		const rows = await sql<{ id: string; status: string }[]>`
			select id, status from public.job_claim_next(array['closing'], 5, succeed => ${sql.json(items)})`;
		expect(rows).toEqual([
			{ id: a!.id, status: 'done' },
			{ id: c!.id, status: 'running' },
		]);
		const [still] = await sql<{ status: string }[]>`select status from public.jobs where id = ${b!.id}`;
		expect(still!.status).toBe('running');
	});

	test('bad items are refused as job_succeed_many refuses them, and nothing is claimed', async () => {
		await sql`select public.job_enqueue('closing-bad')`;
		await expect(
			sql`select * from public.job_claim_next(array['closing-bad'], succeed => '{"id": 1}'::jsonb)`,
		).rejects.toMatchObject({
			code: '22023',
		});
		const [{ n }] = await sql<
			{ n: number }[]
		>`select count(*)::int as n from public.jobs where kind = 'closing-bad' and status = 'queued'`;
		expect(n).toBe(1);
	});
});
