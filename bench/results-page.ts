/**
 * Where `npm run bench` writes: bench/results.md, the whole file, as the last
 * run printed it (its tables, each target with its ratio, how each system was
 * driven), formatted as the repository's prettier would, so it passes
 * `npm run lint` as written. docs/benchmarks.md keeps the prose and links here.
 */
import { writeFile } from 'node:fs/promises';
import * as prettier from 'prettier';

/** The file the bench writes its last run into, from the repository root. */
export const RESULTS_FILE = 'bench/results.md';

/** `results` (the bench's markdown, "# supabase-jobs benchmarks" first) as the results file holds it. */
export async function formatResults(file: string, results: string): Promise<string> {
	if (!results.startsWith('# supabase-jobs benchmarks\n'))
		throw new Error(`${RESULTS_FILE} starts with "# supabase-jobs benchmarks"`);
	return prettier.format(results, { ...(await prettier.resolveConfig(file)), filepath: file });
}

/** Rewrites the results file at `file` with `results`. */
export async function writeResults(file: string, results: string): Promise<void> {
	await writeFile(file, await formatResults(file, results));
}
