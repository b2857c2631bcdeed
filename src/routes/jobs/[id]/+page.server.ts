import { error } from '@sveltejs/kit';
import { JobStore, isJobError, supabaseAdapter } from 'supabase-jobs';
import { clientFor } from '../../../demo/app/session.server.ts';
import type { PageServerLoad } from './$types.js';

/**
 * The job as the visitor may see it (RLS: another user's job is "not found"),
 * so the page shows its state at once, even when it finished long ago.
 */
export const load: PageServerLoad = async ({ params, locals }) => {
	const store = new JobStore(supabaseAdapter(clientFor(locals.config, locals.session)));
	try {
		const job = await store.get(params.id);
		return { job: { ...job, payload: null } };
	} catch (e) {
		if (isJobError(e, 'job_not_found') || isJobError(e, 'invalid_input')) error(404, 'Job not found');
		throw e;
	}
};
