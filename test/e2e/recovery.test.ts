/**
 * Recovery in seconds, in a real browser over the whole local stack: the
 * Deno worker is SIGKILLed in the middle of an analysis while its page is
 * open, with the worker's default beat (5 s) and the reclaimer every 5
 * seconds (the local dispatcher plays pg_cron 1.6). The page's own
 * MutationObserver stamps each change of the job's status and of "Not
 * responding"; the test waits on those stamps (no sleeps) and prints
 * kill → "Not responding" → running again → done, in seconds.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { RECOVERY_TARGETS, recoveryLine } from '../chaos/figures.ts';
import { launchChromium } from './browser.ts';

/** The model-call stand-in per chunk: ~60 chunks make an analysis of about 20 s. */
const MODEL_MS = 300;
/** The worker's default beat (createWorker's heartbeatMs), which the demo worker declares. */
const BEAT_MS = 5000;

let db: TestDatabase;
let stack: DemoStack;
let chromium: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
	db = await useTestDatabase();
	stack = await startLocalDemo({ databaseUrl: db.url, modelMs: MODEL_MS });
	chromium = await launchChromium();
}, 180_000);

afterAll(async () => {
	await chromium?.close();
	await stack?.stop();
});

function prose(chunks: number): string {
	const paragraph = (i: number) =>
		`Section ${i}. The tender covers the delivery of building materials to the site. ` +
		'Prices must include transport, insurance and the removal of packaging. '.repeat(6) +
		'Late delivery is charged per day. The supplier keeps a register of every delivery.';
	return Array.from({ length: chunks * 2 }, (_, i) => paragraph(i)).join('\n\n');
}

interface Change {
	at: number;
	status: string;
	silent: boolean;
	valuenow: number;
}

/** Stamps (Date.now(), the clock the test shares) every change of the job's status, of "Not responding" and of the bar. */
async function stampChanges(page: Page): Promise<void> {
	await page.waitForSelector('[data-testid=job] [role=progressbar]');
	await page.evaluate(() => {
		const w = window as unknown as { __changes: Change[] };
		w.__changes = [];
		const section = document.querySelector('[data-testid=job]')!;
		const read = () => {
			const change = {
				at: Date.now(),
				status: section.getAttribute('data-status') ?? '',
				silent: (section.textContent ?? '').includes('Not responding'),
				valuenow: Number(section.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow')),
			};
			const last = w.__changes.at(-1);
			if (!last || last.status !== change.status || last.silent !== change.silent || last.valuenow !== change.valuenow)
				w.__changes.push(change);
		};
		read();
		new MutationObserver(read).observe(section, {
			attributes: true,
			subtree: true,
			childList: true,
			characterData: true,
		});
	});
}

/** What a change shows: the job well under way, silent, running (and heard from), done. */
type Shown = 'at20' | 'silent' | 'running' | 'done';

/** Resolves with the stamp of the first change after `after` that shows `shown`, as the page's observer recorded it. */
async function changeAfter(page: Page, after: number, shown: Shown, timeoutMs: number): Promise<Change> {
	const handle = await page.waitForFunction(
		({ after, shown }) => {
			const changes = (window as unknown as { __changes: Change[] }).__changes;
			const shows = (c: Change) =>
				shown === 'at20'
					? c.status === 'running' && c.valuenow >= 20
					: shown === 'silent'
						? c.status === 'running' && c.silent
						: shown === 'running'
							? c.status === 'running' && !c.silent
							: c.status === 'done';
			return changes.find((c) => c.at >= after && shows(c)) ?? false;
		},
		{ after, shown },
		{ timeout: timeoutMs },
	);
	return (await handle.jsonValue()) as Change;
}

describe('recovery in seconds, in a browser', () => {
	it('the worker killed mid-analysis: the page says "Not responding" within 15 s, shows the job running again within 25 s, and ends done', async () => {
		const [{ schedule }] = await db.sql<{ schedule: string }[]>`
			select schedule from cron.job where jobname = 'supabase-jobs-reclaim'`;
		expect(schedule).toBe('5 seconds');

		const context = await chromium.browser.newContext({ locale: 'en-US', viewport: { width: 1000, height: 800 } });
		try {
			const page = await context.newPage();
			await page.goto(stack.url);
			await page.locator('[data-testid=upload-form] button[type=submit]:enabled').waitFor();
			await page.setInputFiles('input[type=file]', {
				name: 'tender.txt',
				mimeType: 'text/plain',
				buffer: Buffer.from(prose(30)),
			});
			await page.click('[data-testid=upload-form] button[type=submit]');
			await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
			const id = page.url().split('/').at(-1)!;
			await stampChanges(page);

			// About a fifth of the way: the worker is analysing.
			const started = await changeAfter(page, 0, 'at20', 60_000);
			const [held] = await db.sql<{ status: string; heartbeat_ms: number }[]>`
				select status, heartbeat_ms from public.jobs where id = ${id}`;
			expect(held).toMatchObject({ status: 'running', heartbeat_ms: BEAT_MS });

			const killedAt = Date.now();
			stack.worker!.current.process.kill('SIGKILL');
			const silent = await changeAfter(page, killedAt, 'silent', 60_000);
			// The next attempt: running and heard from again (the killed worker cannot come back).
			const again = await changeAfter(page, silent.at, 'running', 60_000);
			const done = await changeAfter(page, again.at, 'done', 120_000);

			const line = recoveryLine({ killedAt, silentAt: silent.at, runningAgainAt: again.at, doneAt: done.at });
			console.log(
				`[recovery] browser (Deno worker SIGKILLed at ${started.valuenow}%, beat ${BEAT_MS / 1000} s): ${line}`,
			);
			const [row] = await db.sql<{ status: string; attempts: number }[]>`
				select status, attempts from public.jobs where id = ${id}`;
			expect(row).toMatchObject({ status: 'done', attempts: 2 });
			expect(silent.at - killedAt).toBeGreaterThanOrEqual(BEAT_MS * 1.5);
			expect(silent.at - killedAt).toBeLessThanOrEqual(RECOVERY_TARGETS.silentMs);
			expect(again.at - killedAt).toBeLessThanOrEqual(RECOVERY_TARGETS.runningAgainMs);
			// The analysis stays under the hosted CPU limit the gateway holds it to (2 s per request).
			console.log(`[recovery] most CPU one request of the worker used: ${stack.worker!.peakCpuMs} ms`);
			expect(stack.worker!.kills.filter((k) => k.limit === 'cpu')).toEqual([]);
		} finally {
			await context.close();
		}
	});
});
