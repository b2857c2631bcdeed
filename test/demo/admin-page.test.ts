/**
 * The demo's /admin page (src/routes/admin): its server load, run as SvelteKit
 * runs it for a request, against the stand-in over this file's database. An
 * admin (JWT app_metadata.role = 'admin') gets the operator views' figures,
 * every user's jobs counted; an ordinary visitor gets 403 and no figures. Then
 * the built app (build/, as `npm run demo` serves it) renders both pages.
 */
import { decodeJwt } from 'jose';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSession, SESSION_COOKIE, type DemoSession } from '../../src/demo/app/session.server.ts';
import { startChild, type Child } from '../../src/local/demo/processes.ts';
import { freePort } from '../../src/local/postgres/embedded.ts';
import { projectRoot } from '../../src/local/postgres/migrate.ts';
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
	const url = new URL('http://app.test/admin');
	return (await load({ locals, url, request: new Request(url) } as unknown as Parameters<typeof load>[0])) as {
		overview: AdminOverview;
	};
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
	await app?.stop();
	await standin?.close();
});

let app: Child | undefined;
let appUrl: string;

/** The built demo app (global setup built it), over the stand-in. */
async function startApp(): Promise<void> {
	const port = await freePort();
	appUrl = `http://127.0.0.1:${port}`;
	app = startChild('app', process.execPath, [join(projectRoot, 'build/index.js')], {
		cwd: projectRoot,
		env: {
			...process.env,
			HOST: '127.0.0.1',
			PORT: String(port),
			ORIGIN: appUrl,
			PUBLIC_SUPABASE_URL: standin.url,
			PUBLIC_SUPABASE_ANON_KEY: standin.anonKey,
			DEMO_AUTH: 'standin',
			DEMO_STANDIN_JWT_SECRET: JWT_SECRET,
			DEMO_STANDIN_DATABASE_URL: db.url,
		},
	});
	await app.waitForLine(/Listening on/);
}

async function getAdmin(session: DemoSession, language: string): Promise<{ status: number; html: string }> {
	const response = await fetch(`${appUrl}/admin`, {
		headers: { cookie: `${SESSION_COOKIE}=${encodeSession(session)}`, 'accept-language': language },
	});
	return { status: response.status, html: await response.text() };
}

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

	it('the built app renders the figures for an admin, in Portuguese when asked, with the link to /admin', async () => {
		await startApp();
		const admin = (await createUser(db.sql)).sub;
		const { status, html } = await getAdmin(await sessionFor(admin, { role: 'admin' }), 'pt-BR,pt;q=0.9');
		expect(status).toBe(200);
		expect(html).toContain('Visão geral dos trabalhos');
		expect(html).toContain('data-testid="admin-link"');
		expect(html).toMatch(/<td[^>]*>admin-page-analyse<\/td><td[^>]*>queued<\/td><td[^>]*>3<\/td>/);
		expect(html).toMatch(/<td[^>]*>100 %<\/td>/); // the export kind's failure rate
		expect(html).toContain('disk_full: The export ran out of disk.');
	});

	it('the built app answers an ordinary visitor 403 with the admins-only page, and no figures', async () => {
		const { status, html } = await getAdmin(await sessionFor(visitor, { provider: 'anonymous' }), 'en');
		expect(status).toBe(403);
		expect(html).toContain('Admins only');
		expect(html).not.toContain('data-testid="admin-link"');
		expect(html).not.toContain('admin-page-analyse');
	});
});
