/**
 * public.jobs_admin_overview() (supabase/schemas/12b_admin_views.sql):
 * the admin views as one JSON document for an admin (JWT app_metadata.role
 * = 'admin'), counting every user's jobs; refused (42501) to everyone else.
 */
import type postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { anon, as, claimsFor, createUser, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
let alice: Caller & { sub: string };
let bob: Caller & { sub: string };
let admin: Caller & { sub: string };

/** As `caller`, with app_metadata in the JWT claims as GoTrue puts it there. */
async function asWithAppMetadata<T>(
	caller: Caller,
	appMetadata: Record<string, unknown>,
	fn: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
	const claims = { ...claimsFor(caller), app_metadata: appMetadata };
	return (await db.sql.begin(async (tx) => {
		await tx`select set_config('role', ${caller.role}, true), set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
		return await fn(tx);
	})) as T;
}

type Overview = Record<string, Record<string, unknown>[]> & { generated_at: string };

beforeAll(async () => {
	db = await useTestDatabase();
	[alice, bob, admin] = [await createUser(db.sql), await createUser(db.sql), await createUser(db.sql)];
	for (const [user, n] of [
		[alice, 2],
		[bob, 3],
	] as const)
		for (let i = 0; i < n; i++)
			await as(
				db.sql,
				user,
				(tx) => tx`select * from job_enqueue('overview', ${tx.json({ secret: 'p' + i })}, ${Buffer.from('payload')})`,
			);
});

describe('jobs_admin_overview', () => {
	it('an admin gets every view, counting every user’s jobs', async () => {
		const [{ o }] = await asWithAppMetadata(
			admin,
			{ provider: 'email', role: 'admin' },
			(tx) => tx<{ o: Overview }[]>`select jobs_admin_overview() as o`,
		);
		expect(Object.keys(o).sort()).toEqual(
			[
				'generated_at',
				'job_counts',
				'job_failure_rates',
				'job_latency',
				'job_throughput_hourly',
				'job_top_errors',
				'jobs_overrunning',
				'jobs_silent',
				'owner_usage',
			].sort(),
		);
		expect(o.job_counts).toContainEqual(
			expect.objectContaining({ job_table: 'jobs', kind: 'overview', status: 'queued', jobs: 5 }),
		);
		const usage = new Map(o.owner_usage.map((u) => [u.owner_id, u.queued]));
		expect(usage.get(alice.sub)).toBe(2);
		expect(usage.get(bob.sub)).toBe(3);
	});

	it('never carries params or payload', async () => {
		const [{ o }] = await asWithAppMetadata(
			admin,
			{ role: 'admin' },
			(tx) => tx<{ o: Overview }[]>`select jobs_admin_overview() as o`,
		);
		const text = JSON.stringify(o);
		expect(text).not.toContain('secret');
		expect(text).not.toMatch(/"(params|payload)"/);
	});

	it('a signed-in user who is not an admin is refused (42501), even with role admin in user_metadata', async () => {
		const refused = asWithAppMetadata(alice, { provider: 'email' }, (tx) => tx`select jobs_admin_overview()`);
		await expect(refused).rejects.toMatchObject({ code: '42501', message: 'the jobs overview is for admins only' });
		const forged = db.sql.begin(async (tx) => {
			const claims = { ...claimsFor(alice), user_metadata: { role: 'admin' } };
			await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
			return await tx`select jobs_admin_overview()`;
		});
		await expect(forged).rejects.toMatchObject({ code: '42501' });
	});

	it('anon may not call it', async () => {
		await expect(as(db.sql, anon, (tx) => tx`select jobs_admin_overview()`)).rejects.toMatchObject({ code: '42501' });
	});
});
