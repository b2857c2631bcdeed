/**
 * The worker function's deno.json pins the postgres.js driver and zod at the
 * versions the project's node_modules holds (Deno, nodeModulesDir "manual",
 * runs nothing else), not at the package's own range: `npm i postgres` installs
 * the registry's latest. A version the package does not support, or a pin that
 * node_modules no longer matches, is named with its fix.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInit } from '../../bin/init.mjs';
import { FUNCTION_NPM_IMPORTS, newestAlternative, npmPin, pinDrift, satisfies } from '../../bin/npm-pins.mjs';

const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { dependencies: Record<string, string> };
const scratch: string[] = [];

afterAll(async () => {
	await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
});

/** A Supabase project whose node_modules holds these versions (each package as npm leaves its package.json). */
async function projectWith(installed: Record<string, string>): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), 'sj-pins-'));
	scratch.push(dir);
	await mkdir(join(dir, 'supabase'), { recursive: true });
	await writeFile(join(dir, 'supabase/config.toml'), 'project_id = "pins"\n');
	for (const [name, version] of Object.entries(installed)) {
		await mkdir(join(dir, 'node_modules', name), { recursive: true });
		await writeFile(join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
	}
	return dir;
}

async function initIn(dir: string): Promise<{ code: number; output: string; imports: Record<string, string> }> {
	const lines: string[] = [];
	const code = await runInit({ cwd: dir, log: (line) => lines.push(line) });
	const denoJson = JSON.parse(await readFile(join(dir, 'supabase/functions/jobs-worker/deno.json'), 'utf8'));
	return { code, output: lines.join('\n'), imports: denoJson.imports };
}

describe('the function deno.json pins what node_modules holds', () => {
	it('postgres 4 and zod as `npm i postgres zod` installs them today: pinned at those versions, nothing to warn of', async () => {
		const { code, output, imports } = await initIn(await projectWith({ postgres: '4.2.0', zod: '4.6.7' }));
		expect(code).toBe(0);
		expect(imports).toMatchObject({ postgres: 'npm:postgres@^4.2.0', zod: 'npm:zod@^4.6.7' });
		expect(output).not.toContain('! ');
	});

	it('postgres 3 installed (npm i postgres@3): the pin follows it', async () => {
		const { output, imports } = await initIn(await projectWith({ postgres: '3.4.9', zod: '4.7.0' }));
		expect(imports).toMatchObject({ postgres: 'npm:postgres@^3.4.9', zod: 'npm:zod@^4.7.0' });
		expect(output).not.toContain('! ');
	});

	it('a postgres the package does not support is pinned as installed, and init names the fix', async () => {
		const { code, output, imports } = await initIn(await projectWith({ postgres: '5.0.0', zod: '4.6.7' }));
		expect(code).toBe(0);
		expect(imports.postgres).toBe('npm:postgres@^5.0.0');
		expect(output).toContain(
			`! postgres 5.0.0 is installed, and supabase-jobs supports ${pkg.dependencies.postgres}: npm i postgres@4`,
		);
	});

	it('nothing installed: the newest range the package supports, and init says to install it', async () => {
		const { output, imports } = await initIn(await projectWith({ zod: '4.6.7' }));
		expect(imports.postgres).toBe(`npm:postgres@${newestAlternative(pkg.dependencies.postgres!)}`);
		expect(output).toContain('! postgres is not installed in this project');
		expect(output).toContain('npm i postgres');
	});

	it('upgrade names a pin of the existing deno.json that node_modules no longer matches, with the value to set, and leaves it', async () => {
		const dir = await projectWith({ postgres: '3.4.9', zod: '4.6.7' });
		await initIn(dir);
		// The user then ran `npm i postgres@latest`.
		await writeFile(
			join(dir, 'node_modules/postgres/package.json'),
			JSON.stringify({ name: 'postgres', version: '4.2.0' }),
		);
		const { output, imports } = await initIn(dir);
		expect(imports.postgres).toBe('npm:postgres@^3.4.9');
		expect(output).toContain(
			'! deno.json maps postgres to npm:postgres@^3.4.9, and node_modules has 4.2.0: set it to "npm:postgres@^4.2.0"',
		);
	});
});

describe('npm-pins', () => {
	it('every package the function imports has a range of caret alternatives in package.json, each supported version within it', () => {
		for (const name of FUNCTION_NPM_IMPORTS) {
			const range = pkg.dependencies[name]!;
			expect(satisfies(range, newestAlternative(range).slice(1))).toBe(true);
		}
		expect(satisfies('^3.4.9 || ^4.2.0', '3.4.9')).toBe(true);
		expect(satisfies('^3.4.9 || ^4.2.0', '4.9.1')).toBe(true);
		expect(satisfies('^3.4.9 || ^4.2.0', '3.4.8')).toBe(false);
		expect(satisfies('^3.4.9 || ^4.2.0', '4.1.0')).toBe(false);
		expect(satisfies('^3.4.9 || ^4.2.0', '5.0.0')).toBe(false);
		expect(satisfies('^0.4.1', '0.5.0')).toBe(false);
		expect(newestAlternative('^3.4.9 || ^4.2.0')).toBe('^4.2.0');
	});

	it('a range other than caret alternatives is refused, naming it', () => {
		expect(() => npmPin('postgres', '>=3 <5', '4.2.0')).toThrow(/>=3 <5/);
	});

	it('a deno.json entry of the user own form (a URL, no version) is left alone', () => {
		const pins = [{ name: 'postgres', installed: '4.2.0', specifier: 'npm:postgres@^4.2.0' }];
		expect(pinDrift(JSON.stringify({ imports: { postgres: 'npm:postgres' } }), pins)).toEqual([]);
		expect(pinDrift(JSON.stringify({ imports: { postgres: 'npm:postgres@4.2.0' } }), pins)).toEqual([]);
		expect(pinDrift(JSON.stringify({ imports: { postgres: 'npm:postgres@4.1.0' } }), pins)).toHaveLength(1);
	});
});
