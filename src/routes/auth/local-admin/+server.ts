/**
 * Demo-only, local stack only: "sign in as admin". Makes the visitor an admin
 * (app_metadata.role = 'admin' on their user, a token that says so) and opens
 * /admin. Anywhere else (a hosted project) it does not exist: 404. On a hosted
 * project an admin is made with the service role (Auth admin API or the dashboard).
 */
import { error, redirect } from '@sveltejs/kit';
import { offersLocalAdmin, setSessionCookie, signInAsLocalAdmin } from '../../../demo/app/session.server.ts';
import type { RequestHandler } from './$types.js';

export const POST: RequestHandler = async ({ locals, cookies }) => {
	if (!offersLocalAdmin(locals.config)) error(404, 'Not found');
	setSessionCookie(cookies, await signInAsLocalAdmin(locals.config, locals.session));
	redirect(303, '/admin');
};
