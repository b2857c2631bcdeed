/**
 * A job's streamed output and metadata in the Svelte layer: WatchedJob.streams
 * and WatchedJob.metadata, and <JobStream>'s live region (it speaks whole
 * sentences and the end, never each token). The source is driven by hand:
 * each push resolves once the consumer applied it.
 */
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import type { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import type { JobSnapshot, JobStreamPiece, JobWatchSource } from '../../src/lib/svelte/types.ts';
import { deferred, snap, type Deferred } from './fixtures/sources.ts';
import JobStreamView from './fixtures/JobStreamView.svelte';

/** An async iterable the test feeds; push() resolves once the consumer asked for the value after it. */
class Feed<T> implements AsyncIterableIterator<T> {
	#queue: { value: T; taken: Deferred<void> }[] = [];
	#waiting: Deferred<IteratorResult<T>> | null = null;
	#last: Deferred<void> | null = null;
	#ended = false;

	constructor(signal: AbortSignal) {
		signal.addEventListener('abort', () => this.end(), { once: true });
	}

	[Symbol.asyncIterator](): this {
		return this;
	}

	push(value: T): Promise<void> {
		const taken = deferred();
		if (this.#waiting) {
			const w = this.#waiting;
			this.#waiting = null;
			this.#last = taken;
			w.resolve({ value, done: false });
		} else this.#queue.push({ value, taken });
		return taken.promise;
	}

	end(): void {
		this.#ended = true;
		this.#last?.resolve();
		this.#waiting?.resolve({ value: undefined, done: true });
		this.#waiting = null;
	}

	next(): Promise<IteratorResult<T>> {
		this.#last?.resolve();
		this.#last = null;
		const item = this.#queue.shift();
		if (item) {
			this.#last = item.taken;
			return Promise.resolve({ value: item.value, done: false });
		}
		if (this.#ended) return Promise.resolve({ value: undefined, done: true });
		this.#waiting = deferred();
		return this.#waiting.promise;
	}

	return(): Promise<IteratorResult<T>> {
		this.end();
		return Promise.resolve({ value: undefined, done: true });
	}
}

class StreamingSource implements JobWatchSource {
	snapshots: Feed<JobSnapshot> | null = null;
	pieces: Feed<readonly JobStreamPiece[]> | null = null;
	readonly streamsAsked = deferred();
	streamCalls = 0;

	watch(_id: string, { signal }: { signal: AbortSignal }): AsyncIterable<JobSnapshot> {
		return (this.snapshots = new Feed(signal));
	}
	watchStreams(_id: string, { signal }: { signal: AbortSignal }): AsyncIterable<readonly JobStreamPiece[]> {
		this.streamCalls++;
		this.pieces = new Feed(signal);
		this.streamsAsked.resolve();
		return this.pieces;
	}
	async cancel(): Promise<unknown> {
		return null;
	}
}

const piece = (text: string, seq: number, attempt = 1): JobStreamPiece => ({ stream: 'summary', attempt, seq, text });

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

function render(source: StreamingSource, kind?: { parseMetadata(value: unknown): { pages?: number } }) {
	target = document.createElement('div');
	document.body.appendChild(target);
	let job: WatchedJob<{ pages?: number }> | null = null;
	app = mount(JobStreamView, {
		target,
		props: { source, id: 'job-1', kind, onjob: (j: WatchedJob<{ pages?: number }>) => (job = j) },
	});
	flushSync();
	if (!job) throw new Error('the view did not hand over its WatchedJob');
	return job as WatchedJob<{ pages?: number }>;
}

const live = () => target.querySelector('[aria-live="polite"]')!;
const visible = () => target.querySelector('.job-stream-text')!;

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
});

describe('WatchedJob streams and metadata', () => {
	it('job.streams.summary grows piece by piece in order, and a later attempt starts it over', async () => {
		const source = new StreamingSource();
		const job = render(source);
		await source.streamsAsked.promise;
		await source.snapshots!.push(snap({ status: 'running' }));
		await source.pieces!.push([piece('The tender ', 0), piece('asks for ', 1)]);
		flushSync();
		expect(job.streams.summary).toBe('The tender asks for ');
		expect(visible().textContent).toBe('The tender asks for ');
		await source.pieces!.push([piece('three lots.', 2)]);
		flushSync();
		expect(job.streams.summary).toBe('The tender asks for three lots.');
		// The retry writes the summary again: its first piece replaces what the first attempt wrote.
		await source.pieces!.push([piece('Attempt two', 0, 2)]);
		flushSync();
		expect(job.streams.summary).toBe('Attempt two');
		await source.pieces!.push([piece(' late piece of attempt one', 3, 1)]);
		flushSync();
		expect(job.streams.summary).toBe('Attempt two');
		expect(source.streamCalls).toBe(1);
	});

	it('job.metadata follows the snapshots, checked and typed by the kind; a value off the schema reads as null', async () => {
		const kind = defineJobKind({
			name: 'analysis',
			params: z.object({}),
			metadata: z.object({ pages: z.number().int() }),
		});
		const source = new StreamingSource();
		const job = render(source, kind);
		expect(job.metadata).toBeNull();
		await source.snapshots!.push(snap({ status: 'running', metadata: { pages: 12 } }));
		flushSync();
		const pages: number | undefined = job.metadata?.pages; // typed from the kind
		expect(pages).toBe(12);
		expect(target.querySelector('[data-pages]')!.textContent).toBe('12');
		await source.snapshots!.push(snap({ status: 'running', metadata: { pages: 'many' } }));
		flushSync();
		expect(job.metadata).toBeNull();
	});
});

describe('<JobStream> live region', () => {
	it('speaks whole sentences once complete, never each token, and says when the text is finished', async () => {
		const source = new StreamingSource();
		const job = render(source);
		await source.streamsAsked.promise;
		await source.snapshots!.push(snap({ status: 'running' }));
		const region = live();
		expect(region.getAttribute('aria-atomic')).toBe('true');
		expect(target.querySelector('section')!.getAttribute('aria-label')).toBe('Summary');
		expect(visible().getAttribute('aria-busy')).toBe('true');

		const said: string[] = [];
		const observer = new MutationObserver(() => said.push(region.textContent ?? ''));
		observer.observe(region, { childList: true, characterData: true, subtree: true });
		for (const [i, token] of ['The ', 'tender ', 'asks ', 'for ', 'three '].entries()) {
			await source.pieces!.push([piece(token, i)]);
			flushSync();
		}
		expect(job.streams.summary).toBe('The tender asks for three ');
		expect(region.textContent).toBe(''); // five tokens on screen, nothing spoken yet
		await source.pieces!.push([piece('lots. Each ', 5)]);
		flushSync();
		expect(region.textContent).toBe('The tender asks for three lots.');
		await source.pieces!.push([piece('lot has ', 6)]);
		flushSync();
		expect(region.textContent).toBe('The tender asks for three lots.');
		await source.pieces!.push([piece('a price', 7)]);
		flushSync();
		// The job ends: the unfinished sentence and the end are said together.
		source.pieces!.end();
		await source.snapshots!.push(snap({ status: 'done', progress: 100 }));
		// The component marks the end once every piece arrived: wait for that mutation.
		const section = target.querySelector('section')!;
		await new Promise<void>((resolve) => {
			if (section.dataset.ended === 'true') return resolve();
			const watcher = new MutationObserver(() => {
				if (section.dataset.ended !== 'true') return;
				watcher.disconnect();
				resolve();
			});
			watcher.observe(section, { attributes: true, attributeFilter: ['data-ended'] });
		});
		expect(job.streamsEnded).toBe(true);
		flushSync();
		expect(region.textContent).toBe('Each lot has a price Finished writing.');
		expect(visible().getAttribute('aria-busy')).toBe('false');
		observer.disconnect();
		await Promise.resolve();
		expect(said).toEqual(['The tender asks for three lots.', 'Each lot has a price Finished writing.']);
	});
});
