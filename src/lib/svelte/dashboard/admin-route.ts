/**
 * The admin dashboard as a SvelteKit route: `load` and `actions` for a
 * +page.server.ts the app places at a path of its choice. The app's own admin
 * check runs first, on every request: a non-admin gets 403 from the load and
 * from every action, and no figure is read. The store should carry the
 * visitor's own session, so the database refuses a non-admin's admin calls
 * too (defence in depth); its refusal also answers 403.
 */
import type { ActionFailure, RequestEvent } from '@sveltejs/kit';
import { isJobError } from '../../errors.ts';
import { fromPostgresError } from '../../internal/map-sql-error.ts';
import { invalid } from '../../store/input-checks.ts';
import type { JobStore } from '../../store/job-store.ts';
import {
	dashboardJob,
	type DashboardActionName,
	type DashboardJob,
	type DashboardActionResult,
	type DashboardFilter,
	type JobsDashboardData,
} from './dashboard-data.ts';
import { matchesFilter, readFilter, readJobId, readKind, readRateLimit } from './dashboard-forms.ts';

/**
 * What the dashboard calls on a store: a `JobStore` acting as the visitor.
 */
export type AdminDashboardStore = Pick<
	JobStore,
	| 'listRecent'
	| 'get'
	| 'cancel'
	| 'adminKinds'
	| 'timeline'
	| 'tryAgain'
	| 'replay'
	| 'cancelMany'
	| 'pauseKind'
	| 'resumeKind'
	| 'setRateLimit'
	| 'deleteFinished'
>;

/** The part of a SvelteKit RequestEvent the dashboard reads. */
interface DashboardEvent {
	url: URL;
	request: Request;
}

const ALL_ACTIONS: readonly DashboardActionName[] = [
	'cancel',
	'tryAgain',
	'replay',
	'cancelMany',
	'pause',
	'resume',
	'setRateLimit',
	'clearRateLimit',
	'deleteFinished',
];

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
	/** The actions offered; the others are neither shown nor accepted. @default all of them */
	actions?: readonly DashboardActionName[];
	/** Failed jobs listed at most. @default 50 */
	failedLimit?: number;
};

/** An action's refusal of bad input (400), an unknown job (404) or one past acting on (409). */
type DashboardFailure = ActionFailure<Extract<DashboardActionResult, { ok: false }>>;

/**
 * The `load` and `actions` the app's +page.server.ts exports.
 */
export interface AdminDashboard<E extends DashboardEvent = RequestEvent> {
	load(event: E): Promise<JobsDashboardData>;
	actions: Record<DashboardActionName, (event: E) => Promise<DashboardActionResult | DashboardFailure>>;
}

const kit = async () => await import('@sveltejs/kit');
/** Failed jobs read per page, and at most per load, to find those the filter matches. */
const FAILED_PAGE = 200;
const FAILED_SCAN = 2000;
const date = (iso: string | undefined) => (iso === undefined ? undefined : new Date(iso));

async function forbidden(): Promise<never> {
	return (await kit()).error(403, { message: 'Admins only' } as App.Error);
}

/** The database refused (not an admin by its own check): 403 too, never a 500. */
async function refuse(e: unknown): Promise<never> {
	if (isJobError(fromPostgresError(e), 'permission_denied')) return await forbidden();
	throw e;
}

/** Failed jobs the filter matches, newest first, at most `limit` of the newest FAILED_SCAN failures. */
async function failedJobs(store: AdminDashboardStore, filter: DashboardFilter, limit: number) {
	// Asked by kind, newest first; error code and time are matched here, a page at a time.
	const matching: DashboardJob[] = [];
	let cursor: string | null = null;
	let scanned = 0;
	do {
		const page = await store.listRecent({ kind: filter.kind, status: 'failed', limit: FAILED_PAGE, cursor });
		scanned += page.jobs.length;
		cursor = page.nextCursor;
		for (const job of page.jobs.map(dashboardJob)) if (matchesFilter(job, filter)) matching.push(job);
	} while (cursor !== null && matching.length <= limit && scanned < FAILED_SCAN);
	// More than shown matched, or the scan stopped before the oldest failure: either way, narrow the filter.
	return { failed: matching.slice(0, limit), moreFailed: matching.length > limit || cursor !== null };
}

/** The job the address names (`?job=`), with its timeline; null for none, a malformed id or a job not found. */
async function selected(store: AdminDashboardStore, id: string | null): Promise<JobsDashboardData['selected']> {
	if (id === null) return null;
	let jobId: string;
	try {
		jobId = readJobId(new URLSearchParams({ job: id }), 'job');
	} catch {
		return null; // a hand-edited address shows the dashboard, not an error
	}
	try {
		const [job, timeline] = await Promise.all([store.get(jobId), store.timeline(jobId)]);
		return { job: dashboardJob(job), timeline };
	} catch (e) {
		if (isJobError(fromPostgresError(e), 'job_not_found')) return null;
		throw e;
	}
}

/** The HTTP status of an action's refusal the page shows (bad input, unknown job, past acting on); null for any other. */
function refusalStatus(e: unknown): 400 | 404 | 409 | null {
	if (isJobError(e, 'invalid_input')) return 400;
	if (isJobError(e, 'job_not_found')) return 404;
	if (isJobError(e, 'job_already_finished') || isJobError(e, 'not_retryable')) return 409;
	return null;
}

type Done = Omit<Extract<DashboardActionResult, { ok: true }>, 'action' | 'ok'>;

/** What each action does with the admitted store and the posted form. */
const RUN: Record<DashboardActionName, (store: AdminDashboardStore, form: FormData) => Promise<Done>> = {
	cancel: async (store, form) => {
		const id = readJobId(form);
		return { jobId: id, count: (await store.cancel(id)) ? 1 : 0 };
	},
	tryAgain: async (store, form) => {
		const id = readJobId(form);
		return { jobId: id, newJobId: (await store.tryAgain(id)).id, count: 1 };
	},
	replay: async (store, form) => {
		const f = readFilter(form);
		const made = await store.replay({ kind: f.kind, errorCode: f.errorCode, from: date(f.from), to: date(f.to) });
		return { count: made.length };
	},
	cancelMany: async (store, form) => {
		const kind = readKind(form);
		return { kind, count: await store.cancelMany({ kind, statuses: ['queued'] }) };
	},
	pause: async (store, form) => {
		const kind = readKind(form);
		return { kind, count: (await store.pauseKind(kind)) ? 1 : 0 };
	},
	resume: async (store, form) => {
		const kind = readKind(form);
		return { kind, count: (await store.resumeKind(kind)) ? 1 : 0 };
	},
	setRateLimit: async (store, form) => {
		const kind = readKind(form);
		await store.setRateLimit(kind, readRateLimit(form));
		return { kind, count: 1 };
	},
	clearRateLimit: async (store, form) => {
		const kind = readKind(form);
		await store.setRateLimit(kind, null);
		return { kind, count: 1 };
	},
	deleteFinished: async (store, form) => {
		const f = readFilter(form);
		if (f.to === undefined) throw invalid('to', 'to is required: finished jobs are deleted up to a time');
		return { kind: f.kind, count: await store.deleteFinished({ kind: f.kind, endedBefore: new Date(f.to) }) };
	},
};

/** Runs one action; a refusal the page shows comes back as a `fail`, anything else as the load's refusal. */
async function runAction(
	name: DashboardActionName,
	store: AdminDashboardStore,
	form: FormData,
): Promise<DashboardActionResult | DashboardFailure> {
	try {
		return { action: name, ok: true, ...(await RUN[name](store, form)) };
	} catch (raw) {
		const e = fromPostgresError(raw);
		const status = refusalStatus(e);
		if (status === null || !isJobError(e)) return await refuse(raw);
		const field = (e as { field?: unknown }).field;
		return (await kit()).fail(status, {
			action: name,
			ok: false as const,
			code: e.code,
			message: e.message,
			...(typeof field === 'string' ? { field } : {}),
		});
	}
}

/**
 * The admin dashboard's server half: `load` reads the queues by kind, the
 * failed jobs (filtered by kind, error code and time), and the job opened with
 * `?job=<id>` with its timeline; `actions` cancel, try again and replay (one,
 * or in bulk by filter), pause and resume a kind, cancel a kind's unfinished
 * jobs, set or clear a kind's rate limit, and delete finished jobs. Every one asks `isAdmin(event)` first and
 * answers 403 when it says no (so does a database refusal). Actions answer
 * `{ action, ok, count }`, or `fail(400, { field, message })` for bad input,
 * for the page's live region; they work as plain form posts.
 *
 * @example
 * // src/routes/admin/jobs/+page.server.ts
 * import { createAdminDashboard } from 'supabase-jobs/kit';
 * const dashboard = createAdminDashboard({
 *   getStore: ({ locals }) => new JobStore(supabaseAdapter(locals.supabase)),
 *   isAdmin: async ({ locals }) => (await locals.supabase.auth.getUser()).data.user?.app_metadata.role === 'admin',
 * });
 * export const load = dashboard.load;
 * export const actions = dashboard.actions;
 */
export function createAdminDashboard<E extends DashboardEvent = RequestEvent>(
	options: AdminDashboardOptions<E>,
): AdminDashboard<E> {
	const failedLimit = options.failedLimit ?? 50;
	const offered = ALL_ACTIONS.filter((a) => !options.actions || options.actions.includes(a));

	async function admitted(event: E): Promise<AdminDashboardStore> {
		if (!(await options.isAdmin(event))) return await forbidden();
		return options.store ?? (await options.getStore!(event));
	}

	async function load(event: E): Promise<JobsDashboardData> {
		const store = await admitted(event);
		let filter: DashboardFilter;
		try {
			filter = readFilter(event.url.searchParams);
		} catch {
			filter = {}; // likewise: everything listed rather than a failed page
		}
		try {
			const [kinds, failed, open] = await Promise.all([
				store.adminKinds(),
				failedJobs(store, filter, failedLimit),
				selected(store, event.url.searchParams.get('job')),
			]);
			return { kinds, ...failed, filter, selected: open, actions: offered, generatedAt: new Date().toISOString() };
		} catch (e) {
			return await refuse(e);
		}
	}

	const action =
		(name: DashboardActionName) =>
		async (event: E): Promise<DashboardActionResult | DashboardFailure> => {
			const store = await admitted(event);
			if (!offered.includes(name)) return (await kit()).error(404, { message: 'Not offered' } as App.Error);
			return await runAction(name, store, await event.request.formData());
		};
	const actions = Object.fromEntries(ALL_ACTIONS.map((name) => [name, action(name)])) as AdminDashboard<E>['actions'];

	return { load, actions };
}
