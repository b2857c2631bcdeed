/**
 * Every job page opens by its address (a reload, a new tab, a pasted link),
 * whatever state its job is in, with the demo's server on this process's
 * Node, on the floor of `engines` and on Node 24: the server renders the job's state from its
 * `load` (HTTP 200, readable without JavaScript, no Realtime on the server),
 * the page hydrates in chromium and watches live, and a reload does it again.
 *
 * The jobs are put in their states directly (enqueue, claim, tick, close in
 * one transaction, as the visitor's own jobs), not by waiting on a real
 * analysis: the worker's kick arrives after the commit and finds nothing to claim.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { JobStatusValue } from '../../src/lib/state.ts';
import { documentAnalyse } from '../../src/demo/jobs.ts';
import { SESSION_COOKIE, decodeSession } from '../../src/demo/app/session.server.ts';
import { startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import { useTestDatabase, type Sql, type TestDatabase } from '../helpers/db.ts';
import { SERVER_NODES, nodeVersion } from '../helpers/nodes.ts';
import { launchChromium } from './browser.ts';

/** The states a person can find a job in, and what its page says (en). */
const STATES = {
	queued: 'Queued',
	running: 'Running',
	done: 'Done',
	cancelled: 'Cancelled',
	failed: 'Failed',
} as const satisfies Partial<Record<JobStatusValue, string>>;
type State = keyof typeof STATES;

const FAILURE = 'The file could not be read: it ends in the middle of a page.';
/** Declared at claim: long enough that the running job never reads "Not responding" during the test. */
const HEARTBEAT_MS = 10 * 60_000;

let db: TestDatabase;
let stack: DemoStack;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
/** The demo's app under each Node: the stack's own (this process's Node), then the floor's and Node 24's. */
const apps = new Map<string, { url: string; lines: string[] }>();

beforeAll(async () => {
	db = await useTestDatabase();
	stack = await startLocalDemo({ databaseUrl: db.url, modelMs: 100 });
	apps.set(SERVER_NODES[0]!.name, { url: stack.url, lines: stack.app!.lines });
	for (const node of SERVER_NODES.slice(1)) {
		const served = await stack.serveAppWith(node.path);
		apps.set(node.name, { url: served.url, lines: served.app.lines });
	}
	chromium = await launchChromium();
}, 180_000);

afterAll(async () => {
	await chromium?.close();
	await stack?.stop();
});

/** A new visitor of `base`: their first page signs them in; returns their id and the cookie their requests carry. */
async function newVisitor(context: BrowserContext, base: string): Promise<{ userId: string; cookie: string }> {
	const page = await context.newPage();
	await page.goto(base);
	await page.locator('.page[data-hydrated=true]').waitFor();
	await page.close();
	const cookies = await context.cookies(base);
	const session = decodeSession(cookies.find((c) => c.name === SESSION_COOKIE)?.value);
	expect(session).not.toBeNull();
	return { userId: session!.userId, cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') };
}

/** One of the visitor's jobs, in `state`, made in one transaction (the worker's kick comes after it). */
async function jobIn(state: State, ownerId: string): Promise<string> {
	return await db.sql.begin(async (tx) => {
		// Without claims the adapter only calls `unsafe`, which a transaction has (postgres.js types it apart from a pool).
		const store = new JobStore(postgresAdapter(tx as unknown as Sql));
		const job = await store.enqueue(documentAnalyse.name, {
			params: { filename: `${state}.txt`, mime: 'text/plain' },
			ownerId,
			// Queued for an hour from now: no worker may claim it meanwhile.
			...(state === 'queued' ? { runAt: new Date(Date.now() + 3600_000) } : {}),
		});
		if (state === 'queued') return job.id;
		const claimed = await store.claim(job.id, { heartbeatMs: HEARTBEAT_MS });
		expect(claimed?.status).toBe('running');
		await store.tick(job.id, { progress: 40, stage: 'analyse', attempt: claimed!.attempts });
		if (state === 'done') await store.succeed(job.id, { attempt: claimed!.attempts });
		if (state === 'failed') await store.fail(job.id, FAILURE, { attempt: claimed!.attempts });
		if (state === 'cancelled') await store.cancel(job.id);
		return job.id;
	});
}

/** The page as the server sends it, read without JavaScript. */
async function serverRendered(url: string, cookie: string): Promise<{ status: number; html: string }> {
	const response = await fetch(url, { headers: { cookie, 'accept-language': 'en' } });
	return { status: response.status, html: await response.text() };
}

/** What the server-rendered page must say about a job in `state`. */
function expectStateInHtml(html: string, id: string, state: State) {
	expect(html).toContain(`data-job-id="${id}" data-status="${state}"`);
	expect(html).toMatch(new RegExp(`class="sj-badge[^"]*"[^>]*data-status="${state}"[^>]*>\\s*${STATES[state]}\\s*<`));
	expect(html).toMatch(new RegExp(`<h1[^>]*>${state}\\.txt</h1>`));
	if (state === 'running') expect(html).toMatch(/role="progressbar"[^>]*aria-valuenow="40"/);
	if (state === 'failed') expect(html).toContain(FAILURE);
	if (state === 'queued' || state === 'running') expect(html).toMatch(/<button[^>]*class="sj-cancel/);
	else expect(html).not.toContain('sj-cancel');
}

/** The hydrated page in chromium says the same, and threw nothing on the way. */
async function expectStateInBrowser(page: Page, state: State) {
	await page.locator('.page[data-hydrated=true]').waitFor();
	await page.locator(`[data-testid=job][data-status=${state}]`).waitFor();
	expect((await page.locator('[data-testid=job-status]').textContent())?.trim()).toBe(STATES[state]);
	if (state === 'failed') await expect.poll(() => page.getByText(FAILURE).count()).toBeGreaterThan(0);
	expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(
		state === 'queued' || state === 'running' ? 1 : 0,
	);
}

for (const node of SERVER_NODES) {
	describe(`a job page opened by its address, the app on ${node.name}`, () => {
		let context: BrowserContext;
		let visitor: { userId: string; cookie: string };
		let base: string;
		const errors: string[] = [];

		beforeAll(async () => {
			base = apps.get(node.name)!.url;
			context = await chromium.browser.newContext({ locale: 'en-US', viewport: { width: 1000, height: 800 } });
			context.on('weberror', (e) => errors.push(String(e.error())));
			visitor = await newVisitor(context, base);
		});

		afterAll(async () => {
			await context?.close();
		});

		it(`the server is ${node.name}`, () => {
			expect(nodeVersion(node.path)).toMatch(new RegExp(`^v${node.major}\\.`));
		});

		for (const state of Object.keys(STATES) as State[]) {
			it(`${state}: the server renders it (HTTP 200, "${STATES[state]}" without JavaScript), the page hydrates, and a reload does it again`, async () => {
				const id = await jobIn(state, visitor.userId);
				const url = `${base}/jobs/${id}`;

				const first = await serverRendered(url, visitor.cookie);
				expect(first.status).toBe(200);
				expectStateInHtml(first.html, id, state);

				const page = await context.newPage();
				try {
					const response = await page.goto(url);
					expect(response?.status()).toBe(200);
					await expectStateInBrowser(page, state);

					if (state === 'running') {
						// Hydrated and watching: the worker's next tick moves the bar, with no reload.
						await new JobStore(postgresAdapter(db.sql)).tick(id, { progress: 60, stage: 'analyse', attempt: 1 });
						await page.locator('[data-testid=job] [role=progressbar][aria-valuenow="60"]').waitFor();
					}

					const reloaded = await page.reload();
					expect(reloaded?.status()).toBe(200);
					expect(await reloaded!.text()).toContain(`data-job-id="${id}" data-status="${state}"`);
					await expectStateInBrowser(page, state);
					if (state === 'running') {
						await page.locator('[data-testid=job] [role=progressbar][aria-valuenow="60"]').waitFor();
						await new JobStore(postgresAdapter(db.sql)).tick(id, { progress: 70, stage: 'analyse', attempt: 1 });
						await page.locator('[data-testid=job] [role=progressbar][aria-valuenow="70"]').waitFor();
					}
				} finally {
					await page.close();
				}
				expect(errors).toEqual([]);
				// Nothing went wrong on the server either (the 500 of Node 20 logged "... WebSocket ...").
				expect(apps.get(node.name)!.lines.filter((l) => /WebSocket|Error/.test(l))).toEqual([]);
			});
		}
	});
}
