/**
 * Demo-only: "start over as a new visitor". Signs in anonymously again (a new
 * user, who sees none of the previous one's jobs) and goes back to the
 * dashboard. On a real project: `supabase.auth.signInAnonymously()`.
 */
import { redirect } from '@sveltejs/kit';
import { setSessionCookie, signInAnonymously } from '../../../demo/app/session.server.ts';
import type { RequestHandler } from './$types.js';

export const POST: RequestHandler = async ({ locals, cookies }) => {
	setSessionCookie(cookies, await signInAnonymously(locals.config));
	redirect(303, '/');
};
