/**
 * The SvelteKit boundary: the store throws JobErrors (it runs in workers too,
 * where there is no HTTP status to answer with); a route translates them here.
 * Kept out of the main entry point so workers never load @sveltejs/kit.
 */
import { fromPostgresError } from './internal/map-sql-error.ts';
import { isJobError, type JobError } from './errors.ts';

// Loaded, not imported: @sveltejs/kit is an optional peer, and this entry must
// still import (httpStatusOf works anywhere) in a project without it. Only
// toHttpError needs Kit's own `error`: its HttpError is what Kit recognises.
const kit: typeof import('@sveltejs/kit') | null = await import('@sveltejs/kit').catch(() => null);

/**
 * The HTTP status a user-facing JobError becomes, or null for anything that
 * should stay a 500.
 *
 * @example
 * return json({ error: e.message }, { status: httpStatusOf(e) ?? 500 });
 */
export function httpStatusOf(raw: unknown): 400 | 403 | 404 | 409 | 429 | null {
	const e = fromPostgresError(raw);
	if (isJobError(e, 'job_not_found')) return 404;
	if (isJobError(e, 'job_already_finished')) return 409; // includes JobCancelledError
	if (isJobError(e, 'invalid_input')) return 400;
	if (isJobError(e, 'permission_denied')) return 403;
	if (isJobError(e, 'quota_exceeded')) return 429;
	return null;
}

/**
 * Throws SvelteKit's `error(status, { message, code })` for a job error:
 * not found -> 404, already finished or cancelled -> 409, invalid input -> 400
 * (with `field`), permission -> 403, quota exceeded -> 429 (with `quota`, the
 * limit reached). Raw database errors (postgres.js or PostgREST) are translated
 * first. Anything else (JobNotRunningError, IllegalTransitionError,
 * StaleAfterRequiredError, UnknownJobTableError: a worker's or a developer's
 * mistake, not the user's) is rethrown unchanged, so a bug stays a 500 instead
 * of becoming a polite 4xx.
 *
 * @example
 * // src/routes/jobs/[id]/+page.server.ts
 * export async function load({ params }) {
 *   try {
 *     return { job: await store.get(params.id) };
 *   } catch (e) {
 *     toHttpError(e);
 *   }
 * }
 */
export function toHttpError(e: unknown): never {
	const mapped = fromPostgresError(e);
	const status = httpStatusOf(mapped);
	if (status === null || !isJobError(mapped)) throw e;
	const body: { message: string; code: string; field?: string; quota?: string } = {
		message: mapped.message,
		code: mapped.code,
	};
	const { field, quota } = mapped as JobError & { field?: unknown; quota?: unknown };
	if (typeof field === 'string') body.field = field;
	if (typeof quota === 'string') body.quota = quota;
	if (!kit) throw new Error('supabase-jobs/kit: toHttpError needs @sveltejs/kit (npm i @sveltejs/kit)', { cause: e });
	// The cast lets projects whose App.Error declares more fields still compile.
	return kit.error(status, body as unknown as App.Error);
}

export {
	createAdminDashboard,
	type AdminDashboard,
	type AdminDashboardOptions,
	type AdminDashboardStore,
} from './svelte/dashboard/admin-route.ts';
export type {
	DashboardActionName,
	DashboardActionResult,
	DashboardFilter,
	DashboardJob,
	JobsDashboardData,
} from './svelte/dashboard/dashboard-data.ts';
