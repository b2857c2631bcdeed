import { error } from '@sveltejs/kit';
import { clientFor } from '../../../demo/app/session.server.ts';
import type { PageServerLoad } from './$types.js';

interface AnalysisRow {
	id: string;
	job_id: string | null;
	filename: string;
	stats: {
		characters: number;
		words: number;
		sentences: number;
		readingSeconds: number;
		chunks: number;
		pages: number | null;
		format: string;
		language: string | null;
	};
	summary: string;
	keywords: string[];
	created_at: string;
}

/** The analysis a document.analyse job produced, read as the visitor (RLS: own rows only). */
export const load: PageServerLoad = async ({ params, locals }) => {
	if (!/^[0-9a-f-]{36}$/i.test(params.id)) error(404, 'Not found');
	const { data, error: e } = await clientFor(locals.config, locals.session)
		.from('document_analyses')
		.select('id, job_id, filename, stats, summary, keywords, created_at')
		.eq('id', params.id)
		.maybeSingle();
	if (e) throw new Error(e.message);
	if (!data) error(404, 'Not found');
	return { analysis: data as AnalysisRow };
};
