/**
 * The tracing module under the real Deno, resolved as the edge function
 * resolves its imports (functions/jobs-worker/deno.json): it finds
 * `@opentelemetry/api` when the project has it, and when the package cannot
 * be resolved the work runs the same, with no import failure.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

async function probe(env: Record<string, string> = {}): Promise<{ loaded: boolean; value: number }> {
	const { stdout } = await run(
		resolve('node_modules/.bin/deno'),
		['run', '-A', '--config', 'functions/jobs-worker/deno.json', 'test/worker/fixtures/tracing-probe.ts'],
		{ cwd: resolve('.'), env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', ...env } },
	);
	return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describe('tracing under Deno', () => {
	it('loads @opentelemetry/api when the project has it', async () => {
		expect(await probe()).toEqual({ loaded: true, value: 42 });
	}, 60_000);

	it('without the package: no import failure, the work runs untraced', async () => {
		expect(await probe({ PROBE_ABSENT: '1' })).toEqual({ loaded: false, value: 42 });
	}, 60_000);
});
