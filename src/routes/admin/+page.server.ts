import { error } from '@sveltejs/kit';
import { JobStore, supabaseAdapter } from 'supabase-jobs';
import { createAdminDashboard } from 'supabase-jobs/kit';
import { NotAdminError, readAdminOverview } from '../../demo/app/admin-overview.server.ts';
import { clientFor, isAdminSession } from '../../demo/app/session.server.ts';
import type { Actions, PageServerLoad } from './$types.js';

/**
 * The admin dashboard, mounted here behind the demo's own admin check (the
 * visitor's verified token says app_metadata.role = 'admin'). Its store acts
 * as the visitor, so the database refuses a non-admin's admin calls too.
 */
const dashboard = createAdminDashboard({
	getStore: ({ locals }) => new JobStore(supabaseAdapter(clientFor(locals.config, locals.session))),
	isAdmin: ({ locals }) => isAdminSession(locals.config, locals.session),
});

/**
 * The dashboard, then the operator views, read as the visitor: the database
 * decides again (jobs_admin_overview refuses anyone else), and the page answers 403 then.
 */
export const load: PageServerLoad = async (event) => {
	const jobs = await dashboard.load(event);
	try {
		return { jobs, overview: await readAdminOverview(clientFor(event.locals.config, event.locals.session)) };
	} catch (e) {
		if (e instanceof NotAdminError) error(403, 'Admins only');
		throw e;
	}
};

export const actions = dashboard.actions satisfies Actions;
