/**
 * The admin dashboard as a SvelteKit route: `load` and `actions` for a
 * +page.server.ts the app places at a path of its choice. The app's own admin
 * check runs first, on every request: a non-admin gets 403 from the load and
 * from every action, and no figure is read. The store should carry the
 * visitor's own session, so the database refuses a non-admin's admin calls
 * too (defence in depth); its refusal also answers 403.
 */
import type { RequestEvent } from '@sveltejs/kit';
import { isJobError } from '../errors.ts';
import { fromPostgresError } from '../internal/map-sql-error.ts';
import type { Job } from '../store/job.ts';
import type { JobPage, ListRecentOptions } from '../store/store-options.ts';
import {
	dashboardJob,
	type DashboardActionName,
	type DashboardActionResult,
	type DashboardFilter,
	type DashboardKind,
	type DashboardTimelineEntry,
	type JobsDashboardData,
} from './dashboard-data.ts';
import { matchesFilter, readFilter, readJobId, readKind } from './dashboard-forms.ts';

/**
 * What the dashboard calls on a store (a `JobStore` has all of it). The admin
 * calls are optional: an action whose call a store lacks is not offered.
 */
export interface AdminDashboardStore {
	listRecent(options: ListRecentOptions): Promise<JobPage<Job>>;
	get(id: string): Promise<Job>;
	cancel(id: string): Promise<Job | null>;
	adminKinds?(): Promise<readonly unknown[]>;
	timeline?(id: string): Promise<unknown>;
	tryAgain?(id: string): Promise<Job>;
	replay?(filter: DashboardFilter): Promise<unknown>;
	cancelMany?(filter: { kind?: string }): Promise<unknown>;
	pauseKind?(kind: string): Promise<unknown>;
	resumeKind?(kind: string): Promise<unknown>;
	deleteFinished?(filter: DashboardFilter): Promise<unknown>;
}

/** The part of a SvelteKit RequestEvent the dashboard reads. */
interface DashboardEvent {
	url: URL;
	request: Request;
}

/**
 * Options of {@link createAdminDashboard}: the store (or how to make one per
 * request, e.g. over the visitor's session) and the app's own admin check.
 */
export type AdminDashboardOptions<E extends DashboardEvent = RequestEvent> = (
	| { store: AdminDashboardStore; getStore?: never }
	| { getStore(event: E): AdminDashboardStore | Promise<AdminDashboardStore>; store?: never }
) & {
	/** The app's admin check, asked before anything else on every load and action. */
	isAdmin(event: E): boolean | Promise<boolean>;
	/** Failed jobs listed at most. @default 50 */
	failedLimit?: number;
};

/**
 * The `load` and `actions` the app's +page.server.ts exports.
 */
export interface AdminDashboard<E extends DashboardEvent = RequestEvent> {
	load(event: E): Promise<JobsDashboardData>;
	actions: Record<DashboardActionName, (event: E) => Promise<DashboardActionResult>>;
}

const kit = async () => await import('@sveltejs/kit');

/** How many jobs an action's answer names: a count, a list, or a row with `count`. */
function countOf(result: unknown): number {
	if (typeof result === 'number') return result;
	if (Array.isArray(result)) return result.length;
	if (result && typeof result === 'object' && 'count' in result) return Number(result.count);
	return result ? 1 : 0;
}

const STORE_CALL: Record<DashboardActionName, keyof AdminDashboardStore> = {
	cancel: 'cancel',
	tryAgain: 'tryAgain',
	replay: 'replay',
	cancelMany: 'cancelMany',
	pause: 'pauseKind',
	resume: 'resumeKind',
	deleteFinished: 'deleteFinished',
};

/**
 * The admin dashboard's server half: `load` reads the queues by kind, the
 * failed jobs (filtered by kind, error code and time), and the job opened with
 * `?job=<id>` with its timeline; `actions` cancel, try again and replay (one,
 * or in bulk by filter), pause and resume a kind, and delete finished jobs.
 * Every one asks `isAdmin(event)` first and answers 403 when it says no.
 * Actions answer `{ action, ok, count }` (or `fail(400, { field, message })`
 * for bad input) for the page's live region; they work as plain form posts.
 *
 * @example
 * // src/routes/admin/jobs/+page.server.ts
 * import { createAdminDashboard } from 'supabase-jobs/kit';
 * const dashboard = createAdminDashboard({
 *   getStore: ({ locals }) => new JobStore(supabaseAdapter(locals.supabase)),
 *   isAdmin: ({ locals }) => locals.user?.app_metadata.role === 'admin',
 * });
 * export const load = dashboard.load;
 * export const actions = dashboard.actions;
 */
export function createAdminDashboard<E extends DashboardEvent = RequestEvent>(
	options: AdminDashboardOptions<E>,
): AdminDashboard<E> {
	const failedLimit = options.failedLimit ?? 50;

	async function admitted(event: E): Promise<AdminDashboardStore> {
		if (!(await options.isAdmin(event))) (await kit()).error(403, { message: 'Admins only' } as App.Error);
		return options.store ?? (await options.getStore!(event));
	}

	/** The database refused (not an admin by its own check): 403 too, never a 500. */
	async function refuse(e: unknown): Promise<never> {
		if (isJobError(fromPostgresError(e), 'permission_denied'))
			(await kit()).error(403, { message: 'Admins only' } as App.Error);
		throw e;
	}

	function offered(store: AdminDashboardStore): DashboardActionName[] {
		return (Object.keys(STORE_CALL) as DashboardActionName[]).filter(
			(name) => typeof store[STORE_CALL[name]] === 'function',
		);
	}

	async function failedJobs(store: AdminDashboardStore, filter: DashboardFilter) {
		// The list is asked by kind; error code and time are matched here, over the newest failures.
		const page = await store.listRecent({ kind: filter.kind, status: 'failed', limit: failedLimit * 4 });
		const matching = page.jobs.map(dashboardJob).filter((j) => matchesFilter(j, filter));
		return { failed: matching.slice(0, failedLimit), moreFailed: matching.length > failedLimit || !!page.nextCursor };
	}

	async function selected(store: AdminDashboardStore, id: string | null): Promise<JobsDashboardData['selected']> {
		if (id === null) return null;
		const jobId = readJobId(new URLSearchParams({ job: id }), 'job');
		const job = dashboardJob(await store.get(jobId));
		const timeline = store.timeline ? toTimeline(await store.timeline(jobId)) : null;
		return { job, timeline };
	}

	async function load(event: E): Promise<JobsDashboardData> {
		const store = await admitted(event);
		try {
			let filter: DashboardFilter;
			try {
				filter = readFilter(event.url.searchParams);
			} catch {
				filter = {}; // a hand-edited address lists everything rather than failing the page
			}
			const [kinds, failed, open] = await Promise.all([
				store.adminKinds ? store.adminKinds().then((rows) => rows.map(toKind)) : Promise.resolve([]),
				failedJobs(store, filter),
				selected(store, event.url.searchParams.get('job')),
			]);
			return {
				kinds,
				...failed,
				filter,
				selected: open,
				actions: offered(store),
				generatedAt: new Date().toISOString(),
			};
		} catch (e) {
			return await refuse(e);
		}
	}

	function action(
		name: DashboardActionName,
		run: (
			store: AdminDashboardStore,
			form: FormData,
		) => Promise<Omit<DashboardActionResult & { ok: true }, 'action' | 'ok'>>,
	) {
		return async (event: E): Promise<DashboardActionResult> => {
			const store = await admitted(event);
			const form = await event.request.formData();
			try {
				if (typeof store[STORE_CALL[name]] !== 'function')
					(await kit()).error(404, { message: `This store has no ${String(STORE_CALL[name])}` } as App.Error);
				return { action: name, ok: true, ...(await run(store, form)) };
			} catch (raw) {
				const e = fromPostgresError(raw);
				if (isJobError(e, 'invalid_input') || isJobError(e, 'job_not_found') || isJobError(e, 'job_already_finished')) {
					const field = (e as { field?: unknown }).field;
					return (await kit()).fail(isJobError(e, 'invalid_input') ? 400 : isJobError(e, 'job_not_found') ? 404 : 409, {
						action: name,
						ok: false as const,
						code: e.code,
						message: e.message,
						...(typeof field === 'string' ? { field } : {}),
					}) as never;
				}
				return await refuse(raw);
			}
		};
	}

	const actions: AdminDashboard<E>['actions'] = {
		cancel: action('cancel', async (store, form) => {
			const id = readJobId(form);
			return { jobId: id, count: (await store.cancel(id)) ? 1 : 0 };
		}),
		tryAgain: action('tryAgain', async (store, form) => {
			const id = readJobId(form);
			const made = await store.tryAgain!(id);
			return { jobId: id, newJobId: made.id, count: 1 };
		}),
		replay: action('replay', async (store, form) => ({ count: countOf(await store.replay!(readFilter(form))) })),
		cancelMany: action('cancelMany', async (store, form) => {
			const kind = readKind(form);
			return { kind, count: countOf(await store.cancelMany!({ kind })) };
		}),
		pause: action('pause', async (store, form) => {
			const kind = readKind(form);
			await store.pauseKind!(kind);
			return { kind, count: 1 };
		}),
		resume: action('resume', async (store, form) => {
			const kind = readKind(form);
			await store.resumeKind!(kind);
			return { kind, count: 1 };
		}),
		deleteFinished: action('deleteFinished', async (store, form) => ({
			count: countOf(await store.deleteFinished!(readFilter(form))),
		})),
	};

	return { load, actions };
}

const ZERO_COUNTS = { queued: 0, running: 0, waiting: 0, done: 0, failed: 0, cancelled: 0 };

/** One row of the store's adminKinds() as the dashboard shows it. */
function toKind(raw: unknown): DashboardKind {
	const r = raw as Partial<DashboardKind> & { kind: string };
	return {
		kind: r.kind,
		counts: { ...ZERO_COUNTS, ...r.counts },
		doneLastHour: Number(r.doneLastHour ?? 0),
		failedLastHour: Number(r.failedLastHour ?? 0),
		paused: r.paused === true,
		rateLimit: r.rateLimit ?? null,
		maxRunning: r.maxRunning ?? null,
	};
}

/** The store's timeline(id) as the dashboard shows it. */
function toTimeline(raw: unknown): DashboardTimelineEntry[] {
	const rows = (Array.isArray(raw) ? raw : ((raw as { entries?: unknown[] } | null)?.entries ?? [])) as Record<
		string,
		unknown
	>[];
	return rows.map((r) => ({
		at: r.at instanceof Date ? r.at.toISOString() : String(r.at),
		status: (r.status as DashboardTimelineEntry['status']) ?? null,
		message: (r.message as string | undefined) ?? null,
		level: (r.level as string | undefined) ?? null,
	}));
}
