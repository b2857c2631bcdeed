import adapter from '@sveltejs/adapter-node';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';
import { readFileSync } from 'node:fs';

/**
 * Inside the repository `supabase-jobs` and its entries (`supabase-jobs/worker`,
 * `/node`, `/svelte`, `/kit`, `/adapter`) resolve to the sources of the files
 * package.json `exports` names (`./dist/worker.js` is `src/lib/worker.ts`), so
 * the demo, the routes and the tests import the package as its users do. Kit
 * feeds this to TypeScript (the generated tsconfig's paths) and to Vite; the
 * longer names come first, as Vite matches a name as a prefix of a path.
 * @returns {Record<string, string>}
 */
export function packageEntryAliases() {
	const { name, exports } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
	/** @type {[string, string][]} */
	const aliases = [];
	for (const [entry, target] of Object.entries(exports)) {
		const file = typeof target === 'string' ? target : target.default;
		if (!file.startsWith('./dist/')) continue;
		aliases.push([name + entry.slice(1), file.replace(/^\.\/dist\//, 'src/lib/').replace(/\.js$/, '.ts')]);
	}
	return Object.fromEntries(aliases.sort(([a], [b]) => b.length - a.length));
}

/** @type {import('@sveltejs/kit').Config} */
const config = {
	preprocess: vitePreprocess(),
	kit: {
		adapter: adapter(),
		alias: packageEntryAliases(),
		typescript: {
			config(tsconfig) {
				// The local stack, the worker functions and the tests are type-checked with the app.
				tsconfig.include.push(
					'../src/local/**/*.ts',
					'../test/**/*.ts',
					'../functions/**/*.ts',
					'../scripts/**/*.ts',
					'../bench/**/*.ts',
					'../*.config.ts',
				);
				return tsconfig;
			},
		},
	},
};

export default config;
