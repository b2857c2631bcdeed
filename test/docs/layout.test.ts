/**
 * docs/development.md's Layout is the repository as it is: it names every
 * top-level folder (those .gitignore does not leave out) and every entry of
 * package.json `exports`, and every path it names exists.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/local/postgres/migrate.ts';

const read = (path: string) => readFile(join(projectRoot, path), 'utf8');

/** The text of the section under `## heading`, up to the next heading of that level or higher. */
export function sectionOf(text: string, heading: string): string {
	const lines = text.split('\n');
	const start = lines.indexOf(`## ${heading}`);
	if (start < 0) throw new Error(`no section "## ${heading}"`);
	const end = lines.findIndex((line, i) => i > start && /^#{1,2} /.test(line));
	return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The code spans of a text that read as repository paths: a slash inside, no spaces, no leading slash. */
export function pathsIn(text: string): string[] {
	const spans = [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!);
	return spans.filter((span) => !span.startsWith('/') && /^[.\w-]+\/[\w./<>*-]*$/.test(span));
}

/** The folders at the top of the repository, without those .gitignore names and .git. */
async function topLevelFolders(): Promise<string[]> {
	const ignored = new Set(
		(await read('.gitignore'))
			.split('\n')
			.map((line) => line.trim().replace(/\/$/, ''))
			.filter((line) => line !== '' && !/[*!#]/.test(line)),
	);
	const entries = await readdir(projectRoot, { withFileTypes: true });
	return entries
		.filter((e) => e.isDirectory() && e.name !== '.git' && !ignored.has(e.name))
		.map((e) => e.name)
		.sort();
}

describe('docs/development.md: the Layout', () => {
	it('finds the paths a text names, and not the package entries or commands', () => {
		expect(
			pathsIn('- `src/lib/`: `/svelte`, `supabase-jobs` (`src/lib/index.ts`); `npm run bench`, `.ci/run`'),
		).toEqual(['src/lib/', 'src/lib/index.ts', '.ci/run']);
		expect(sectionOf('## A\none\n### B\ntwo\n## C\nthree', 'A')).toBe('one\n### B\ntwo');
	});

	it('names every top-level folder', async () => {
		const layout = sectionOf(await read('docs/development.md'), 'Layout');
		const folders = await topLevelFolders();
		expect(folders).toContain('src');
		expect(folders.filter((folder) => !layout.includes(`\`${folder}/`))).toEqual([]);
	});

	it('names every package.json export', async () => {
		const layout = sectionOf(await read('docs/development.md'), 'Layout');
		const pkg = JSON.parse(await read('package.json')) as { name: string; exports: Record<string, unknown> };
		const entries = Object.keys(pkg.exports)
			.filter((entry) => entry !== './package.json')
			.map((entry) => (entry === '.' ? pkg.name : entry.slice(1)));
		expect(entries.length).toBeGreaterThan(3);
		expect(entries.filter((entry) => !layout.includes(`\`${entry}\``))).toEqual([]);
	});

	it('names no path that does not exist', async () => {
		const layout = sectionOf(await read('docs/development.md'), 'Layout');
		const paths = pathsIn(layout);
		expect(paths.length).toBeGreaterThan(10);
		expect(paths.filter((path) => !existsSync(join(projectRoot, path)))).toEqual([]);
	});
});
