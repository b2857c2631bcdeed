/**
 * What the README quick start's user has besides the README: their SvelteKit
 * app (its dependencies and skeleton, as `npx sv create` leaves it). Strings,
 * not files, so the repository's own checks never see them.
 */

/** The SvelteKit app the user already has (and svelte-check, as `npx sv create` sets it up). */
export const APP_DEPENDENCIES = [
	'svelte',
	'@sveltejs/kit',
	'@sveltejs/adapter-node',
	'@sveltejs/vite-plugin-svelte',
	'vite',
	'typescript',
	'svelte-check',
	'@types/node',
] as const;

/** The SvelteKit skeleton a user has before the quick start (`npx sv create`, trimmed). */
export const SKELETON: Record<string, string> = {
	'svelte.config.js': `import adapter from '@sveltejs/adapter-node';
export default { kit: { adapter: adapter() } };
`,
	'vite.config.js': `import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vite';
export default defineConfig({ plugins: [sveltekit()] });
`,
	'tsconfig.json': `{ "extends": "./.svelte-kit/tsconfig.json", "compilerOptions": { "strict": true, "allowImportingTsExtensions": true } }
`,
	// The types of locals, as Supabase's SvelteKit guide writes them.
	'src/app.d.ts': `import type { Session, SupabaseClient, User } from '@supabase/supabase-js';

declare global {
	namespace App {
		interface Locals {
			supabase: SupabaseClient;
			safeGetSession: () => Promise<{ session: Session | null; user: User | null }>;
		}
	}
}

export {};
`,
	'src/app.html': `<!doctype html>
<html lang="en">
	<head><meta charset="utf-8" />%sveltekit.head%</head>
	<body data-sveltekit-preload-data="hover"><div style="display: contents">%sveltekit.body%</div></body>
</html>
`,
};
