/**
 * The demo's /admin page (src/routes/admin): its server load, run as SvelteKit
 * runs it for a request, against the stand-in over this file's database. An
 * admin (JWT app_metadata.role = 'admin') gets the operator views' figures,
 * every user's jobs counted; an ordinary visitor gets 403 and no figures.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoSession } from '../../src/demo/app/session.server.ts';
import type { AdminOverview } from '../../src/demo/app/admin-overview.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { load } from '../../src/routes/admin/+page.server.ts';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { JWT_SECRET } from '../standin/helpers.ts';

let db: TestDatabase;
let standin: Standin;
let visitor: string;
let other: string;

async function sessionFor(userId: string, appMetadata: Record<string, unknown>): Promise<DemoSession> {
	const accessToken = await standin.mintUserToken(userId, { claims: { app_metadata: appMetadata } });
	return { accessToken, refreshToken: null, userId, expiresAt: decodeJwt(accessToken).exp! };
}

/** The load as SvelteKit calls it for a request by `session`. */
async function loadAs(session: DemoSession): Promise<{ overview: AdminOverview }> {
	const locals = {
		config: {
			supabaseUrl: standin.url,
			anonKey: standin.anonKey,
			auth: { mode: 'standin' as const, jwtSecret: JWT_SECRET, databaseUrl: db.url },
		},
		session,
		locale: 'en' as const,
	};
	return (await load({ locals } as unknown as Parameters<typeof load>[0])) as { overview: AdminOverview };
}

beforeAll(async () => {
	db = await useTestDatabase();
	standin = await createStandin({ databaseUrl: db.url, jwtSecret: JWT_SECRET });
	visitor = (await createUser(db.sql)).sub;
	other = (await createUser(db.sql)).sub;
	// A known history: the visitor has 3 queued analyses, another user 1 that failed.
	for (let i = 0; i < 3; i++)
		await as(db.sql, { role: 'authenticated', sub: visitor }, (tx) => tx`select job_enqueue('admin-page-analyse')`);
	const [failing] = await as(
		db.sql,
		{ role: 'authenticated', sub: other },
		(tx) => tx<{ id: string }[]>`select id from job_enqueue('admin-page-export')`,
	);
	await as(db.sql, serviceRole, async (tx) => {
		await tx`select * from job_claim(${failing!.id})`;
		await tx`select * from job_fail(${failing!.id}, 'The export ran out of disk.', 1, 'disk_full')`;
	});
});

afterAll(async () => {
	await standin?.close();
});

describe('the demo admin page', () => {
	it('an admin sees every user’s jobs counted, failure rates and top errors, and usage per owner', async () => {
		const admin = (await createUser(db.sql)).sub;
		const { overview } = await loadAs(await sessionFor(admin, { provider: 'anonymous', role: 'admin' }));
		expect(overview.job_counts).toContainEqual(
			expect.objectContaining({ job_table: 'jobs', kind: 'admin-page-analyse', status: 'queued', jobs: 3 }),
		);
		expect(overview.job_counts).toContainEqual(
			expect.objectContaining({ kind: 'admin-page-export', status: 'failed', jobs: 1 }),
		);
		expect(overview.job_failure_rates).toContainEqual(
			expect.objectContaining({ kind: 'admin-page-export', finished: 1, failed: 1, failure_rate: 1 }),
		);
		expect(overview.job_top_errors).toContainEqual(
			expect.objectContaining({
				kind: 'admin-page-export',
				rank: 1,
				error_code: 'disk_full',
				error: 'The export ran out of disk.',
				jobs: 1,
			}),
		);
		expect(overview.owner_usage).toContainEqual(expect.objectContaining({ owner_id: visitor, queued: 3, running: 0 }));
		for (const view of ['job_throughput_hourly', 'job_latency', 'jobs_overrunning', 'jobs_silent'] as const)
			expect(Array.isArray(overview[view]), view).toBe(true);
	});

	it('an ordinary visitor gets 403 and no figures, even their own', async () => {
		const refused = loadAs(await sessionFor(visitor, { provider: 'anonymous', providers: ['anonymous'] }));
		await expect(refused).rejects.toMatchObject({ status: 403 });
	});

	it('a visitor who put role admin in their own user_metadata is still refused', async () => {
		const accessToken = await standin.mintUserToken(visitor, { claims: { user_metadata: { role: 'admin' } } });
		const session = { accessToken, refreshToken: null, userId: visitor, expiresAt: decodeJwt(accessToken).exp! };
		await expect(loadAs(session)).rejects.toMatchObject({ status: 403 });
	});
});
