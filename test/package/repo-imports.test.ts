/**
 * Inside the repository the package imports itself as its users do: the demo,
 * the routes and the worker function name `supabase-jobs` and its entries,
 * never a module under src/lib. The names resolve to the sources of the files
 * package.json `exports` names, through kit.alias (TypeScript and Vite), the
 * tests' Vite config and the function's deno.json import map, all alike.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageEntryAliases } from '../../svelte.config.js';

const ROOT = join(import.meta.dirname, '../..');
const IMPORTERS = ['src/demo', 'src/routes', 'functions/jobs-worker'];
/** `from '…'`, `import('…')`, `import '…'`: the specifier. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1/gm;

async function* sources(dir: string): AsyncGenerator<string> {
	for (const entry of await readdir(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) yield* sources(path);
		else if (/\.(ts|js|svelte)$/.test(entry.name)) yield path;
	}
}

/** The specifiers of `text` that reach into src/lib from `file`, by path or by `$lib`. */
export function deepImports(file: string, text: string): string[] {
	return [...text.matchAll(SPECIFIER)]
		.map((m) => m[2]!)
		.filter((spec) => {
			if (spec === '$lib' || spec.startsWith('$lib/')) return true;
			if (!spec.startsWith('.')) return false;
			const target = relative(ROOT, join(file, '..', spec));
			return target === 'src/lib' || target.startsWith('src/lib/');
		});
}

describe('the repository imports supabase-jobs as users do', () => {
	it('no file of the demo, the routes or the worker function imports a path into src/lib', async () => {
		const found: string[] = [];
		let files = 0;
		for (const dir of IMPORTERS) {
			for await (const path of sources(join(ROOT, dir))) {
				files++;
				const file = relative(ROOT, path);
				for (const spec of deepImports(file, await readFile(path, 'utf8'))) found.push(`${file}: ${spec}`);
			}
		}
		expect(files).toBeGreaterThan(10);
		expect(found).toEqual([]);
	});

	it('the check sees a relative import into src/lib, $lib, and lets entries and neighbours pass', () => {
		const text = [
			"import { JobStore } from '../../lib/store/job-store.ts';",
			"import { x } from '$lib/kit.ts';",
			"const m = await import('../../lib/index.ts');",
			"import { JobStore as S } from 'supabase-jobs';",
			"import { sumStats } from '../analysis/stats.ts';",
		].join('\n');
		expect(deepImports('src/demo/app/a.ts', text)).toEqual([
			'../../lib/store/job-store.ts',
			'$lib/kit.ts',
			'../../lib/index.ts',
		]);
	});

	it('each entry package.json exports names resolves to its source, in kit.alias and in deno.json alike', async () => {
		const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
		const entries = Object.keys(pkg.exports)
			.filter((e) => e !== './package.json')
			.map((e) => `supabase-jobs${e.slice(1)}`);
		const aliases = packageEntryAliases();
		expect(Object.keys(aliases).sort()).toEqual(entries.sort());
		expect(aliases['supabase-jobs/worker']).toBe('src/lib/worker.ts');
		expect(aliases['supabase-jobs/svelte']).toBe('src/lib/svelte/index.ts');
		const deno = JSON.parse(await readFile(join(ROOT, 'functions/jobs-worker/deno.json'), 'utf8'));
		expect(deno.imports).toEqual(Object.fromEntries(Object.entries(aliases).map(([k, v]) => [k, `../../${v}`])));
	});

	it('the tests resolve supabase-jobs to the same modules as the sources', async () => {
		const [entry, source] = await Promise.all([import('supabase-jobs'), import('../../src/lib/index.ts')]);
		expect(entry.JobStore).toBe(source.JobStore);
		const [worker, handler] = await Promise.all([
			import('supabase-jobs/worker'),
			import('../../src/lib/worker/job-handler.ts'),
		]);
		expect(worker.defineJobHandler).toBe(handler.defineJobHandler);
	});
});
