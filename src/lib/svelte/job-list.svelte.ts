import { untrack } from 'svelte';
import { mergeSnapshot } from './internal/merge-snapshot.ts';
import { read } from './internal/read.ts';
import type { JobListFilter, JobListSource, JobSnapshot, MaybeGetter } from './types.ts';

/**
 * Options for a {@link JobList}: the filters plus the page size.
 */
export interface JobListOptions extends JobListFilter {
	/** Rows per page. @default 20 */
	limit?: number;
}

const DEFAULT_LIMIT = 20;

/**
 * A live list of jobs, newest first: the state behind a "queued or running"
 * strip and a recent-jobs list.
 *
 * It reads pages from a {@link JobListSource} with an opaque cursor
 * (`loadMore()`), and, when the source can `subscribe`, applies changes as they
 * arrive: a changed row replaces its older self (progress never moving backwards
 * within an attempt, nothing leaving a terminal state), a new row that matches
 * the filter appears in place, and a row that stops matching (a running job that
 * finished, in a "queued or running" strip) leaves.
 *
 * Create it with {@link JobList.create} inside a component (loads and subscribes
 * on mount, unsubscribes on destroy), or with `new JobList(...)` plus
 * `start()`/`stop()` elsewhere.
 *
 * @example
 * ```svelte
 * <script lang="ts">
 * 	import { JobList, JobStrip } from 'supabase-jobs/svelte';
 * 	const inFlight = JobList.create(source, { kind: 'extract', statuses: ['queued', 'running'] });
 * 	const recent = JobList.create(source, { kind: 'extract', limit: 20 });
 * </script>
 *
 * <JobStrip jobs={inFlight.jobs} />
 * {#each recent.jobs as job (job.id)}<p>{job.kind}: {job.status}</p>{/each}
 * {#if recent.hasMore}<button onclick={() => recent.loadMore()}>More</button>{/if}
 * ```
 */
export class JobList {
	readonly #source: MaybeGetter<JobListSource>;

	#jobs = $state.raw<readonly JobSnapshot[]>([]);
	#filter = $state.raw<Required<JobListFilter>>({ kind: null, status: null, statuses: null });
	#limit: number;
	#nextCursor = $state.raw<string | null>(null);
	#loaded = $state(false);
	#loading = $state(false);
	#error = $state.raw<unknown>(null);
	/** Bumped by every first-page load and filter change, so a late page of an old query is dropped. */
	#generation = 0;
	#loadMoreInFlight: Promise<void> | null = null;
	#settled: Promise<void> = Promise.resolve();
	#unsubscribe: (() => void) | null = null;
	#started = false;

	/**
	 * Prefer {@link JobList.create} in components.
	 *
	 * @example
	 * const list = new JobList(source, { statuses: ['queued', 'running'] });
	 * await list.start();
	 * // ... later
	 * list.stop();
	 */
	constructor(source: MaybeGetter<JobListSource>, options: JobListOptions = {}) {
		this.#source = source;
		this.#limit = normaliseLimit(options.limit);
		this.#filter = normaliseFilter(options);
	}

	/**
	 * Creates a list tied to the calling component: it loads the first page and
	 * subscribes on mount, and unsubscribes when the component is destroyed. Must
	 * be called while a component initialises.
	 *
	 * @example
	 * ```svelte
	 * <script lang="ts">
	 * 	let { kind } = $props();
	 * 	const list = JobList.create(source, () => ({ kind, statuses: ['queued', 'running'] }));
	 * </script>
	 * ```
	 */
	static create(source: MaybeGetter<JobListSource>, options: MaybeGetter<JobListOptions> = {}): JobList {
		const list = new JobList(
			source,
			untrack(() => read(options)),
		);
		$effect(() => {
			untrack(() => void list.start());
			return () => list.stop();
		});
		$effect(() => {
			const next = read(options); // tracked: a new filter reads the first page again
			untrack(() => {
				const filter = normaliseFilter(next);
				const limit = normaliseLimit(next.limit);
				if (sameFilter(filter, list.#filter) && limit === list.#limit) return;
				list.#limit = limit;
				void list.setFilter(filter);
			});
		});
		return list;
	}

	/**
	 * The rows, newest first.
	 *
	 * @example
	 * list.jobs.length;
	 */
	get jobs(): readonly JobSnapshot[] {
		return this.#jobs;
	}

	/**
	 * The rows that are queued or running (what a progress strip shows).
	 *
	 * @example
	 * list.active.length; // jobs in flight
	 */
	readonly active: readonly JobSnapshot[] = $derived(
		this.#jobs.filter((j) => j.status === 'queued' || j.status === 'running'),
	);

	/**
	 * The current filter.
	 *
	 * @example
	 * list.filter.kind;
	 */
	get filter(): Readonly<JobListFilter> {
		return this.#filter;
	}

	/**
	 * True once the first page has arrived.
	 *
	 * @example
	 * {#if list.loaded && list.jobs.length === 0}No jobs yet{/if}
	 */
	get loaded(): boolean {
		return this.#loaded;
	}

	/**
	 * True while a page is being read.
	 *
	 * @example
	 * list.loading;
	 */
	get loading(): boolean {
		return this.#loading;
	}

	/**
	 * The error of the last failed read, or null.
	 *
	 * @example
	 * if (list.error) console.warn(list.error);
	 */
	get error(): unknown {
		return this.#error;
	}

	/**
	 * True when the source said there is another page.
	 *
	 * @example
	 * {#if list.hasMore}<button onclick={() => list.loadMore()}>More</button>{/if}
	 */
	readonly hasMore: boolean = $derived(this.#nextCursor !== null);

	/**
	 * The latest read (first page or more pages), resolved once it has landed or
	 * failed; never rejects. Useful after a change that triggers a read on its own
	 * (a subscription saying "something changed", a new filter).
	 *
	 * @example
	 * list.setFilter({ status: 'failed' });
	 * await list.settled;
	 */
	get settled(): Promise<void> {
		return this.#settled;
	}

	/**
	 * Loads the first page and subscribes to changes (when the source can). Safe
	 * to call twice (the second call returns `settled`). Resolves when the first
	 * page is in; never rejects (errors land in `error`).
	 *
	 * @example
	 * await list.start();
	 */
	start(): Promise<void> {
		if (this.#started) return this.#settled;
		this.#started = true;
		const source = read(this.#source);
		if (source.subscribe) {
			this.#unsubscribe = source.subscribe((job) => {
				if (job) this.apply(job);
				else void this.refresh();
			});
		}
		return this.refresh();
	}

	/**
	 * Unsubscribes and drops any answer still on its way. Safe to call twice.
	 *
	 * @example
	 * list.stop();
	 */
	stop(): void {
		if (!this.#started) return;
		this.#started = false;
		this.#generation++;
		this.#loading = false;
		const unsubscribe = this.#unsubscribe;
		this.#unsubscribe = null;
		unsubscribe?.();
	}

	/**
	 * Reads the first page again, replacing the rows (a row already holding a
	 * newer snapshot than the page keeps it).
	 *
	 * @example
	 * await list.refresh();
	 */
	refresh(): Promise<void> {
		const request = this.#refresh();
		this.#settled = request;
		return request;
	}

	async #refresh(): Promise<void> {
		const generation = ++this.#generation;
		this.#loadMoreInFlight = null;
		this.#loading = true;
		try {
			const page = await read(this.#source).listRecent({ ...this.#filter, limit: this.#limit, cursor: null });
			if (generation !== this.#generation) return;
			// eslint-disable-next-line svelte/prefer-svelte-reactivity -- a local lookup, not state
			const current = new Map(this.#jobs.map((j) => [j.id, j]));
			const rows: JobSnapshot[] = [];
			for (const row of page.jobs) {
				const mine = current.get(row.id);
				// The page may be older than a change already applied; keep the newer one.
				rows.push(mine ? (mergeSnapshot(mine, row) ?? mine) : (mergeSnapshot(null, row) ?? row));
			}
			this.#jobs = rows;
			this.#nextCursor = page.nextCursor;
			this.#error = null;
			this.#loaded = true;
		} catch (error) {
			if (generation === this.#generation) this.#error = error;
		} finally {
			if (generation === this.#generation) this.#loading = false;
		}
	}

	/**
	 * Appends the next page. Does nothing on the last page; a second call while
	 * one is in flight returns the same promise.
	 *
	 * @example
	 * <button onclick={() => list.loadMore()} disabled={!list.hasMore || list.loading}>More</button>
	 */
	loadMore(): Promise<void> {
		if (this.#loadMoreInFlight) return this.#loadMoreInFlight;
		const cursor = this.#nextCursor;
		if (cursor === null) return Promise.resolve();
		const request = this.#loadPage(cursor);
		this.#loadMoreInFlight = request;
		this.#settled = request;
		return request;
	}

	async #loadPage(cursor: string): Promise<void> {
		const generation = this.#generation;
		this.#loading = true;
		try {
			const page = await read(this.#source).listRecent({ ...this.#filter, limit: this.#limit, cursor });
			if (generation !== this.#generation) return;
			// eslint-disable-next-line svelte/prefer-svelte-reactivity -- a local lookup, not state
			const seen = new Set(this.#jobs.map((j) => j.id));
			const added = page.jobs.filter((j) => !seen.has(j.id)).map((j) => mergeSnapshot(null, j) ?? j);
			this.#jobs = [...this.#jobs, ...added];
			this.#nextCursor = page.nextCursor;
			this.#error = null;
		} catch (error) {
			if (generation === this.#generation) this.#error = error;
		} finally {
			if (generation === this.#generation) {
				this.#loading = false;
				this.#loadMoreInFlight = null;
			}
		}
	}

	/**
	 * Changes the filter and reads the first page again.
	 *
	 * @example
	 * list.setFilter({ kind: 'extract', status: 'failed' });
	 */
	setFilter(filter: JobListFilter): Promise<void> {
		this.#filter = normaliseFilter(filter);
		return this.refresh();
	}

	/**
	 * Applies one changed row (what `subscribe` delivers; call it yourself when
	 * you learn of a change another way, e.g. after enqueueing).
	 *
	 * - a known row is replaced by the newer snapshot (ignored when older);
	 * - a row that no longer matches the filter is removed;
	 * - an unknown row that matches is inserted in order, unless it sorts after
	 *   the last loaded row while more pages exist (it belongs to a later page).
	 *
	 * @example
	 * const job = await store.enqueue('extract', { filename });
	 * list.apply(job);
	 */
	apply(job: JobSnapshot): void {
		const rows = this.#jobs;
		const index = rows.findIndex((j) => j.id === job.id);
		if (index >= 0) {
			const merged = mergeSnapshot(rows[index]!, job);
			if (!merged) return;
			const next = [...rows];
			if (matches(this.#filter, merged)) next[index] = merged;
			else next.splice(index, 1);
			this.#jobs = next;
			return;
		}
		if (!matches(this.#filter, job)) return;
		const at = rows.findIndex((j) => compareNewestFirst(job, j) < 0);
		if (at < 0 && this.#nextCursor !== null) return;
		const merged = mergeSnapshot(null, job) ?? job;
		const next = [...rows];
		next.splice(at < 0 ? next.length : at, 0, merged);
		this.#jobs = next;
	}
}

function normaliseFilter(filter: JobListFilter): Required<JobListFilter> {
	return {
		kind: filter.kind ?? null,
		status: filter.status ?? null,
		statuses: filter.statuses && filter.statuses.length > 0 ? [...filter.statuses] : null,
	};
}

function normaliseLimit(limit: number | undefined): number {
	return Math.max(1, Math.floor(limit ?? DEFAULT_LIMIT));
}

function sameFilter(a: Required<JobListFilter>, b: Required<JobListFilter>): boolean {
	return a.kind === b.kind && a.status === b.status && (a.statuses ?? []).join() === (b.statuses ?? []).join();
}

function matches(filter: Required<JobListFilter>, job: JobSnapshot): boolean {
	if (filter.kind !== null && job.kind !== filter.kind) return false;
	if (filter.status !== null && job.status !== filter.status) return false;
	if (filter.statuses !== null && !filter.statuses.includes(job.status)) return false;
	return true;
}

/** Keyset order of `job_list_recent`: id desc (ids are UUIDv7, time-ordered). Negative when a comes first. */
function compareNewestFirst(a: JobSnapshot, b: JobSnapshot): number {
	return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
