/**
 * The job page as its owner uses it while the job runs, in chromium on the
 * demo: Cancel stays within reach on a phone and a desktop while the live
 * summary grows below the bar, and a job an operator's pause holds in the
 * queue says so, in the owner's language.
 *
 * The running job is put in its state directly (enqueue, claim, tick, append
 * to the summary stream, as the worker would), not by waiting on a real
 * analysis. `npm run screenshots` writes this file's photographs of those
 * states to docs/screenshots/ too; an ordinary run, under test-results/.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { documentAnalyse } from '../../src/demo/jobs.ts';
import { SESSION_COOKIE, decodeSession } from '../../src/demo/app/session.server.ts';
import { startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import { useTestDatabase, type Sql, type TestDatabase } from '../helpers/db.ts';
import { launchChromium, snap } from './browser.ts';

const DOCS_SCREENSHOTS = resolve(
	process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots' : 'test-results/screenshots',
);

/** The page's main column as docs/demo.md shows it: `<name>.png`, `<name>-pt-BR.png`. */
async function shot(page: Page, name: string, locale: string): Promise<void> {
	await mkdir(DOCS_SCREENSHOTS, { recursive: true });
	const file = `${name}${locale.startsWith('pt') ? '-pt-BR' : ''}.png`;
	await page.locator('main').screenshot({ path: join(DOCS_SCREENSHOTS, file) });
}

/** Declared at claim: long enough that the running job never reads "Not responding" during the test. */
const HEARTBEAT_MS = 10 * 60_000;
/** One sentence of the summary, as the worker writes one per section it reads. */
const SENTENCE =
	'The committee reads every proposal against the published criteria, records its scores and the reasons for them, and keeps the ledger open for inspection. ';

let db: TestDatabase;
let stack: DemoStack;
let chromium: { browser: Browser; close(): Promise<void> };
let worker: JobStore;

beforeAll(async () => {
	db = await useTestDatabase();
	stack = await startLocalDemo({ databaseUrl: db.url, modelMs: 100 });
	chromium = await launchChromium();
	worker = new JobStore(postgresAdapter(db.sql));
}, 180_000);

afterAll(async () => {
	await chromium?.close();
	await stack?.stop();
});

/** A new visitor: their first page signs them in; returns their id. */
async function newVisitor(context: BrowserContext): Promise<string> {
	const page = await context.newPage();
	await page.goto(stack.url);
	await page.locator('.page[data-hydrated=true]').waitFor();
	await page.close();
	const cookies = await context.cookies(stack.url);
	const session = decodeSession(cookies.find((c) => c.name === SESSION_COOKIE)?.value);
	expect(session).not.toBeNull();
	return session!.userId;
}

/** The visitor's job, running at 20% of `analyse` (made in one transaction: the worker's kick comes after it). */
async function runningJob(ownerId: string): Promise<string> {
	return await db.sql.begin(async (tx) => {
		const store = new JobStore(postgresAdapter(tx as unknown as Sql));
		const job = await store.enqueue(documentAnalyse.name, {
			params: { filename: 'tender.txt', mime: 'text/plain', bytes: 200_000 },
			ownerId,
		});
		const claimed = await store.claim(job.id, { heartbeatMs: HEARTBEAT_MS });
		expect(claimed?.status).toBe('running');
		await store.tick(job.id, { progress: 20, stage: 'analyse', attempt: claimed!.attempts });
		return job.id;
	});
}

/** Whether the Cancel button lies wholly inside the window. */
async function cancelInView(page: Page): Promise<{ top: number; bottom: number; inside: boolean }> {
	const box = await page.getByRole('button', { name: 'Cancel' }).boundingBox();
	const height = page.viewportSize()!.height;
	expect(box).not.toBeNull();
	return { top: box!.y, bottom: box!.y + box!.height, inside: box!.y >= 0 && box!.y + box!.height <= height };
}

for (const width of [390, 1280]) {
	describe(`the job page at ${width} px wide`, () => {
		it('Cancel stays within reach while the live summary grows: at the top, scrolled to the end of the summary, and as more arrives', async () => {
			const context = await chromium.browser.newContext({ locale: 'en-US', viewport: { width, height: 800 } });
			try {
				const id = await runningJob(await newVisitor(context));
				const page = await context.newPage();
				await page.goto(`${stack.url}/jobs/${id}`);
				await page.locator('.page[data-hydrated=true]').waitFor();
				await page.locator('[data-testid=job][data-status=running]').waitFor();
				// The summary grows, section by section, to several screens of text.
				for (let section = 0; section < 40; section++)
					await worker.appendStream(id, 'summary', `${SENTENCE.repeat(2)}\n\n`, { attempt: 1 });
				await expect
					.poll(() => page.evaluate(() => document.documentElement.scrollHeight), { timeout: 30_000 })
					.toBeGreaterThan(2400);
				expect(await cancelInView(page)).toMatchObject({ inside: true });
				// Reading the summary to its end: Cancel comes along.
				await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
				await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(1000);
				expect(await cancelInView(page)).toMatchObject({ inside: true });
				const before = await page.evaluate(() => document.documentElement.scrollHeight);
				for (let section = 0; section < 10; section++)
					await worker.appendStream(id, 'summary', `${SENTENCE}\n\n`, { attempt: 1 });
				await expect
					.poll(() => page.evaluate(() => document.documentElement.scrollHeight), { timeout: 30_000 })
					.toBeGreaterThan(before);
				expect(await cancelInView(page)).toMatchObject({ inside: true });
				await snap(page, `job-page-reach-${width}`);
				if (width === 390) await page.screenshot({ path: join(DOCS_SCREENSHOTS, 'job-cancel-in-reach-phone.png') });
				// And it works from there: the job ends cancelled.
				await page.getByRole('button', { name: 'Cancel' }).click();
				await page.locator('[data-testid=job][data-status=cancelled]').waitFor({ timeout: 30_000 });
			} finally {
				await context.close();
			}
		});
	});
}

describe('a job its kind’s pause holds in the queue', () => {
	for (const [locale, words] of [
		['en-US', 'waiting: Document analysis is paused by the operator'],
		['pt-BR', 'aguardando: o operador pausou Análise de documento'],
	] as const) {
		it(`tells its owner, in words, that the operator paused it (${locale}), where it read only "Queued"`, async () => {
			const context = await chromium.browser.newContext({ locale, viewport: { width: 390, height: 800 } });
			const ownerId = await newVisitor(context);
			expect(await worker.pauseKind(documentAnalyse.name)).toBe(true);
			try {
				// Queued by its owner while the kind is paused: no worker takes it.
				const job = await worker.enqueue(documentAnalyse.name, {
					params: { filename: 'paused.txt', mime: 'text/plain', bytes: 5 },
					payload: 'Hello',
					ownerId,
				});
				const page = await context.newPage();
				await page.goto(`${stack.url}/jobs/${job.id}`);
				await page.locator('.page[data-hydrated=true]').waitFor();
				await page.locator('[data-testid=job][data-status=queued]').waitFor();
				await expect.poll(() => page.locator('.sj-progress__stage').textContent(), { timeout: 30_000 }).toBe(words);
				await shot(page, 'job-paused', locale);
				await worker.cancel(job.id);
				await page.locator('[data-testid=job][data-status=cancelled]').waitFor({ timeout: 30_000 });
			} finally {
				await worker.resumeKind(documentAnalyse.name);
				await context.close();
			}
		});
	}
});

describe('a job that failed for good (an empty file)', () => {
	for (const [locale, failed, forGood, tryAgain] of [
		[
			'en-US',
			'The file is empty.',
			'Trying again would fail the same way: start a new job with other input.',
			'Try again',
		],
		[
			'pt-BR',
			'O arquivo está vazio.',
			'Tentar de novo falharia do mesmo jeito: comece um novo trabalho com outra entrada.',
			'Tentar de novo',
		],
	] as const) {
		it(`says trying again would fail the same way and offers no Try again (${locale})`, async () => {
			const context = await chromium.browser.newContext({ locale, viewport: { width: 390, height: 800 } });
			try {
				const ownerId = await newVisitor(context);
				// An empty upload, run by the demo's own worker.
				const job = await worker.enqueue(documentAnalyse.name, {
					params: { filename: 'empty.txt', mime: 'text/plain', bytes: 0 },
					payload: new Uint8Array(0),
					ownerId,
					locale,
				});
				const page = await context.newPage();
				await page.goto(`${stack.url}/jobs/${job.id}`);
				await page.locator('.page[data-hydrated=true]').waitFor();
				await page.locator('[data-testid=job][data-status=failed]').waitFor({ timeout: 60_000 });
				await expect.poll(() => page.getByText(failed).count()).toBeGreaterThan(0);
				expect((await page.locator('[data-testid=failed-for-good]').textContent())?.trim()).toBe(forGood);
				expect(await page.getByRole('button', { name: tryAgain }).count()).toBe(0);
				await shot(page, 'job-failed-for-good', locale);
			} finally {
				await context.close();
			}
		});
	}
});
