/**
 * The screen answers the person in front of it, read the way assistive
 * technology reads it: chromium's own accessibility tree (CDP
 * Accessibility.getFullAXTree; the progressbar's spoken value from the
 * element it names, see progressbar()), in English and in Brazilian Portuguese, over
 * the whole local stack. How much longer (the worker's estimate), a worker
 * that went silent (the Deno worker stopped with SIGSTOP: alive, but no
 * heartbeat), the retry after the reclaim, a finished, a cancelled and a
 * failed job; the live region's announcements; focus after cancel; titles;
 * lang; the 404 page; the dashboard's strip, filter, upload field and dates;
 * the result's language. The screenshots of those states come from this run,
 * not from a drawing: `npm run screenshots` writes them to docs/screenshots/
 * (the README shows them).
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { launchChromium } from './browser.ts';

const MODEL_MS = 300;
/** Declared by the demo's worker at claim: silent on screen after 2.5 beats, reclaimable after 3. */
const HEARTBEAT_MS = 1000;
// `npm run screenshots` writes the README's copies; an ordinary run leaves the
// committed tree alone and writes its own under test-results/.
const DOCS_SCREENSHOTS = resolve(
	process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots' : 'test-results/screenshots',
);

let db: TestDatabase;
let stack: DemoStack;
let chromium: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
	db = await useTestDatabase();
	stack = await startLocalDemo({ databaseUrl: db.url, modelMs: MODEL_MS, workerHeartbeatMs: HEARTBEAT_MS });
	// The test reclaims the silent job itself, when it has seen the silence: the
	// every-minute schedule could take it first and skip the state under test.
	await db.sql`update cron.job set active = false where jobname = 'supabase-jobs-reclaim'`;
	chromium = await launchChromium();
	await mkdir(DOCS_SCREENSHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
	// A test that failed mid-way must not leave the worker stopped.
	stack?.worker?.current.process.kill('SIGCONT');
	await chromium?.close();
	await stack?.stop();
});

interface AxNode {
	role: string;
	name: string;
	valuetext: string | null;
	live: string | null;
	focused: boolean;
}

/** Chromium's accessibility tree of the page, flattened: what a screen reader is given. */
async function axTree(page: Page): Promise<AxNode[]> {
	const cdp = await page.context().newCDPSession(page);
	try {
		const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
			nodes: {
				ignored: boolean;
				role?: { value: string };
				name?: { value: string };
				properties?: { name: string; value: { value: unknown } }[];
			}[];
		};
		return nodes
			.filter((n) => !n.ignored)
			.map((n) => {
				const prop = (name: string) => n.properties?.find((p) => p.name === name)?.value.value;
				const valuetext = prop('valuetext');
				return {
					role: n.role?.value ?? '',
					name: n.name?.value ?? '',
					valuetext: typeof valuetext === 'string' && valuetext !== '' ? valuetext : null,
					live: (prop('live') as string | undefined) ?? null,
					focused: prop('focused') === true,
				};
			});
	} finally {
		await cdp.detach();
	}
}

/**
 * The one progressbar in the tree. This chromium's CDP reports a range
 * widget's `valuetext` property empty (its `value` is aria-valuenow), so the
 * spoken value is read from the element the tree names: its aria-valuetext.
 */
async function progressbar(page: Page): Promise<AxNode> {
	const bars = (await axTree(page)).filter((n) => n.role === 'progressbar');
	expect(bars).toHaveLength(1);
	const bar = bars[0]!;
	const element = page.getByRole('progressbar', { name: bar.name, exact: true });
	return { ...bar, valuetext: bar.valuetext ?? (await element.getAttribute('aria-valuetext')) };
}

/**
 * Records, from the document's first byte, every change of what a polite live
 * region says (what a screen reader announces), across client-side navigations.
 */
async function recordAnnouncements(context: BrowserContext): Promise<void> {
	await context.addInitScript(() => {
		const w = window as unknown as { __announced: string[] };
		w.__announced = [];
		const seen = new WeakMap<Element, string>();
		new MutationObserver((records) => {
			for (const record of records) {
				const node = record.target instanceof Element ? record.target : record.target.parentElement;
				const region = node?.closest('[aria-live=polite]');
				if (!region) continue;
				const text = region.textContent ?? '';
				if (seen.get(region) !== text && text !== '') w.__announced.push(text);
				seen.set(region, text);
			}
		}).observe(document, { childList: true, subtree: true, characterData: true });
	});
}

async function announced(page: Page): Promise<string[]> {
	return await page.evaluate(() => (window as unknown as { __announced: string[] }).__announced);
}

async function openDashboard(context: BrowserContext): Promise<Page> {
	const page = await context.newPage();
	await page.goto(stack.url);
	await page.locator('[data-testid=upload-form] button[type=submit]:enabled').waitFor();
	return page;
}

async function upload(page: Page, name: string, mimeType: string, content: string | Buffer): Promise<string> {
	await page.setInputFiles('input[type=file]', { name, mimeType, buffer: Buffer.from(content) });
	await page.click('[data-testid=upload-form] button[type=submit]');
	await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
	return page.url().split('/').at(-1)!;
}

/**
 * Uploads while the worker is held (SIGSTOP) until the job page is up, so a
 * quick job ends while someone is watching: a page opened on an ended job has
 * nothing to announce.
 */
async function uploadWatched(page: Page, name: string, mimeType: string, content: string | Buffer): Promise<string> {
	const worker = stack.worker!.current.process;
	worker.kill('SIGSTOP');
	try {
		const id = await upload(page, name, mimeType, content);
		await page.locator('[data-testid=job][data-status=queued]').waitFor();
		return id;
	} finally {
		worker.kill('SIGCONT');
	}
}

function prose(chunks: number): string {
	const paragraph = (i: number) =>
		`Section ${i}. The tender covers the delivery of building materials to the site. ` +
		'Prices must include transport, insurance and the removal of packaging. '.repeat(6) +
		'Late delivery is charged per day.';
	return Array.from({ length: chunks * 2 }, (_, i) => paragraph(i)).join('\n\n');
}

async function shot(page: Page, name: string, locale: string): Promise<void> {
	const file = `${name}${locale === 'en' ? '' : `-${locale}`}.png`;
	await page.locator('main').screenshot({ path: join(DOCS_SCREENSHOTS, file) });
}

const WORDS = {
	en: {
		lang: 'en',
		analysing: 'Analysing',
		left: /^(about \d+ min left|less than a minute left)$/,
		silent: 'Not responding — it will be retried',
		silentBadge: 'Not responding',
		noMatch: 'No jobs match this filter.',
		fileLabel: 'Document',
		hint: 'Text, Markdown or PDF, up to 8 MiB.',
		language: 'English',
		retrying: 'Retrying (attempt 2 of 3)',
		done: 'Done',
		failed: 'Failed',
		cancelled: 'Cancelled',
		cancel: 'Cancel',
		kind: 'Document analysis',
		uploadHeading: 'Analyse a document',
		jobNotFound: 'This job does not exist, or it belongs to someone else.',
		failure: 'I can read text, Markdown and PDF files only.',
	},
	'pt-BR': {
		lang: 'pt-BR',
		analysing: 'Analisando',
		left: /^(cerca de \d+ min restantes|menos de um minuto restante)$/,
		silent: 'Sem resposta — será tentado de novo',
		silentBadge: 'Sem resposta',
		noMatch: 'Nenhum trabalho corresponde a este filtro.',
		fileLabel: 'Documento',
		hint: 'Texto, Markdown ou PDF, até 8 MiB.',
		language: 'inglês',
		retrying: 'Tentando de novo (tentativa 2 de 3)',
		done: 'Concluído',
		failed: 'Falhou',
		cancelled: 'Cancelado',
		cancel: 'Cancelar',
		kind: 'Análise de documento',
		uploadHeading: 'Analisar um documento',
		jobNotFound: 'Este trabalho não existe, ou pertence a outra pessoa.',
		failure: 'Só consigo ler arquivos de texto, Markdown e PDF.',
	},
} as const;

describe.each(['en', 'pt-BR'] as const)('the screen, read from the accessibility tree (%s)', (locale) => {
	const w = WORDS[locale];
	let context: BrowserContext;

	beforeAll(async () => {
		context = await chromium.browser.newContext({ locale, viewport: { width: 900, height: 700 } });
		await recordAnnouncements(context);
	});
	afterAll(async () => {
		await context?.close();
	});

	it('a running job says how much longer; its silent worker is said to be not responding; the reclaimed job says it is retrying', async () => {
		const page = await openDashboard(context);
		expect(await page.evaluate(() => document.documentElement.lang)).toBe(w.lang);
		const dashboardTitle = await page.title();
		const name = `tender-${locale}.txt`;
		// Long enough (~120 model calls) to be still running through the silence below.
		const id = await upload(page, name, 'text/plain', prose(60));

		// How much longer: the worker's estimate, in words, next to a bar that says its number first.
		await expect.poll(async () => (await page.locator('.sj-progress__eta').textContent()) ?? '').toMatch(w.left);
		// The estimate can come with the first stage's ticks: the bar names the analysing stage once the worker reaches it.
		await expect
			.poll(async () => (await progressbar(page)).valuetext, { timeout: 60_000 })
			.toMatch(new RegExp(`^\\d+%, ${w.analysing}$`));
		const bar = await progressbar(page);
		expect(bar.name).toBe(name);
		expect(await page.title(), 'each page has its own title').not.toBe(dashboardTitle);
		expect(await page.title()).toContain(name);
		expect(await page.locator('[data-testid=job]').textContent()).toContain(w.kind);
		const [row] = await db.sql<{ expected_end_at: Date | null; updated_at: Date }[]>`
			select expected_end_at, updated_at from public.jobs where id = ${id}`;
		expect(row!.expected_end_at, 'the estimate is the worker’s, on the row').not.toBeNull();
		await shot(page, 'job-running-eta', locale);
		await shot(page, 'job-running', locale);

		// The dashboard's strip names the stage as people do, never by its code name.
		const dashboard = await context.newPage();
		await dashboard.goto(stack.url);
		const strip = dashboard.locator(`[data-testid=in-flight] li[data-job-id="${id}"]`);
		await expect.poll(() => strip.locator('.sj-progress__stage').textContent()).toBe(w.analysing);
		expect(await strip.textContent()).not.toContain('analyse');
		await shot(dashboard, 'dashboard-running', locale);
		await dashboard.close();

		// The worker stops answering (alive, but frozen: no heartbeat, no exit for the supervisor to see).
		const worker = stack.worker!.current.process;
		worker.kill('SIGSTOP');
		try {
			const [held] = await db.sql<{ status: string }[]>`select status from public.jobs where id = ${id}`;
			expect(held!.status, 'the worker was stopped mid-run').toBe('running');
			await page
				.getByRole('status')
				.filter({ hasText: w.silent })
				.waitFor({ timeout: HEARTBEAT_MS * 20 });
			// A status region (its content is what is read, not a name).
			expect((await axTree(page)).some((n) => n.role === 'status')).toBe(true);
			expect(await page.getByRole('status').textContent()).toBe(w.silent);
			expect(await page.locator('.sj-progress__eta').count(), 'no estimate from a worker nobody hears').toBe(0);
			// Said in the badge and the bar too (colour and spoken value), not blue "Running", "20%, Analysing".
			expect((await page.locator('[data-testid=job-status] .sj-badge').textContent())?.trim()).toBe(w.silentBadge);
			expect(await page.locator('.sj-progress').getAttribute('data-status')).toBe('silent');
			const silentBar = await progressbar(page);
			expect(silentBar.valuetext).toMatch(new RegExp(`^\\d+%, ${w.silentBadge}$`));
			const reached = await page.getByRole('progressbar').getAttribute('aria-valuenow');
			expect(await page.title()).toContain(w.silentBadge);
			await shot(page, 'job-silent', locale);

			// What the reclaim schedule does once three beats are missed: the job waits again, attempt 2 of 3.
			await expect
				.poll(async () => (await db.sql`select id from public.job_reclaim_silent() where id = ${id}`).length, {
					timeout: HEARTBEAT_MS * 10,
				})
				.toBe(1);
			await expect.poll(() => page.locator('.sj-progress__stage').textContent()).toBe(w.retrying);
			expect((await progressbar(page)).valuetext).toBe(w.retrying);
			// The attempt that ended keeps its progress on the bar, greyed, while the retry waits.
			expect(await page.locator('.sj-progress--held').count()).toBe(1);
			expect(await page.getByRole('progressbar').getAttribute('aria-valuenow')).toBe(reached);
			expect(await page.locator('.sj-progress__fill').evaluate((e) => (e as HTMLElement).style.width)).not.toBe('0%');
			await shot(page, 'job-retrying', locale);
		} finally {
			worker.kill('SIGCONT');
		}
		// Its second attempt would keep the worker busy for the next tests: stopped here.
		await db.sql`select public.job_cancel(${id}::uuid)`;
		await page.close();
	});

	it('a finished job is announced as done, reads as done (100%, no stage, no Cancel), and links to its result', async () => {
		const page = await openDashboard(context);
		await uploadWatched(page, `short-${locale}.md`, 'text/markdown', `# Short\n\n${prose(2)}`);
		await page.locator('[data-testid=job][data-status=done]').waitFor({ timeout: 60_000 });
		await page.locator('[data-testid=result-link]').waitFor();
		expect(await announced(page)).toContain(w.done);
		const tree = await axTree(page);
		expect((await progressbar(page)).valuetext).toBe(w.done);
		expect(
			tree.some((n) => n.live === 'polite'),
			'a polite live region',
		).toBe(true);
		expect(tree.some((n) => n.role === 'button' && n.name === w.cancel)).toBe(false);
		expect(tree.some((n) => n.role === 'link' && n.name.length > 0 && n.name !== '')).toBe(true);
		// The title, and SvelteKit's page announcer that read it on arrival, follow the status.
		expect(await page.title()).toContain(` · ${w.done} · `);
		await expect.poll(() => page.locator('#svelte-announcer').textContent()).toContain(` · ${w.done} · `);
		await shot(page, 'job-done', locale);

		// The result names the language, in the reader's language: not a code.
		await page.locator('[data-testid=result-link]').click();
		await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
		await expect.poll(() => page.locator('[data-testid=language]').textContent()).toBe(w.language);
		await shot(page, 'result', locale);
		await page.close();
	});

	it('cancelled: announced, and focus lands on the status instead of the body', async () => {
		const page = await openDashboard(context);
		// Cancelled while it waits (the worker held): what the screen says does not depend on
		// how busy the worker is; test/e2e/demo.test.ts cancels one mid-run.
		const worker = stack.worker!.current.process;
		worker.kill('SIGSTOP');
		try {
			const id = await upload(page, `long-${locale}.txt`, 'text/plain', prose(4));
			await page.locator('[data-testid=job][data-status=queued]').waitFor();
			await page.getByRole('button', { name: w.cancel }).click();
			await expect
				.poll(async () => {
					const [row] = await db.sql<{ status: string }[]>`select status from public.jobs where id = ${id}`;
					return `row ${row!.status}, page ${await page.locator('[data-testid=job]').getAttribute('data-status')}`;
				})
				.toBe('row cancelled, page cancelled');
		} finally {
			worker.kill('SIGCONT');
		}
		await expect.poll(() => announced(page)).toContain(w.cancelled);
		await expect
			.poll(async () => (await axTree(page)).find((n) => n.focused)?.name ?? '', {
				message: 'the focused node is the status',
			})
			.toContain(w.cancelled);
		expect((await progressbar(page)).valuetext).toBe(w.cancelled);
		expect((await axTree(page)).some((n) => n.role === 'button' && n.name === w.cancel)).toBe(false);
		// Not drawn full like a finished job: it stops where the work stopped (here, before it began).
		expect(await page.locator('.sj-progress__fill').evaluate((e) => (e as HTMLElement).style.width)).toBe('0%');
		await shot(page, 'job-cancelled', locale);
		await page.close();
	});

	it('failed: announced, with the sentence as an alert; a job that is not yours is a 404 page in your language', async () => {
		const page = await openDashboard(context);
		const id = await uploadWatched(page, 'photo.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
		await page.locator('[data-testid=job][data-status=failed]').waitFor({ timeout: 30_000 });
		await expect.poll(() => announced(page)).toContain(w.failed);
		expect((await axTree(page)).some((n) => n.role === 'alert')).toBe(true);
		expect(await page.getByRole('alert').textContent()).toBe(w.failure);
		expect(await page.locator('.sj-progress__fill').evaluate((e) => (e as HTMLElement).style.width)).toBe('0%');
		// One date format throughout: the job page and the dashboard write its creation alike.
		const [{ created_at: createdAt }] = await db.sql<{ created_at: Date }[]>`
			select created_at from public.jobs where id = ${id}`;
		const created = await page.evaluate(
			([at, tag]) => new Intl.DateTimeFormat(tag, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(at)),
			[createdAt.toISOString(), w.lang] as const,
		);
		expect(await page.locator('[data-testid=job]').textContent()).toContain(created);

		const response = await page.goto(`${stack.url}/jobs/00000000-0000-4000-8000-000000000000`);
		expect(response?.status()).toBe(404);
		expect(await page.locator('[data-testid=error] p').textContent()).toBe(w.jobNotFound);
		expect(await page.evaluate(() => document.documentElement.lang)).toBe(w.lang);

		await page.goto(stack.url);
		await page.locator('[data-testid=upload-form] button[type=submit]:enabled').waitFor();
		const row = page.locator(`[data-testid=recent] li[data-job-id="${id}"]`);
		await row.waitFor();
		expect(await row.textContent()).toContain(created);
		expect(await row.textContent(), 'a failed row shows no "0%"').not.toMatch(/\d+\s*%/);
		// The file field has a label of its own, and the limit is said in the unit it is counted in.
		expect(await page.getByLabel(w.fileLabel, { exact: true }).getAttribute('type')).toBe('file');
		expect(await page.locator('[data-testid=upload-form]').textContent()).toContain(w.hint);
		// A filter that matches nothing says so, not "no jobs yet" to a visitor who has jobs.
		await page.selectOption('select[name=status]', 'running');
		await expect.poll(() => page.locator('[data-testid=no-match]').textContent()).toContain(w.noMatch);
		expect(await page.locator('[data-testid=no-jobs]').count()).toBe(0);
		await page.locator('[data-testid=no-match] button').click();
		await row.waitFor();
		await shot(page, 'dashboard', locale);
		const options = await page.locator('select[name=kind] option').allTextContents();
		expect(options, 'kinds by their label, never their internal name').toContain(w.kind);
		expect(options.join(' ')).not.toContain('document.analyse');
		expect(await page.locator('h1').first().textContent()).toBe(w.uploadHeading);
		await page.close();
	});
});
