/**
 * The browser's side of the demo: supabase-js exactly as a user's app creates
 * it (project URL + anon/publishable key, the visitor's access token), a
 * JobStore over it, and the two sources the Svelte state classes read.
 */
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { supabaseAdapter } from '../../lib/adapters/supabase.ts';
import type { Job } from '../../lib/store/job.ts';
import { JobStore } from '../../lib/store/job-store.ts';
import type { JobListSource, JobSnapshot, JobWatchSource } from '../../lib/svelte/types.ts';

/** What the layout hands the browser (page data). */
export interface PublicSession {
	supabaseUrl: string;
	anonKey: string;
	accessToken: string;
	userId: string;
}

/** How often the dashboard asks "what changed?" while realtime list updates are not in place. */
const LIST_POLL_MS = 1000;
/** Poll interval of a watched job when the store watches by polling (Realtime pushes instead). */
const WATCH_INTERVAL_MS = 400;

/**
 * A change feed for job lists, by polling: every `intervalMs` it reads the
 * jobs in flight and the newest page, plus the final state of every job that
 * left "in flight", and reports rows whose updated_at moved. One timer however
 * many lists subscribe; none while nobody does.
 */
export class PolledChanges {
	readonly #store: JobStore;
	readonly #intervalMs: number;
	readonly #listeners = new Set<(job?: JobSnapshot) => void>();
	readonly #seen = new Map<string, number>();
	#active = new Set<string>();
	#timer: ReturnType<typeof setTimeout> | null = null;

	constructor(store: JobStore, intervalMs = LIST_POLL_MS) {
		this.#store = store;
		this.#intervalMs = intervalMs;
	}

	subscribe = (onChange: (job?: JobSnapshot) => void): (() => void) => {
		this.#listeners.add(onChange);
		if (this.#listeners.size === 1) this.#schedule(0);
		return () => {
			this.#listeners.delete(onChange);
			if (this.#listeners.size === 0 && this.#timer) {
				clearTimeout(this.#timer);
				this.#timer = null;
			}
		};
	};

	#schedule(ms: number) {
		this.#timer = setTimeout(() => void this.#poll(), ms);
	}

	async #poll() {
		try {
			const [inFlight, newest] = await Promise.all([
				this.#store.listRecent({ statuses: ['queued', 'running'], limit: 50 }),
				this.#store.listRecent({ limit: 20 }),
			]);
			const rows = new Map<string, Job>();
			for (const j of [...newest.jobs, ...inFlight.jobs]) rows.set(j.id, j);
			const active = new Set(inFlight.jobs.map((j) => j.id));
			const left = [...this.#active].filter((id) => !active.has(id) && !rows.has(id));
			for (const j of await Promise.all(left.map((id) => this.#store.get(id).catch(() => null))))
				if (j) rows.set(j.id, j);
			this.#active = active;
			for (const job of rows.values()) {
				const stamp = job.updatedAt.getTime();
				if (this.#seen.get(job.id) === stamp) continue;
				this.#seen.set(job.id, stamp);
				for (const l of this.#listeners) l(job);
			}
		} catch (e) {
			console.warn('[demo] could not read job changes', e);
		} finally {
			if (this.#listeners.size > 0) this.#schedule(this.#intervalMs);
		}
	}
}

/** The visitor's Supabase client, job store and sources. */
export class DemoJobs {
	readonly client: SupabaseClient;
	readonly store: JobStore;
	readonly changes: PolledChanges;
	readonly accessToken: string;

	constructor(session: PublicSession) {
		this.accessToken = session.accessToken;
		// A user's app would use its auth session; here the token comes from the
		// server-side anonymous sign-in (see session.server.ts). accessToken also
		// authorizes Realtime's private channels.
		this.client = createClient(session.supabaseUrl, session.anonKey, {
			accessToken: async () => session.accessToken,
		});
		this.store = new JobStore(supabaseAdapter(this.client));
		this.changes = new PolledChanges(this.store);
	}

	/** What WatchedJob reads: the store's watch (Realtime or polling: the page does not care). */
	readonly watchSource: JobWatchSource = {
		watch: (id, { signal }) =>
			this.store.watch(id, { signal, emitOn: ['status', 'progress', 'stage', 'attempts'], intervalMs: WATCH_INTERVAL_MS }),
		cancel: (id) => this.store.cancel(id),
	};

	/** What JobList reads: pages by cursor, and the change feed. */
	readonly listSource: JobListSource = {
		listRecent: async ({ kind, status, statuses, limit, cursor }) =>
			await this.store.listRecent({
				kind: kind ?? undefined,
				status: status ?? undefined,
				statuses: statuses ?? undefined,
				limit,
				cursor,
			}),
		subscribe: (onChange) => this.changes.subscribe(onChange),
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
