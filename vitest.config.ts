import { svelte } from '@sveltejs/vite-plugin-svelte';
import { configDefaults, defineConfig } from 'vitest/config';
import { resolve } from 'node:path';
import { ensureSvelteKitSync } from './scripts/svelte-kit-sync.mjs';
import { packageEntryAliases } from './svelte.config.js';

// tsconfig.json extends .svelte-kit/tsconfig.json: write it before Vite reads it,
// so `npx vitest run <anything>` works on a fresh clone in any order.
ensureSvelteKitSync();

// Two projects share one run (and one closing-line reporter):
// - 'node': the database and worker tests. Test files are isolated (a database
//   each, cloned from a template), so they run in parallel; the machine has 2 cores
//   and PostgreSQL needs one of its own.
// - 'svelte': component and state-class tests (`*.svelte.test.ts`) in jsdom. They
//   need the Svelte compiler and the browser build of svelte (`mount` only exists
//   there), and no database, so no globalSetup.
// Run one with `npx vitest run --project svelte`.
const ci = process.env.CI === 'true' || process.env.CI === '1';

// `supabase-jobs/*` as in the app (svelte.config.js): each entry to its source, matched whole.
const alias = Object.entries(packageEntryAliases()).map(([name, file]) => ({
	find: new RegExp(`^${name}$`),
	replacement: resolve(import.meta.dirname, file),
}));

export default defineConfig({
	resolve: { alias },
	test: {
		maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
		testTimeout: 60_000,
		hookTimeout: 120_000,
		teardownTimeout: 30_000,
		allowOnly: !ci,
		reporters: ['default', './test/setup/closing-line-reporter.ts'],
		projects: [
			{
				extends: true,
				test: {
					name: 'node',
					include: ['test/**/*.test.ts'],
					exclude: [...configDefaults.exclude, 'test/**/*.svelte.test.ts', 'test/chaos/**'],
					globalSetup: ['test/setup/global.ts'],
					pool: 'forks',
				},
			},
			{
				extends: true,
				test: {
					name: 'chaos',
					include: ['test/chaos/**/*.test.ts'],
					globalSetup: ['test/setup/global.ts'],
					pool: 'forks',
					testTimeout: 900_000,
					hookTimeout: 300_000,
				},
			},
			{
				extends: true,
				plugins: [svelte()],
				resolve: { alias, conditions: ['browser'] },
				test: {
					name: 'svelte',
					include: ['test/svelte/**/*.svelte.test.ts'],
					environment: 'jsdom',
				},
			},
		],
	},
});
