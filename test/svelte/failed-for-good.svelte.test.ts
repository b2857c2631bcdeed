/**
 * A job that failed for good (an error code its kind declares permanent: the
 * same input fails the same way) is not offered Try again: its page says
 * trying again would not help, in the user's language, and WatchedJob refuses
 * a try again without asking the database. Other failures are offered it.
 */
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import JobProgress from '../../src/lib/svelte/components/JobProgress.svelte';
import TryAgainButton from '../../src/lib/svelte/components/TryAgainButton.svelte';
import { NotRetryableError } from '../../src/lib/errors.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JOB_MESSAGES } from '../../src/lib/svelte/messages.ts';
import type { JobSnapshot } from '../../src/lib/svelte/types.ts';
import { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import { FakeJobSource, snap } from './fixtures/sources.ts';

const upload = defineJobKind({
	name: 'upload.read',
	params: z.object({ filename: z.string() }),
	permanentErrors: ['empty_file', 'not_text'],
});

/** A source that counts try again calls (and answers none). */
class CountingSource extends FakeJobSource {
	readonly tried: string[] = [];
	tryAgain(id: string): Promise<JobSnapshot> {
		this.tried.push(id);
		return new Promise(() => {});
	}
}

let target: HTMLElement;
const apps: Record<string, unknown>[] = [];
let job: WatchedJob | null = null;

afterEach(() => {
	for (const app of apps.splice(0)) unmount(app);
	job?.stop();
	job = null;
	target?.remove();
});

/** A job of `upload` that failed with `errorCode`, watched, with its bar and Try again mounted. */
async function failedWith(errorCode: string, locale: string) {
	const source = new CountingSource();
	target = document.createElement('div');
	document.body.appendChild(target);
	job = new WatchedJob(source, 'job-1', snap({ status: 'running' }), { kind: upload });
	void job.start();
	apps.push(mount(JobProgress, { target, props: { job, locale } }));
	apps.push(mount(TryAgainButton, { target, props: { job, locale } }));
	await source.stream.push(snap({ status: 'failed', error: 'The file is empty.', errorCode, finishedAt: new Date() }));
	flushSync();
	return { source, job };
}

describe.each(['en', 'pt-BR'] as const)('a failure trying again cannot help (%s)', (locale) => {
	it('is not offered Try again; the page says trying again would fail the same way', async () => {
		const { job } = await failedWith('empty_file', locale);
		expect(job.failedForGood).toBe(true);
		expect(target.querySelector('.sj-try-again')).toBeNull();
		expect(target.querySelector('[data-testid=failed-for-good]')!.textContent).toBe(JOB_MESSAGES[locale].failedForGood);
	});

	it('another failure of the same kind is offered Try again, and says nothing of the kind', async () => {
		const { job } = await failedWith('timed_out', locale);
		expect(job.failedForGood).toBe(false);
		expect(target.querySelector('.sj-try-again')!.textContent!.trim()).toBe(JOB_MESSAGES[locale].tryAgain);
		expect(target.querySelector('[data-testid=failed-for-good]')).toBeNull();
	});
});

describe('a job whose row says it failed for good', () => {
	it('is not offered Try again even on a screen not given its kind, and WatchedJob refuses to try it again', async () => {
		const source = new CountingSource();
		target = document.createElement('div');
		document.body.appendChild(target);
		const failed = snap({ status: 'failed', error: 'Empty.', errorCode: 'empty_file', finishedAt: new Date() });
		job = new WatchedJob(source, 'job-1', { ...failed, failedForGood: true });
		apps.push(mount(TryAgainButton, { target, props: { job, locale: 'en' } }));
		flushSync();
		expect(job.failedForGood).toBe(true);
		expect(target.querySelector('.sj-try-again')).toBeNull();
		await expect(job.tryAgain()).rejects.toThrow(NotRetryableError);
		expect(source.tried).toEqual([]);
	});

	it('a failed row that does not say so is offered Try again when the screen is not given its kind', () => {
		const source = new CountingSource();
		target = document.createElement('div');
		document.body.appendChild(target);
		const failed = snap({ status: 'failed', error: 'Empty.', errorCode: 'empty_file', finishedAt: new Date() });
		job = new WatchedJob(source, 'job-1', { ...failed, failedForGood: false });
		apps.push(mount(TryAgainButton, { target, props: { job, locale: 'en' } }));
		flushSync();
		expect(job.failedForGood).toBe(false);
		expect(target.querySelector('.sj-try-again')).not.toBeNull();
	});
});

describe('WatchedJob.tryAgain of a job that failed for good', () => {
	it('refuses with NotRetryableError, naming the error, and never asks the source', async () => {
		const { source, job } = await failedWith('not_text', 'en');
		await expect(job.tryAgain()).rejects.toThrow(NotRetryableError);
		await expect(job.tryAgain()).rejects.toThrow(/failed for good \(not_text\)/);
		expect(source.tried).toEqual([]);
	});

	it('defineJobKind refuses a permanent error that is not an error code, naming it', () => {
		expect(() => defineJobKind({ name: 'x', params: z.object({}), permanentErrors: ['Empty file'] })).toThrow(
			/permanentErrors of x .*"Empty file"/,
		);
	});
});
