/**
 * Every page of the demo, opened by its address in chromium at a phone's
 * width (390 px) and a laptop's (1280 px): nothing wider than the window (no
 * sideways scroll of the page), no console error or hydration warning, and no
 * accessibility violation axe-core rates serious or critical. The pages: the
 * home page, a job in each state a person meets (a waiting job with its
 * question among them), a result, and the admin dashboard with and without a
 * job opened — reached as a newcomer would, through the local stack's
 * "Sign in as admin". At 1280 px every control of the dashboard's tables is
 * in view, none hidden past a table's edge.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { documentAnalyse } from '../../src/demo/jobs.ts';
import { SESSION_COOKIE, decodeSession } from '../../src/demo/app/session.server.ts';
import { startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import { useTestDatabase, type Sql, type TestDatabase } from '../helpers/db.ts';
import { launchChromium, snap } from './browser.ts';

const WIDTHS = [
	{ name: 'phone', width: 390, height: 844 },
	{ name: 'laptop', width: 1280, height: 800 },
] as const;
const STATES = ['queued', 'running', 'waiting', 'done', 'failed', 'cancelled'] as const;
type State = (typeof STATES)[number];
/** Declared at claim: the running job never reads "Not responding" during the test. */
const HEARTBEAT_MS = 10 * 60_000;

let db: TestDatabase;
let stack: DemoStack;
let chromium: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
	db = await useTestDatabase();
	stack = await startLocalDemo({ databaseUrl: db.url, modelMs: 100 });
	chromium = await launchChromium();
}, 180_000);

afterAll(async () => {
	await chromium?.close();
	await stack?.stop();
});

/** One of the visitor's jobs in `state`, made in one transaction (the worker's kick comes after it). */
async function jobIn(state: State, ownerId: string): Promise<string> {
	return await db.sql.begin(async (tx) => {
		const store = new JobStore(postgresAdapter(tx as unknown as Sql));
		const job = await store.enqueue(documentAnalyse.name, {
			params: { filename: `${state}.txt`, mime: 'text/plain' },
			ownerId,
			...(state === 'queued' ? { runAt: new Date(Date.now() + 3600_000) } : {}),
		});
		if (state === 'queued') return job.id;
		const claimed = await store.claim(job.id, { heartbeatMs: HEARTBEAT_MS });
		const attempt = claimed!.attempts;
		await store.tick(job.id, { progress: 40, stage: 'analyse', attempt });
		if (state === 'waiting')
			await store.ask(job.id, {
				key: 'pages',
				prompt: 'How many pages should the summary be?',
				schema: { type: 'integer', minimum: 1, maximum: 5 },
				attempt,
			});
		if (state === 'done') await store.succeed(job.id, { attempt });
		if (state === 'failed') await store.fail(job.id, 'The file could not be read.', { attempt });
		if (state === 'cancelled') await store.cancel(job.id);
		return job.id;
	});
}

/** The analysis a done job wrote, as the worker would have. */
async function resultOf(jobId: string, ownerId: string): Promise<string> {
	const stats = { characters: 1200, words: 210, sentences: 14, readingSeconds: 60, chunks: 1, pages: null };
	const [row] = await db.sql<{ id: string }[]>`
		insert into public.document_analyses (owner_id, job_id, filename, stats, summary, keywords)
		values (${ownerId}, ${jobId}, 'done.txt', ${db.sql.json({ ...stats, format: 'text', language: 'en' })},
		        'A short text about queues, written to be summarised.', ${['queues', 'summary', 'jobs']})
		returning id`;
	return row!.id;
}

/** What went wrong in the page's console: errors, and any hydration warning. */
function watchConsole(page: Page): string[] {
	const problems: string[] = [];
	page.on('console', (m) => {
		if (m.type() === 'error' || /hydrat/i.test(m.text())) problems.push(`${m.type()}: ${m.text()}`);
	});
	page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
	return problems;
}

/** Opens `path` fresh, waits for hydration, and checks width, console and axe. */
async function expectFits(context: BrowserContext, base: string, path: string, shot: string): Promise<Page> {
	const page = await context.newPage();
	const problems = watchConsole(page);
	const response = await page.goto(`${base}${path}`);
	expect(response?.status(), path).toBe(200);
	await page.locator('.page[data-hydrated=true]').waitFor();
	// Anything hydration or the live connection logs comes within a frame or two of this.
	await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
	const width = await page.evaluate(() => ({
		scroll: document.documentElement.scrollWidth,
		inner: window.innerWidth,
		wide: [...document.querySelectorAll('body *')]
			.filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5)
			.filter((el) => !el.closest('[role=region][tabindex="0"]'))
			.slice(0, 5)
			.map((el) => `${el.tagName.toLowerCase()}.${el.className}`),
	}));
	await snap(page, shot);
	expect({ path, ...width }).toEqual({ path, scroll: width.inner, inner: width.inner, wide: [] });
	const axe = await new AxeBuilder({ page }).analyze();
	const serious = axe.violations
		.filter((v) => v.impact === 'serious' || v.impact === 'critical')
		.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
	expect({ path, serious }).toEqual({ path, serious: [] });
	expect({ path, problems }).toEqual({ path, problems: [] });
	return page;
}

for (const size of WIDTHS) {
	describe(`every page at ${size.width} px`, () => {
		let context: BrowserContext;
		let userId: string;
		const jobs = new Map<State, string>();

		beforeAll(async () => {
			context = await chromium.browser.newContext({
				locale: 'en-US',
				viewport: { width: size.width, height: size.height },
			});
			const page = await context.newPage();
			await page.goto(stack.url);
			await page.locator('.page[data-hydrated=true]').waitFor();
			await page.close();
			const session = decodeSession((await context.cookies(stack.url)).find((c) => c.name === SESSION_COOKIE)?.value);
			userId = session!.userId;
			for (const state of STATES) jobs.set(state, await jobIn(state, userId));
		});

		afterAll(async () => {
			await context?.close();
		});

		it('the home page fits, logs nothing wrong and has no serious accessibility violation', async () => {
			await (await expectFits(context, stack.url, '/', `fit-home-${size.name}`)).close();
		});

		for (const state of STATES) {
			it(`a ${state} job's page fits, logs nothing wrong and has no serious accessibility violation`, async () => {
				const page = await expectFits(context, stack.url, `/jobs/${jobs.get(state)!}`, `fit-${state}-${size.name}`);
				await page.locator(`[data-testid=job][data-status=${state}]`).waitFor();
				if (state === 'waiting') await page.getByLabel('How many pages should the summary be?').waitFor();
				await page.close();
			});
		}

		it('a result page fits, logs nothing wrong and has no serious accessibility violation', async () => {
			const resultId = await resultOf(jobs.get('done')!, userId);
			await (await expectFits(context, stack.url, `/results/${resultId}`, `fit-result-${size.name}`)).close();
		});

		it('/admin answers a visitor "Admins only" with the local stack’s "Sign in as admin", which opens the dashboard', async () => {
			const page = await context.newPage();
			const refused = await page.goto(`${stack.url}/admin`);
			expect(refused?.status()).toBe(403);
			await page.getByRole('button', { name: 'Sign in as admin' }).click();
			await page.waitForURL(`${stack.url}/admin`);
			await page.getByTestId('jobs-dashboard').waitFor();
			expect(
				decodeSession((await context.cookies(stack.url)).find((c) => c.name === SESSION_COOKIE)?.value)?.userId,
			).toBe(userId);
			await page.close();
		});

		for (const opened of [false, true]) {
			const what = opened ? '/admin?job=<id>' : '/admin';
			it(`${what}, as admin, fits (at 1280 px every control of its tables in view; narrower, inside a region the keyboard scrolls), logs nothing wrong, no serious violation`, async () => {
				const path = opened ? `/admin?job=${jobs.get('failed')!}` : '/admin';
				const page = await expectFits(context, stack.url, path, `fit-admin${opened ? '-job' : ''}-${size.name}`);
				await page.getByTestId('dashboard-queues').waitFor();
				if (opened) await page.getByTestId('dashboard-job').waitFor();
				const hidden = await page.evaluate(() =>
					[...document.querySelectorAll('[data-testid=jobs-dashboard] .sj-scroll')]
						.filter((region) => region.scrollWidth > region.clientWidth + 1)
						.map((region) => `${region.getAttribute('aria-label')}: ${region.scrollWidth} in ${region.clientWidth}`),
				);
				if (size.width >= 1280) expect(hidden).toEqual([]);
				await page.close();
			});
		}
	});
}
