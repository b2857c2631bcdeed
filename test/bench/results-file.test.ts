/**
 * bench/results.md is the bench's output: `npm run bench` writes the whole
 * file. Checked here on the file itself: it is what the writer gives back, it
 * names every throughput target with its "N.NNx graphile-worker" ratio and the
 * configuration measured, and docs/benchmarks.md points to it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULTS_FILE, formatResults } from '../../bench/results-page.ts';
import { projectRoot } from '../../src/local/postgres/migrate.ts';

const file = join(projectRoot, RESULTS_FILE);

describe('bench/results.md, written by the bench', () => {
	it('the writer given the last run gives the file back unchanged', async () => {
		const text = await readFile(file, 'utf8');
		expect(await formatResults(file, text)).toBe(text);
	});

	it('names each target against graphile-worker with its ratio and the configuration measured', async () => {
		const text = await readFile(file, 'utf8');
		const targets = text.slice(text.indexOf('## Targets'), text.indexOf('## How each system was driven'));
		for (const path of ['enqueue one at a time', 'enqueue batched', 'per-job path', 'enqueue -> handler start'])
			expect(targets).toMatch(new RegExp(`- ${path}[^\\n]*\\d+\\.\\d\\dx graphile-worker`));
		expect(targets).toMatch(/`runWorkers` defaults: \d+\.\d\dx graphile-worker fastest/);
		expect(text).toContain('graphile-worker fastest: configuration:');
		expect(text).toMatch(/\d+ of \d+ targets hold in this run\./);
	});

	it('refuses results that are not the bench output', async () => {
		await expect(formatResults(file, '# Benchmarks\n')).rejects.toThrow(/supabase-jobs benchmarks/);
	});

	it('docs/benchmarks.md links to it', async () => {
		expect(await readFile(join(projectRoot, 'docs/benchmarks.md'), 'utf8')).toContain('(../bench/results.md)');
	});
});
