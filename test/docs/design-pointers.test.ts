/**
 * Code comments that send a reader to docs/architecture.md name the section
 * they mean, by its heading, and that heading exists: a comment points at the
 * design, not at a page in general or at a section that has moved.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/local/postgres/migrate.ts';

const FOLDERS = ['src', 'supabase/schemas', 'functions', 'scripts', 'bench', 'test', 'bin'];
const CODE = /\.(?:ts|mjs|js|svelte|sql)$/;
/** Generated from the schema: its comments are the schema's. */
const GENERATED = new Set(['src/lib/database.types.ts']);

/** The text with comment continuations joined: a pointer may run over two comment lines. */
export function joined(text: string): string {
	return text.replace(/\n[ \t]*(?:--|\/\/|\*)?[ \t]*/g, ' ');
}

/** Each mention of docs/architecture.md and the heading it names (null when it names none). */
export function pointersIn(text: string): (string | null)[] {
	return [...joined(text).matchAll(/docs\/architecture\.md(?:[,:]?\s*\(?"([^"]+)")?/g)].map((m) => m[1] ?? null);
}

async function files(dir: string): Promise<string[]> {
	const out: string[] = [];
	for (const entry of await readdir(join(projectRoot, dir), { withFileTypes: true })) {
		if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
		const path = `${dir}/${entry.name}`;
		if (entry.isDirectory()) out.push(...(await files(path)));
		else if (CODE.test(entry.name) && !GENERATED.has(path)) out.push(path);
	}
	return out;
}

describe('pointers from the code into docs/architecture.md', () => {
	it('reads a pointer over two comment lines, and one that names no heading', () => {
		expect(
			pointersIn('-- once per statement (docs/architecture.md, "Statements\n-- PostgreSQL reads again").'),
		).toEqual(['Statements PostgreSQL reads again']);
		expect(pointersIn('// see docs/architecture.md.')).toEqual([null]);
	});

	it('each names a heading of the page', async () => {
		const headings = (await readFile(join(projectRoot, 'docs/architecture.md'), 'utf8'))
			.split('\n')
			.filter((line) => /^#{2,4} /.test(line))
			.map((line) => line.replace(/^#+ /, '').replaceAll('`', ''));
		const wrong: string[] = [];
		let found = 0;
		for (const folder of FOLDERS) {
			for (const path of await files(folder)) {
				if (path === 'test/docs/design-pointers.test.ts') continue;
				for (const heading of pointersIn(await readFile(join(projectRoot, path), 'utf8'))) {
					found++;
					if (heading === null) wrong.push(`${path}: names no section`);
					else if (!headings.some((h) => h.startsWith(heading))) wrong.push(`${path}: no heading "${heading}"`);
				}
			}
		}
		expect(found).toBeGreaterThan(5);
		expect(wrong).toEqual([]);
	});
});
