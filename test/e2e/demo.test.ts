/**
 * The demo in a real browser: the whole stack (the test's own database,
 * the Deno worker, the stand-in, the dispatcher, the built app) and Debian's
 * chromium. Every wait is on a DOM condition or a log line, never a sleep.
 * Screenshots of each state land in test-results/e2e/. The app is served by
 * Node 24 here (screen.test.ts serves it with this machine's Node, and
 * job-by-address.test.ts with every Node of test/helpers/nodes.ts).
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { words } from '../../src/demo/analysis/text.ts';
import { startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { NODE24, nodeVersion } from '../helpers/nodes.ts';
import { frames, launchChromium, recordFrames, snap } from './browser.ts';

/** The worker's tick (createWorker's default): how often a running phase writes progress and learns of a cancel. */
const TICK_MS = 1000;
/** The model-call stand-in per chunk: long enough that the bar shows several frames, short enough for CI. */
const MODEL_MS = 200;

let db: TestDatabase;
let stack: DemoStack;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let first: BrowserContext;
const shots: string[] = [];

/** ~`chunks` chunks of English prose about tenders (the analysis cuts at 1500 characters). */
function prose(chunks: number): string {
	const paragraph = (i: number) =>
		`Section ${i}. The tender covers the delivery of building materials to the site. ` +
		'Prices must include transport, insurance and the removal of packaging. '.repeat(6) +
		'Late delivery is charged per day. The supplier keeps a register of every delivery.';
	return Array.from({ length: chunks * 2 }, (_, i) => paragraph(i)).join('\n\n');
}

async function openDashboard(context: BrowserContext): Promise<Page> {
	const page = await context.newPage();
	await page.goto(stack.url);
	// The upload runs in the browser: the button is enabled once the page is live.
	await page.locator('[data-testid=upload-form] button[type=submit]:enabled').waitFor();
	return page;
}

async function upload(page: Page, name: string, mimeType: string, text: string | Buffer): Promise<string> {
	await page.setInputFiles('input[type=file]', { name, mimeType, buffer: Buffer.from(text) });
	await page.click('[data-testid=upload-form] button[type=submit]');
	await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
	return page.url().split('/').at(-1)!;
}

beforeAll(async () => {
	db = await useTestDatabase();
	stack = await startLocalDemo({ databaseUrl: db.url, modelMs: MODEL_MS, appNode: NODE24 });
	chromium = await launchChromium();
	first = await chromium.browser.newContext({ locale: 'en-US', viewport: { width: 1000, height: 800 } });
}, 180_000);

afterAll(async () => {
	await chromium?.close();
	await stack?.stop();
});

describe('the demo in a browser', () => {
	it('the app is served by Node 24', () => {
		expect(stack.app!.process.spawnfile).toBe(NODE24);
		expect(nodeVersion(NODE24)).toMatch(/^v24\./);
	});

	it('upload a text file: the bar rises through the stages to done, and the result page shows the analysis', async () => {
		const page = await openDashboard(first);
		shots.push(await snap(page, '01-dashboard-empty'));
		const text = prose(12);
		const id = await upload(page, 'tender.txt', 'text/plain', text);
		await recordFrames(page);

		// Mid-run: the analyse phase, with a percentage strictly between its ends.
		await page.waitForFunction(() => {
			const bar = document.querySelector('[data-testid=job] [role=progressbar]');
			const v = Number(bar?.getAttribute('aria-valuenow'));
			// aria-valuetext says the number first: "37%, Analysing".
			return bar?.getAttribute('aria-valuetext') === `${v}%, Analysing` && v > 5 && v < 90;
		});
		shots.push(await snap(page, '02-job-running'));

		await page.locator('[data-testid=job][data-status=done]').waitFor({ timeout: 30_000 });
		await page.locator('[data-testid=result-link]').waitFor();
		shots.push(await snap(page, '03-job-done'));

		const seen = await frames(page);
		const values = seen.map((f) => f.value);
		// Never backwards, several honest frames in between, full at the end.
		expect(values).toEqual([...values].sort((a, b) => a - b));
		expect(new Set(values.filter((v) => v > 0 && v < 100)).size).toBeGreaterThanOrEqual(3);
		expect(values.at(-1)).toBe(100);
		expect(seen.some((f) => /^\d+%, Analysing$/.test(f.text))).toBe(true);
		expect(seen.at(-1)!.text, 'the ended job reads as ended, not as its last stage').toBe('Done');
		expect(seen.map((f) => f.status)).toContain('running');

		// The worker ran the three phases on this file and recorded their timings.
		const [row] = await db.sql<
			{ status: string; timings: Record<string, { seconds: number; size: number | null }>; payload: Buffer | null }[]
		>`
			select status, timings, payload from public.jobs where id = ${id}`;
		expect(row!.status).toBe('done');
		expect(Object.keys(row!.timings)).toEqual(expect.arrayContaining(['extract', 'analyse', 'summarise']));
		expect(row!.timings.analyse!.seconds).toBeGreaterThan((MODEL_MS / 1000) * 10);
		expect(row!.payload).toBeNull();

		await page.click('[data-testid=result-link]');
		await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
		await expect
			.poll(() => page.locator('[data-testid=words]').textContent())
			.toBe(words(text).length.toLocaleString('en-US'));
		const keywords = await page.locator('[data-testid=keywords] li').allTextContents();
		expect(keywords).toEqual(expect.arrayContaining(['delivery', 'prices']));
		expect((await page.locator('[data-testid=summary]').textContent())?.length).toBeGreaterThan(20);
		expect(await page.locator('main').textContent(), 'every figure renders as a figure').not.toContain('[object');
		shots.push(await snap(page, '04-result'));
		await page.close();
	});

	it("the job page shows the summary growing as the worker writes it, the document's size from the job's metadata, and says when the text is finished", async () => {
		// A visitor of its own: the other tests count the first visitor's jobs.
		const context = await chromium.browser.newContext({ locale: 'en-US', viewport: { width: 1000, height: 800 } });
		const page = await openDashboard(context);
		await upload(page, 'streamed.txt', 'text/plain', prose(8));
		await page.waitForSelector('[data-testid=job]');
		// Every length the summary shows, as it changes (the section is there from the start of the run).
		await page.evaluate(() => {
			const w = window as unknown as { __summary: number[] };
			w.__summary = [];
			const read = () => {
				const text = document.querySelector('[data-testid=live-summary] .job-stream-text')?.textContent ?? '';
				if (w.__summary.at(-1) !== text.length) w.__summary.push(text.length);
			};
			read();
			new MutationObserver(read).observe(document.querySelector('[data-testid=job]')!, {
				subtree: true,
				childList: true,
				characterData: true,
			});
		});
		await page.locator('[data-testid=job-metadata]').waitFor();
		expect(await page.locator('[data-testid=job-metadata]').textContent()).toMatch(/characters · \d+ sections/);
		await page.waitForFunction(() => {
			const text = document.querySelector('[data-testid=live-summary] .job-stream-text')?.textContent ?? '';
			return text.length > 0 && document.querySelector('[data-testid=job]')?.getAttribute('data-status') === 'running';
		});
		shots.push(await snap(page, '03b-summary-being-written'));
		await page.locator('[data-testid=job][data-status=done]').waitFor({ timeout: 30_000 });
		await page.locator('[data-testid=live-summary] section[data-ended=true]').waitFor();
		const lengths = await page.evaluate(() => (window as unknown as { __summary: number[] }).__summary);
		const grown = lengths.filter((n) => n > 0);
		// It grew in several steps while the job ran, never shrank.
		expect(grown.length).toBeGreaterThanOrEqual(3);
		expect(grown).toEqual([...grown].sort((a, b) => a - b));
		const summary = (await page.locator('[data-testid=live-summary] .job-stream-text').textContent()) ?? '';
		// A sentence per section read, each on its own paragraph.
		expect(summary).toContain('transport');
		expect(summary.split('\n\n').filter((p) => p.trim() !== '').length).toBeGreaterThanOrEqual(3);
		expect(summary.length).toBe(grown.at(-1));
		// The live region spoke the end, not each piece.
		expect(await page.locator('[data-testid=live-summary] [aria-live=polite]').textContent()).toContain(
			'Finished writing.',
		);
		await context.close();
	});

	it('cancel mid-run: the bar reads cancelled within 2 ticks and shows no further progress', async () => {
		const page = await openDashboard(first);
		const id = await upload(page, 'long-tender.md', 'text/markdown', `# Long tender\n\n${prose(60)}`);
		await recordFrames(page);
		await page.waitForFunction(() => {
			const bar = document.querySelector('[data-testid=job] [role=progressbar]');
			const v = Number(bar?.getAttribute('aria-valuenow'));
			return bar?.getAttribute('aria-valuetext') === `${v}%, Analysing` && v > 2;
		});
		shots.push(await snap(page, '05-before-cancel'));

		const clickedAt = await page.evaluate(() => performance.now());
		await page.getByRole('button', { name: 'Cancel' }).click();
		await page.locator('[data-testid=job][data-status=cancelled]').waitFor({ timeout: 2 * TICK_MS });
		expect(await page.locator('[data-testid=job-status]').textContent()).toContain('Cancelled');
		shots.push(await snap(page, '06-cancelled'));

		// The worker learns it on its next tick and stops the handler (the model call is aborted mid-wait).
		await stack.worker!.waitForLine(
			new RegExp(`job ${id}( was cancelled; the handler stopped|: the handler was interrupted)`),
			3 * TICK_MS,
		);

		const seen = await frames(page);
		const cancelled = seen.findIndex((f) => f.status === 'cancelled');
		expect(cancelled).toBeGreaterThan(0);
		expect(seen[cancelled]!.t - clickedAt).toBeLessThan(2 * TICK_MS);
		// Nothing moved after the cancel, and the ended job reads as ended: no stage, no percentage.
		const frozen = seen[cancelled - 1]!.value;
		expect(frozen).toBeLessThan(100);
		expect(seen.slice(cancelled).every((f) => f.status === 'cancelled' && f.text === 'Cancelled')).toBe(true);
		expect(await page.getByRole('button', { name: 'Cancel' }).count(), 'no Cancel on an ended job').toBe(0);
		expect(
			await page.evaluate(() => document.activeElement?.getAttribute('data-testid')),
			'focus moved to the status, not lost to the body',
		).toBe('job-status');
		const [row] = await db.sql<{ status: string; progress: number; payload: Buffer | null }[]>`
			select status, progress, payload from public.jobs where id = ${id}`;
		expect(row).toMatchObject({ status: 'cancelled', payload: null });
		expect(Math.round(row!.progress)).toBeLessThanOrEqual(frozen + 1);
		const [{ n }] = await db.sql<
			{ n: number }[]
		>`select count(*)::int as n from public.document_analyses where job_id = ${id}`;
		expect(n).toBe(0);
		await page.close();
	});

	it('a failed job is highlighted on the dashboard with its sentence in the browser language (pt-BR)', async () => {
		const context = await chromium.browser.newContext({ locale: 'pt-BR', viewport: { width: 1000, height: 800 } });
		try {
			const page = await openDashboard(context);
			const id = await upload(page, 'foto.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
			await page.locator('[data-testid=job][data-status=failed]').waitFor({ timeout: 15_000 });
			await expect
				.poll(() => page.getByRole('alert').textContent())
				.toBe('Só consigo ler arquivos de texto, Markdown e PDF.');
			await page.goto(stack.url);
			const row = page.locator(`[data-testid=recent] li[data-job-id="${id}"]`);
			await row.waitFor();
			expect(await row.getAttribute('class')).toContain('row--failed');
			expect(await row.textContent()).toContain('Só consigo ler arquivos');
			expect(await page.locator('h1').first().textContent()).toBe('Analisar um documento');
			shots.push(await snap(page, '07-dashboard-failed-pt-BR'));
		} finally {
			await context.close();
		}
	});

	it("a second browser (another visitor) sees none of the first visitor's jobs", async () => {
		const mine = await openDashboard(first);
		const firstVisitor = await mine.locator('[data-testid=visitor] code').textContent();
		await mine.locator('[data-testid=recent] li[data-job-id]').first().waitFor();
		const myJobs = await mine.locator('[data-testid=recent] li[data-job-id]').evaluateAll((rows) =>
			rows.map((r) => ({
				id: r.getAttribute('data-job-id')!,
				status: r.getAttribute('data-status')!,
				failed: r.classList.contains('row--failed'),
			})),
		);
		expect(myJobs.map((j) => j.status).sort()).toEqual(['cancelled', 'done']);
		// Cancelled is terminal but not a failure: not highlighted.
		expect(myJobs.some((j) => j.failed)).toBe(false);
		shots.push(await snap(mine, '08-dashboard-first-visitor'));

		const second = await chromium.browser.newContext({ locale: 'en-US', viewport: { width: 1000, height: 800 } });
		try {
			const theirs = await openDashboard(second);
			expect(await theirs.locator('[data-testid=visitor] code').textContent()).not.toBe(firstVisitor);
			await theirs.locator('[data-testid=no-jobs]').waitFor();
			expect(await theirs.locator('[data-testid=recent] li[data-job-id]').count()).toBe(0);
			shots.push(await snap(theirs, '09-dashboard-second-visitor'));
			// Not even by address: RLS answers "not found" for another user's job.
			const response = await theirs.goto(`${stack.url}/jobs/${myJobs[0]!.id}`);
			expect(response?.status()).toBe(404);
		} finally {
			await second.close();
		}
		await mine.close();
		console.log(`screenshots:\n  ${shots.join('\n  ')}`);
	});

	it('a document in no language the worker can tell: the job page asks which, the answer finishes it; cancelled, Try again goes to a new job on the same file', async () => {
		// A visitor of their own, so the others' job lists stay as they are.
		const context = await chromium.browser.newContext({ locale: 'en-US', viewport: { width: 1000, height: 800 } });
		const gibberish = 'Zorblat quimmen vask trelo. Brindo skaf plumet orvik. Tasko flen dorp wimble kraz.\n';
		try {
			const page = await openDashboard(context);
			const id = await upload(page, 'notes.txt', 'text/plain', gibberish);
			const question = page.getByRole('form', { name: 'A question about this job' });
			await question.waitFor({ timeout: 15_000 });
			await page.locator('[data-testid=job][data-status=waiting]').waitFor();
			expect(await question.textContent()).toContain('I could not tell which language "notes.txt" is in. Which is it?');
			shots.push(await snap(page, '10-job-asks'));
			await question.getByRole('radio', { name: 'Portuguese' }).check();
			await question.getByRole('button', { name: 'Answer' }).click();
			await page.locator('[data-testid=job][data-status=done]').waitFor({ timeout: 30_000 });
			expect(await question.count(), 'the question is gone once answered').toBe(0);
			await page.click('[data-testid=result-link]');
			await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
			await expect.poll(() => page.locator('[data-testid=language]').textContent()).toBe('Portuguese');
			const [asked] = await db.sql<{ attempts: number }[]>`select attempts from public.jobs where id = ${id}`;
			expect(asked!.attempts, 'asking spent no attempt').toBe(1);

			const next = await openDashboard(context);
			const second = await upload(next, 'notes.txt', 'text/plain', gibberish);
			await next.getByRole('form', { name: 'A question about this job' }).waitFor({ timeout: 15_000 });
			await next.getByRole('button', { name: 'Cancel' }).click();
			await next.locator('[data-testid=job][data-status=cancelled]').waitFor();
			await next.getByRole('button', { name: 'Try again' }).click();
			await next.waitForURL((url) => /\/jobs\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(second));
			const again = next.url().split('/').at(-1)!;
			// The new job runs on the same file: it asks the same question.
			const retried = next.getByRole('form', { name: 'A question about this job' });
			await retried.waitFor({ timeout: 15_000 });
			shots.push(await snap(next, '11-tried-again-asks'));
			await retried.getByRole('radio', { name: 'English' }).check();
			await retried.getByRole('button', { name: 'Answer' }).click();
			await next.locator('[data-testid=job][data-status=done]').waitFor({ timeout: 30_000 });
			const rows = await db.sql<{ id: string; status: string; retry_of: string | null }[]>`
				select id, status, retry_of from public.jobs where id in (${second}, ${again}) order by created_at`;
			expect(rows.map((r) => [r.id, r.status, r.retry_of])).toEqual([
				[second, 'cancelled', null],
				[again, 'done', second],
			]);
		} finally {
			await context.close();
		}
	});

	it('the demo supervises its worker: killed, it is started again and the next upload is done', async () => {
		const worker = stack.worker!;
		const restarted = worker.nextStart();
		worker.current.process.kill('SIGKILL');
		const next = await restarted;
		await next.waitForLine(/jobs-worker listening on/);
		expect(worker.restarts).toBe(1);
		const page = await openDashboard(first);
		await upload(page, 'after-restart.txt', 'text/plain', prose(3));
		await page.locator('[data-testid=job][data-status=done]').waitFor({ timeout: 30_000 });
		await page.close();
	});
});
