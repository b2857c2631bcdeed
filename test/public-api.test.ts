/**
 * The public surface: everything a user imports comes through src/lib/index.ts
 * (and the deliberate subpaths), and the main entry never drags in Svelte or Kit,
 * so Deno and Node workers can import it.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as api from '../src/lib/index.ts';

describe('public API', () => {
	it('exports the seed\'s whole vocabulary', () => {
		for (const name of [
			'JobStore', 'JobStatus', 'TERMINAL_JOB_STATUSES', 'runCancellable', 'PhasePlan', 'ProgressTracker', 'StageMap', 'StageStatus', 'StageStore',
			'JobNotFoundError', 'JobAlreadyFinishedError', 'JobCancelledError', 'StageInterruptedError', 'TimeoutError', 'postgresAdapter', 'supabaseAdapter', 'defineJobKind',
		]) {
			expect(api, name).toHaveProperty(name);
		}
		expect(new api.JobCancelledError('x')).toBeInstanceOf(api.JobAlreadyFinishedError);
	});

	it('the main entry imports neither svelte nor @sveltejs/kit (transitively)', async () => {
		const seen = new Set<string>();
		const visit = async (file: string) => {
			if (seen.has(file)) return;
			seen.add(file);
			const text = await readFile(file, 'utf8');
			for (const m of text.matchAll(/from '([^']+)'/g)) {
				const spec = m[1]!;
				expect(spec.startsWith('svelte') || spec.startsWith('@sveltejs/'), `${file} imports ${spec}`).toBe(false);
				if (spec.startsWith('.')) await visit(new URL(spec, `file://${file}`).pathname);
			}
		};
		await visit(new URL('../src/lib/index.ts', import.meta.url).pathname);
		expect(seen.size).toBeGreaterThan(10);
	});
});
