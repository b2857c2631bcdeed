/**
 * bench/results.md is the bench's output: `npm run bench` writes the whole
 * file. Checked here on the file itself: it is what the writer gives back, it
 * names every throughput target with its "N.NNx graphile-worker" ratio and the
 * configuration measured, and docs/benchmarks.md points to it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOOR, OURS, PATHS, productionSection, type Measured, type RegimeResult } from '../../bench/production.ts';
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

	it('the production-durability section prints, per path, jobs/s, server CPU and WAL per job in both regimes, and judges the targets on production', async () => {
		const regime = (durable: boolean, scale: number): RegimeResult => {
			const m = (rate: number, cpuMs: number, walBytes: number): Measured => ({ rate: rate * scale, cpuMs, walBytes });
			const peers = {
				'enqueue batched': [
					['graphile-worker', m(3000, 0.04, 500)],
					['pg-boss', m(5000, 0.07, 580)],
				],
				'runWorkers drain': [
					['graphile-worker', m(2000, 0.5, 600)],
					['graphile-worker fastest', m(4000, 0.3, 900)],
				],
				'per-job path': [['graphile-worker', m(2000, 0.5, 700)]],
			} as const;
			return {
				durable,
				settings: durable ? 'fsync on, full_page_writes on, synchronous_commit on' : 'fsync off',
				paths: new Map(
					PATHS.map((path) => [
						path,
						new Map<string, Measured>([[OURS, m(3100, 0.6, 1500)], ...peers[path], [FLOOR, m(3500, 0.5, 1400)]]),
					]),
				),
				messages: { perJob: 2, payloadBytes: 300, rowBytes: 400 },
				notes: ['graphile-worker fastest: configuration: localQueue'],
			};
		};
		const { lines, targets } = productionSection(regime(true, 1), regime(false, 3));
		const text = lines.join('\n');
		for (const path of PATHS) expect(text).toContain(`### ${path}`);
		expect(text).toContain('| participant | jobs/s | server CPU ms/job | WAL bytes/job |');
		expect(text).toMatch(
			/\| supabase-jobs \| 3,100 \| 0\.600 \| 1,500 \| 1\.03x \| 9,300 \| 0\.600 \| 1,500 \| 1\.03x \|/,
		);
		expect(text).toContain('300 bytes of payload JSON');
		expect(targets).toContain('production: per-job path server CPU 0.600 ms/job (target ≤ 0.65 ms) PASS');
		expect(targets.find((t) => t.startsWith('production: per-job path 1.55x'))).toMatch(
			/fast regime 1\.55x, no target\) PASS$/,
		);
		expect(targets.find((t) => t.startsWith('production: `runWorkers` defaults'))).toMatch(
			/0\.78x graphile-worker fastest.* FAIL$/,
		);
		await expect(formatResults(file, ['# supabase-jobs benchmarks', '', ...lines].join('\n'))).resolves.toContain(
			'## Production durability',
		);
	});

	it('refuses results that are not the bench output', async () => {
		await expect(formatResults(file, '# Benchmarks\n')).rejects.toThrow(/supabase-jobs benchmarks/);
	});

	it('docs/benchmarks.md links to it', async () => {
		expect(await readFile(join(projectRoot, 'docs/benchmarks.md'), 'utf8')).toContain('(../bench/results.md)');
	});
});
