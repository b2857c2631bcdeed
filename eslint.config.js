import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import ts from 'typescript-eslint';
import svelteConfig from './svelte.config.js';

export default ts.config(
	js.configs.recommended,
	...ts.configs.recommended,
	...svelte.configs.recommended,
	{ languageOptions: { globals: { ...globals.browser, ...globals.node, Deno: 'readonly', EdgeRuntime: 'readonly' } } },
	{
		files: ['**/*.svelte', '**/*.svelte.ts', '**/*.svelte.js'],
		languageOptions: {
			parserOptions: { projectService: true, extraFileExtensions: ['.svelte'], parser: ts.parser, svelteConfig },
		},
	},
	{ rules: { '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }] } },
	// Tests read raw rows of many shapes straight from SQL.
	{ files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
	{ ignores: ['node_modules/', '.svelte-kit/', 'build/', 'dist/', 'scratch/'] },
);
