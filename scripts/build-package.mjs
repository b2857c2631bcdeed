#!/usr/bin/env node
// Builds what `npm pack` ships, one entry per audience (package.json "exports"):
// src/lib compiled by @sveltejs/package into
// dist/ (ESM JavaScript, .d.ts for every module, components as preprocessed
// .svelte files with their .svelte.d.ts). Run by `prepack`; the repository's
// own demo, routes and worker function import these entries by name, resolved
// to their sources (svelte.config.js kit.alias, functions/jobs-worker/deno.json).
//
// One post-step over the declarations (dist/**/*.d.ts):
// - the sources import each other with `.ts` extensions. The compiler rewrites
//   those in the emitted JavaScript (rewriteRelativeImportExtensions) but never
//   in declarations, so every relative `.ts` specifier becomes `.js`;
// - `./components/X.svelte` becomes `./components/X.svelte.js`: under
//   moduleResolution node16/nodenext TypeScript looks for `X.d.svelte.ts` (and
//   wants allowArbitraryExtensions) for the former, while the latter resolves
//   to the `X.svelte.d.ts` svelte-package writes, as it does under bundler.
//   Declarations only: the JavaScript keeps importing the .svelte file.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const bin = (name) => join(root, 'node_modules/.bin', name);

/** `from './x.ts'`, `import('../y.svelte.ts')`, `import './z.ts'`: relative specifiers only. */
const RELATIVE_TS = /((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g;
/** `from './components/X.svelte'`: relative specifiers only. */
const RELATIVE_SVELTE = /((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*?\.svelte)\2/g;

async function* walk(dir) {
	for (const entry of await readdir(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) yield* walk(path);
		else yield path;
	}
}

// svelte-package reads tsconfig.json, which extends the generated .svelte-kit/tsconfig.json.
execFileSync(bin('svelte-kit'), ['sync'], { cwd: root, stdio: 'inherit' });
execFileSync(bin('svelte-package'), ['-i', 'src/lib', '-o', 'dist'], { cwd: root, stdio: 'inherit' });

const leftovers = [];
for await (const file of walk(dist)) {
	if (!file.endsWith('.d.ts')) continue;
	const text = await readFile(file, 'utf8');
	const rewritten = text.replace(RELATIVE_TS, '$1$2$3.js$2').replace(RELATIVE_SVELTE, '$1$2$3.js$2');
	if (rewritten !== text) await writeFile(file, rewritten);
	// Anything still naming a .ts module would not resolve for a consumer.
	if (/(['"])\.{1,2}\/[^'"]*\.ts\1/.test(rewritten.replace(/^\s*\*.*$/gm, ''))) leftovers.push(relative(root, file));
}
if (leftovers.length) {
	console.error(`build-package: .ts specifiers left in\n  ${leftovers.join('\n  ')}`);
	process.exit(1);
}

// Every entry package.json "exports" names (supabase-jobs, /worker, /node, /svelte, /kit, /adapter) was built.
const { exports: entries } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const missing = [];
for (const [entry, target] of Object.entries(entries)) {
	for (const path of typeof target === 'string' ? [target] : Object.values(target)) {
		if (path.startsWith('./dist/') && !existsSync(join(root, path))) missing.push(`${entry}: ${path}`);
	}
}
if (missing.length) {
	console.error(`build-package: package.json exports files that were not built\n  ${missing.join('\n  ')}`);
	process.exit(1);
}
console.log('build-package: dist/ ready');
