import { error } from '@sveltejs/kit';
import { NotAdminError, readAdminOverview } from '../../demo/app/admin-overview.server.ts';
import { clientFor } from '../../demo/app/session.server.ts';
import type { PageServerLoad } from './$types.js';

/**
 * The operator views, read as the visitor: the database decides whether they
 * are an admin (jobs_admin_overview refuses anyone else), and the page answers 403 then.
 */
export const load: PageServerLoad = async ({ locals }) => {
	try {
		return { overview: await readAdminOverview(clientFor(locals.config, locals.session)) };
	} catch (e) {
		if (e instanceof NotAdminError) error(403, 'Admins only');
		throw e;
	}
};
