/**
 * The Svelte layer lives in one room, src/lib/svelte: its state classes, its
 * components (components/), the admin dashboard (dashboard/: components,
 * state class, messages and the route's data) and its internals. The rest of
 * src reaches it only through its public entries: src/lib/svelte/index.ts
 * (`supabase-jobs/svelte`), and src/lib/kit.ts (`supabase-jobs/kit`) for the
 * dashboard's server half.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');
const SVELTE = join(SRC, 'lib/svelte');

function files(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		return entry.isDirectory() ? files(path) : [path];
	});
}

const rel = (path: string) => relative(ROOT, path);
const inSvelte = (path: string) => path.startsWith(`${SVELTE}/`);

/** The relative modules a file imports (static, re-exported or dynamic), resolved to absolute paths. */
function importsOf(file: string): string[] {
	const text = readFileSync(file, 'utf8');
	const specifiers = [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*(['"])(\.{1,2}\/[^'"]+)\1/g)].map((m) => m[2]!);
	return specifiers.map((s) => resolve(dirname(file), s));
}

const sources = files(SRC).filter((f) => /\.(ts|js|svelte)$/.test(f));

describe('the Svelte layer in one room', () => {
	it('keeps every component and state class of src/lib inside src/lib/svelte', () => {
		const outside = sources
			.filter((f) => f.startsWith(join(SRC, 'lib/')) && !inSvelte(f))
			.filter((f) => /\.svelte(\.ts)?$/.test(f));
		expect(outside.map(rel)).toEqual([]);
	});

	it('keeps the whole dashboard in src/lib/svelte/dashboard', () => {
		const dashboard = sources.filter((f) => f.startsWith(join(SRC, 'lib/')) && /dashboard/i.test(f));
		expect(dashboard.length).toBeGreaterThan(0);
		expect(dashboard.filter((f) => !f.startsWith(join(SVELTE, 'dashboard/'))).map(rel)).toEqual([]);
	});

	it('is imported from the rest of src only through its public entries', () => {
		const entry = join(SVELTE, 'index.ts');
		const kit = join(SRC, 'lib/kit.ts');
		const reaching = sources
			.filter((f) => !inSvelte(f))
			.flatMap((file) => importsOf(file).map((target) => ({ file, target })))
			.filter(({ target }) => inSvelte(target) && target !== entry)
			// supabase-jobs/kit serves the dashboard's route: its server half, never a component.
			.filter(({ file, target }) => !(file === kit && /\/svelte\/dashboard\/[a-z-]+\.ts$/.test(target)))
			.map(({ file, target }) => `${rel(file)} -> ${rel(target)}`);
		expect(reaching).toEqual([]);
	});

	it('tells a terminal status with the one isTerminalStatus, the state machine mirror in src/lib/state.ts', () => {
		const defining = sources.filter((f) =>
			/\bfunction isTerminalStatus\b|\bisTerminalStatus\s*=/.test(readFileSync(f, 'utf8')),
		);
		expect(defining.map(rel)).toEqual(['src/lib/state.ts']);
	});

	it('imports nothing of the Svelte layer from outside src/lib/svelte', () => {
		const leaving = files(SVELTE)
			.filter((f) => /\.(ts|svelte)$/.test(f))
			.flatMap((file) => importsOf(file).map((target) => ({ file, target })))
			.filter(({ target }) => /\.svelte(\.ts)?$/.test(target) && !inSvelte(target))
			.map(({ file, target }) => `${rel(file)} -> ${rel(target)}`);
		expect(leaving).toEqual([]);
	});
});
