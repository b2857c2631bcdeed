/**
 * The browser's side of the demo: supabase-js exactly as a user's app creates
 * it (project URL + anon/publishable key, the visitor's access token), a
 * JobStore over it, and the two sources the Svelte state classes read.
 */
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { JobStore, supabaseAdapter, type Job } from 'supabase-jobs';
import type { JobListSource, JobSnapshot, JobWatchSource } from 'supabase-jobs/svelte';

/** What the layout hands the browser (page data). */
export interface PublicSession {
	supabaseUrl: string;
	anonKey: string;
	accessToken: string;
	userId: string;
}

/** Polling period of the list's fallback (Realtime unavailable). */
const LIST_FALLBACK_MS = 1500;
/** Poll interval of a watched job when the store watches by polling (Realtime pushes instead). */
const WATCH_INTERVAL_MS = 400;

/** The visitor's Supabase client, job store and sources. */
export class DemoJobs {
	readonly client: SupabaseClient;
	readonly store: JobStore;
	readonly accessToken: string;
	/** params by job id, from full reads: a Realtime broadcast carries no params, and the list titles rows by filename. */
	readonly #params = new Map<string, Job['params']>();

	constructor(session: PublicSession) {
		this.accessToken = session.accessToken;
		// A user's app would use its auth session; here the token comes from the
		// server-side anonymous sign-in (see session.server.ts). accessToken also
		// authorizes Realtime's private channels.
		this.client = createClient(session.supabaseUrl, session.anonKey, {
			accessToken: async () => session.accessToken,
		});
		this.store = new JobStore(supabaseAdapter(this.client));
	}

	/** What WatchedJob reads: the store's watch (Realtime or polling: the page does not care). */
	readonly watchSource: JobWatchSource = {
		watch: (id, { signal }) => this.store.watch(id, { signal, intervalMs: WATCH_INTERVAL_MS }),
		cancel: (id) => this.store.cancel(id),
		queuePosition: (id) => this.store.queuePosition(id),
		// What holds a queued job (its kind paused, a rate or concurrency limit): the page says which.
		holdReasons: (ids) => this.store.holdReasons(ids),
		question: (id) => this.store.question(id),
		answer: (id, value) => this.store.answer(id, value),
		tryAgain: (id) => this.store.tryAgain(id),
		watchStreams: (id, { signal }) => this.store.watchStreams(id, { signal, intervalMs: WATCH_INTERVAL_MS }),
	};

	/** What JobList reads: pages by cursor, and changes as they commit (Realtime; polling when it is unavailable). */
	readonly listSource: JobListSource = {
		listRecent: async ({ kind, status, statuses, limit, cursor }) => {
			const page = await this.store.listRecent({
				kind: kind ?? undefined,
				status: status ?? undefined,
				statuses: statuses ?? undefined,
				limit,
				cursor,
			});
			for (const job of page.jobs) this.#params.set(job.id, job.params);
			return page;
		},
		subscribe: (onChange) =>
			this.store.subscribeList({
				intervalMs: LIST_FALLBACK_MS,
				onChange: (job) => {
					if (!job) return onChange();
					const params = this.#params.get(job.id);
					// A job we have not read yet (enqueued in another tab): read the list again.
					if (!params) return onChange();
					onChange({ ...job, params } as JobSnapshot);
				},
			}),
	};

	close(): void {
		void this.client.removeAllChannels();
	}
}

let current: DemoJobs | null = null;

/**
 * The visitor's DemoJobs (one per access token, created on first use, in the browser only).
 *
 * @example
 * const jobs = demoJobs(data.session);
 */
export function demoJobs(session: PublicSession): DemoJobs {
	if (current?.accessToken !== session.accessToken) {
		current?.close();
		current = new DemoJobs(session);
	}
	return current;
}
