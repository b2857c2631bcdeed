/**
 * Where `npm run bench` writes: the results part of docs/benchmarks.md, between
 * its `<!-- bench:results ... -->` markers. The page's own prose (how to run the
 * bench, what each section measures, where the time goes) is kept; the results
 * go one heading level down, under "## The last run".
 */
import { readFile, writeFile } from 'node:fs/promises';
import * as prettier from 'prettier';

/** The docs page the bench writes its results into, from the repository root. */
export const RESULTS_PAGE = 'docs/benchmarks.md';
const BEGIN = '<!-- bench:results';
const END = '<!-- /bench:results -->';

/** `page` with its results part replaced by `results` (the bench's markdown, "# supabase-jobs benchmarks" first). */
export function withResults(page: string, results: string): string {
	const start = page.indexOf(BEGIN);
	const end = page.indexOf(END);
	if (start < 0 || end < start) throw new Error(`${RESULTS_PAGE} lacks its ${BEGIN} ... ${END} markers`);
	const demoted = results
		.trim()
		.replace(/^(#{1,5}) /gm, '#$1 ')
		.replace(/^## supabase-jobs benchmarks$/m, '## The last run');
	const afterBegin = page.indexOf('\n', start) + 1;
	return `${page.slice(0, afterBegin)}\n${demoted}\n\n${page.slice(end)}`;
}

/** Rewrites the page at `file`, formatted as the repository's prettier would (aligned tables), so it passes `npm run lint` as written. */
export async function writeResultsPage(file: string, results: string): Promise<void> {
	const text = withResults(await readFile(file, 'utf8'), results);
	await writeFile(file, await prettier.format(text, { ...(await prettier.resolveConfig(file)), filepath: file }));
}
