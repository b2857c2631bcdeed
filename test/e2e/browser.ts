/**
 * Debian's chromium driven by playwright-core (no browser download): headless,
 * with the flags a container and a 2-core CI runner need, and a fresh profile
 * (--user-data-dir) each launch.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = resolve('test-results/e2e');

export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		headless: true,
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-dev-shm-usage',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
			'--no-first-run',
			// No --user-data-dir here: Playwright refuses it in launch() and passes its
			// own, a fresh temporary profile per launch, removed on close.
		],
	});
	await mkdir(SCREENSHOTS, { recursive: true });
	return {
		browser,
		async close() {
			await browser.close();
		},
	};
}

/** Saves a full-page screenshot as test-results/e2e/<name>.png (a CI artifact) and returns its path. */
export async function snap(page: Page, name: string): Promise<string> {
	const path = join(SCREENSHOTS, `${name}.png`);
	await page.screenshot({ path, fullPage: true });
	return path;
}

/** One frame of the job page's bar, as recorded in the page by {@link recordFrames}. */
export interface Frame {
	t: number;
	value: number;
	text: string;
	status: string;
}

/**
 * Records every change of the job page's bar (aria-valuenow, aria-valuetext)
 * and status, with a MutationObserver in the page: nothing is sampled, so no
 * frame between two polls of the test is missed.
 */
export async function recordFrames(page: Page): Promise<void> {
	await page.waitForSelector('[data-testid=job] [role=progressbar]');
	await page.evaluate(() => {
		const w = window as unknown as { __frames: Frame[] };
		w.__frames = [];
		const section = document.querySelector('[data-testid=job]')!;
		const read = () => {
			const bar = section.querySelector('[role=progressbar]')!;
			const frame = {
				t: performance.now(),
				value: Number(bar.getAttribute('aria-valuenow')),
				text: bar.getAttribute('aria-valuetext') ?? '',
				status: section.getAttribute('data-status') ?? '',
			};
			const last = w.__frames.at(-1);
			if (!last || last.value !== frame.value || last.text !== frame.text || last.status !== frame.status)
				w.__frames.push(frame);
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

export async function frames(page: Page): Promise<Frame[]> {
	return await page.evaluate(() => (window as unknown as { __frames: Frame[] }).__frames);
}
