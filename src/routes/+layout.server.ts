import { decodeJwt } from 'jose';
import { offersLocalAdmin } from '../demo/app/session.server.ts';
import type { LayoutServerLoad } from './$types.js';

/** The browser's supabase-js needs the project URL, the public key and the visitor's token. */
export const load: LayoutServerLoad = ({ locals }) => ({
	session: {
		supabaseUrl: locals.config.supabaseUrl,
		anonKey: locals.config.anonKey,
		accessToken: locals.session.accessToken,
		userId: locals.session.userId,
	},
	locale: locals.locale,
	// Only whether to show the link to /admin: the page itself asks the database (jobs_admin_overview).
	// Only on the local stack: the admins-only page offers to make this visitor an admin.
	localAdmin: offersLocalAdmin(locals.config),
	isAdmin: (decodeJwt(locals.session.accessToken).app_metadata as { role?: unknown } | undefined)?.role === 'admin',
});
