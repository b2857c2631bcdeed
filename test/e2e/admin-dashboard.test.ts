/**
 * The admin dashboard in real chromium, at the demo's /admin (the built app
 * over the stand-in, no worker: nothing claims the jobs the test puts in
 * place). An admin sees the queues and a failed job's sentence, pauses a kind
 * and sees it paused, tries a failed job again and opens the new one, with
 * JavaScript (forms posted in place) and without (plain form posts); a
 * visitor gets 403 and no figure.
 */
import { decodeJwt } from 'jose';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSession, SESSION_COOKIE } from '../../src/demo/app/session.server.ts';
import { startChild, type Child } from '../../src/local/demo/processes.ts';
import { freePort } from '../../src/local/postgres/embedded.ts';
import { projectRoot } from '../../src/local/postgres/migrate.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { as, createUser, serviceRole, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { JWT_SECRET } from '../standin/helpers.ts';
import { launchChromium, snap } from './browser.ts';

const SENTENCE = 'The export ran out of disk.';

let db: TestDatabase;
let standin: Standin;
let app: Child;
let appUrl: string;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let failedId: string;
/** How long a form post and the page's update may take on a loaded 2-core runner (expect.poll waits 1 s unless told). */
const POST_LANDS = { timeout: 15_000 };

beforeAll(async () => {
	db = await useTestDatabase();
	standin = await createStandin({ databaseUrl: db.url, jwtSecret: JWT_SECRET });
	const owner = (await createUser(db.sql)).sub;
	const enqueue = (kind: string) =>
		as(
			db.sql,
			{ role: 'authenticated', sub: owner },
			(tx) => tx<{ id: string }[]>`select id from job_enqueue(${kind})`,
		);
	await enqueue('e2e-analyse');
	await enqueue('e2e-analyse');
	const [failing] = await enqueue('e2e-export');
	failedId = failing!.id;
	await as(db.sql, serviceRole, async (tx) => {
		await tx`select * from job_claim(${failedId})`;
		await tx`select * from job_fail(${failedId}, ${SENTENCE}, 1, 'disk_full')`;
	});
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
	chromium = await launchChromium();
}, 180_000);

afterAll(async () => {
	await chromium?.close();
	await app?.stop();
	await standin?.close();
});

/** A page whose session cookie is an admin's (app_metadata.role = 'admin', signed by the stand-in). */
async function adminPage(browser: Browser, javaScriptEnabled = true): Promise<Page> {
	const userId = (await createUser(db.sql)).sub;
	const accessToken = await standin.mintUserToken(userId, { claims: { app_metadata: { role: 'admin' } } });
	const session = { accessToken, refreshToken: null, userId, expiresAt: decodeJwt(accessToken).exp! };
	const context = await browser.newContext({ javaScriptEnabled, locale: 'en-US' });
	await context.addCookies([{ name: SESSION_COOKIE, value: encodeSession(session), url: appUrl }]);
	return await context.newPage();
}

const queueRow = (page: Page, kind: string) => page.locator(`[data-testid=dashboard-queues] tr[data-kind="${kind}"]`);
const result = (page: Page) => page.getByRole('status');

describe('the admin dashboard in chromium', () => {
	it('an admin sees the queues and a failed job’s sentence, pauses a kind in place and sees it paused', async () => {
		const page = await adminPage(chromium.browser);
		await page.goto(`${appUrl}/admin`);
		await page.locator('.page[data-hydrated=true]').waitFor();
		await expect.poll(() => queueRow(page, 'e2e-analyse').locator('[data-status=queued]').textContent()).toBe('2');
		const failedRow = page.locator(`[data-testid=dashboard-failed] tr[data-job="${failedId}"]`);
		expect(await failedRow.getByTestId('failed-sentence').textContent()).toBe(SENTENCE);
		expect(await failedRow.textContent()).toContain('disk_full');

		// Marked before the click: a full page load would clear it, an enhanced post keeps it.
		await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
		await page.getByRole('button', { name: 'Pause e2e-analyse' }).click();
		await expect.poll(() => result(page).textContent(), POST_LANDS).toContain('e2e-analyse paused');
		expect(await queueRow(page, 'e2e-analyse').getByTestId('kind-state').textContent()).toBe('Paused');
		expect(await page.getByRole('button', { name: 'Resume e2e-analyse' }).count()).toBe(1);
		expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
		// The state is the database's: a fresh load says the same.
		await page.reload();
		expect(await queueRow(page, 'e2e-analyse').getByTestId('kind-state').textContent()).toBe('Paused');
		await snap(page, 'admin-dashboard-paused');
		await page.context().close();
	});

	it('an admin tries a failed job again and opens the new one, linked to the old', async () => {
		const page = await adminPage(chromium.browser);
		await page.goto(`${appUrl}/admin`);
		await page.locator('.page[data-hydrated=true]').waitFor();
		await page.getByRole('button', { name: `Try job ${failedId.slice(-8)} again` }).click();
		await expect
			.poll(() => result(page).textContent(), POST_LANDS)
			.toContain(`Job ${failedId.slice(-8)} queued again as job`);
		const [made] = await db.sql<{ id: string }[]>`select id from supabase_jobs.job where retry_of = ${failedId}`;
		await result(page)
			.getByRole('link', { name: `Open job ${made!.id.slice(-8)}` })
			.click();
		const opened = page.getByTestId('dashboard-job');
		await expect.poll(() => opened.getAttribute('data-status'), POST_LANDS).toBe('queued');
		expect(await opened.locator('h2').textContent()).toBe(`Job ${made!.id.slice(-8)}`);
		expect(await opened.textContent()).toContain('Tries again');
		expect(await opened.getByRole('list', { name: `Timeline of job ${made!.id.slice(-8)}` }).count()).toBe(1);
		await snap(page, 'admin-dashboard-new-job');
		await page.context().close();
	});

	it('without JavaScript the actions are plain form posts: resume answers with the page and its sentence', async () => {
		const page = await adminPage(chromium.browser, false);
		await page.goto(`${appUrl}/admin`);
		await page.getByRole('button', { name: 'Resume e2e-analyse' }).click();
		await page.waitForLoadState('load');
		expect(await result(page).textContent()).toContain('e2e-analyse resumed.');
		expect(await queueRow(page, 'e2e-analyse').getByTestId('kind-state').textContent()).toBe('Active');
		await page.context().close();
	});

	it('a visitor gets 403 and no figure from the page, and 403 from an action posted by hand', async () => {
		const context = await chromium.browser.newContext({ locale: 'en-US' });
		const page = await context.newPage();
		const response = await page.goto(`${appUrl}/admin`);
		expect(response!.status()).toBe(403);
		const html = await page.content();
		expect(html).toContain('Admins only');
		expect(html).not.toContain('e2e-analyse');
		expect(html).not.toContain(SENTENCE);
		const posted = await page.request.post(`${appUrl}/admin?/pause`, {
			form: { kind: 'e2e-analyse' },
			headers: { origin: appUrl },
		});
		expect(posted.status()).toBe(403);
		expect(await posted.text()).not.toContain('e2e-analyse');
		await context.close();
	});
});
