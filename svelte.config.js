import adapter from '@sveltejs/adapter-node';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

/** @type {import('@sveltejs/kit').Config} */
const config = {
	preprocess: vitePreprocess(),
	kit: {
		adapter: adapter(),
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
