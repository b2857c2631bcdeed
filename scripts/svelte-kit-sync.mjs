// `svelte-kit sync` when it has not run yet: tsconfig.json extends the
// .svelte-kit/tsconfig.json it writes, and Vite (so vitest), tsx and
// svelte-check all stop at "Failed to load tsconfig" without it. npm runs it
// in the `dependencies` script on `npm ci`; this covers a clone installed with
// --ignore-scripts and a .svelte-kit folder deleted since. Plain Node, no
// dependency of its own: it runs before anything TypeScript loads.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs `svelte-kit sync` in the project root unless its tsconfig is already there. */
export function ensureSvelteKitSync() {
	if (existsSync(join(root, '.svelte-kit/tsconfig.json'))) return;
	execFileSync(process.execPath, [join(root, 'node_modules/@sveltejs/kit/svelte-kit.js'), 'sync'], {
		cwd: root,
		stdio: 'inherit',
	});
}

if (process.argv[1] === fileURLToPath(import.meta.url)) ensureSvelteKitSync();
