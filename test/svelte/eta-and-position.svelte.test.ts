/**
 * What the screen says about time and place: a real ProgressTracker, paced by
 * a PhasePlan, ticks into a watched job the way job_tick stores it (the
 * worker's seconds left become expectedEndAt = the tick's time + eta; the SQL
 * side of that rule is tested against PostgreSQL in test/worker/eta.test.ts),
 * and the component is read as a person reads it. A queued job says how many of
 * the user's own jobs are ahead of it.
 */
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { ProgressTracker } from '../../src/lib/toolkit/progress-tracker.ts';
import type { JobStatusValue, TickUpdate, Ticker } from '../../src/lib/toolkit/ticker.ts';
import type { WatchedJob } from '../../src/lib/svelte/watched-job.svelte.ts';
import { deferred, FakeJobSource, snap } from './fixtures/sources.ts';
import WatchedJobView from './fixtures/WatchedJobView.svelte';

let target: HTMLElement;
let app: Record<string, unknown> | null = null;

afterEach(() => {
	if (app) unmount(app);
	app = null;
	target?.remove();
	vi.useRealTimers();
});

function render(source: FakeJobSource, locale = 'en'): WatchedJob {
	target = document.createElement('div');
	document.body.appendChild(target);
	let job: WatchedJob | null = null;
	app = mount(WatchedJobView, {
		target,
		props: { source, id: 'job-1', initial: null, locale, onjob: (j: WatchedJob) => (job = j) },
	});
	flushSync();
	if (!job) throw new Error('the view did not hand over its WatchedJob');
	return job;
}

const eta = () => target.querySelector('.sj-progress__eta')?.textContent ?? null;
const ahead = () => target.querySelector('.sj-progress__ahead')?.textContent ?? null;

/** Ticks become rows as job_tick writes them: expected_end_at = now() + eta_seconds. */
class RowTicker implements Ticker {
	readonly #source: FakeJobSource;
	readonly #startedAt: Date;
	constructor(source: FakeJobSource, startedAt: Date) {
		this.#source = source;
		this.#startedAt = startedAt;
	}
	async tick(_id: string, u: TickUpdate): Promise<JobStatusValue> {
		const now = Date.now();
		await this.#source.stream.push(
			snap({
				status: 'running',
				progress: u.progress,
				stage: u.stage,
				startedAt: this.#startedAt,
				updatedAt: new Date(now),
				expectedEndAt: u.etaSeconds === undefined ? null : new Date(now + u.etaSeconds * 1000),
			}),
		);
		return 'running';
	}
}

describe("JobProgress reads the worker's estimate", () => {
	it('a job whose first phase overruns: "about 3 min left", counting down without jumps, then "taking longer than usual", then a number again in the next phase', async () => {
		vi.useFakeTimers();
		const source = new FakeJobSource();
		render(source);
		const plan = PhasePlan.fromSeconds({ read: 60, summarise: 120 });
		const tracker = new ProgressTracker(new RowTicker(source, new Date()), 'job-1', {
			plan,
			intervalMs: 1000,
			heartbeatMs: 5000,
			now: () => Date.now(),
		});
		const read = deferred<void>();
		const phase = tracker.run('read', () => read.promise);
		await vi.advanceTimersByTimeAsync(0);
		flushSync();
		expect(eta()).toBe('about 3 min left');

		// Within the plan: the minutes only ever count down, one at a time.
		const minutes: number[] = [];
		for (let s = 1; s <= 55; s++) {
			await vi.advanceTimersByTimeAsync(1000);
			flushSync();
			const n = Number(/about (\d+) min left/.exec(eta() ?? '')?.[1]);
			expect(Number.isFinite(n)).toBe(true);
			minutes.push(n);
		}
		expect(minutes.every((n, i) => i === 0 || (n <= minutes[i - 1]! && minutes[i - 1]! - n <= 1))).toBe(true);
		expect(minutes.at(-1)).toBe(2); // 125 s left of 180

		// The read phase was measured at 60 s; at 75 s it is still running. The
		// worker says so (a heartbeat tick carries the overrun), and so does the screen.
		await vi.advanceTimersByTimeAsync(20_000);
		flushSync();
		expect(eta()).toBe('taking longer than usual');
		expect(target.textContent).not.toMatch(/min left/);

		// The phase ends; the next one runs on its own measured 120 s.
		read.resolve();
		await phase;
		const summarise = deferred<void>();
		const next = tracker.run('summarise', () => summarise.promise);
		await vi.advanceTimersByTimeAsync(1000);
		flushSync();
		expect(eta()).toBe('about 2 min left');
		summarise.resolve();
		await next;
	});

	it('says it in Portuguese too', async () => {
		vi.useFakeTimers();
		const source = new FakeJobSource();
		render(source, 'pt-BR');
		const now = Date.now();
		await source.stream.push(
			snap({
				status: 'running',
				progress: 20,
				stage: 'read',
				startedAt: new Date(now - 10_000),
				updatedAt: new Date(now),
				expectedEndAt: new Date(now + 240_000),
			}),
		);
		flushSync();
		expect(eta()).toBe('cerca de 4 min restantes');
		await source.stream.push(
			snap({
				status: 'running',
				progress: 25,
				stage: 'read',
				startedAt: new Date(now - 10_000),
				updatedAt: new Date(now + 1000),
				expectedEndAt: new Date(now - 5000),
			}),
		);
		flushSync();
		expect(eta()).toBe('demorando mais que o normal');
	});
});

/** A watch source that also answers where a queued job stands. */
class PositionSource extends FakeJobSource {
	answers: (number | null)[] = [];
	asked = 0;
	queuePosition(): Promise<number | null> {
		this.asked++;
		return Promise.resolve(this.answers.shift() ?? null);
	}
}

describe("JobProgress of a queued job behind the user's own jobs", () => {
	it('says "2 of your jobs are ahead of this one", follows it down while it waits, and says nothing once it runs', async () => {
		vi.useFakeTimers();
		const source = new PositionSource();
		source.answers = [2, 1, 0];
		const job = render(source);
		await source.stream.push(snap({ status: 'queued', progress: 0, attempts: 0 }));
		await vi.advanceTimersByTimeAsync(0);
		flushSync();
		expect(job.queuedAhead).toBe(2);
		expect(ahead()).toBe('2 of your jobs are ahead of this one');
		await vi.advanceTimersByTimeAsync(5000);
		flushSync();
		expect(ahead()).toBe('1 of your jobs is ahead of this one');
		await vi.advanceTimersByTimeAsync(5000);
		flushSync();
		expect(ahead()).toBeNull(); // none of theirs ahead: no claim about anyone else's
		await source.stream.push(snap({ status: 'running', progress: 5, stage: 'read', attempts: 1 }));
		flushSync();
		expect(job.queuedAhead).toBeNull();
		const askedWhileRunning = source.asked;
		await vi.advanceTimersByTimeAsync(15_000);
		expect(source.asked).toBe(askedWhileRunning); // nothing asked while it runs
	});

	it('in Portuguese', async () => {
		const source = new PositionSource();
		source.answers = [3];
		render(source, 'pt-BR');
		await source.stream.push(snap({ status: 'queued', progress: 0, attempts: 0 }));
		await vi.waitFor(() => {
			flushSync();
			expect(ahead()).toBe('3 trabalhos seus estão à frente deste');
		});
	});
});
