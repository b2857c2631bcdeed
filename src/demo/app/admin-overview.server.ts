/**
 * What the demo's /admin page reads: public.jobs_admin_overview() as the
 * visitor (migration 20261202300000_admin_overview.sql). The database decides
 * who is an admin (supabase_jobs.is_admin(): app_metadata.role = 'admin' in
 * the JWT) and refuses anyone else with 42501, which PostgREST answers 403.
 */
import type { SupabaseClient } from '@supabase/supabase-js';
import type { JobsDatabase } from 'supabase-jobs';
import type { AdminOverview } from './admin-overview.ts';

/** The visitor is not an admin: the database said so (42501). */
export class NotAdminError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'NotAdminError';
	}
}

/**
 * Reads the overview as the client's user.
 *
 * @example
 * const overview = await readAdminOverview(clientFor(locals.config, locals.session));
 */
export async function readAdminOverview(client: SupabaseClient): Promise<AdminOverview> {
	const { data, error } = await (client as unknown as SupabaseClient<JobsDatabase>).rpc('jobs_admin_overview');
	if (error) {
		if (error.code === '42501') throw new NotAdminError(error.message);
		throw new Error(`jobs_admin_overview failed: ${error.message}`);
	}
	return data as unknown as AdminOverview;
}
