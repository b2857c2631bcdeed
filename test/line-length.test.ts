/**
 * No line of the repository's own text runs past 200 characters: the sources,
 * the SQL schema, the worker function, the scripts, the bench, the tests and
 * the command. Generated files (the baseline migration, the database types,
 * the bench's last run), the vendored linter and the lockfile are not ours to
 * wrap. In SQL a string literal (a `comment on` text, an error message) stays
 * whole on its line, so the sentence a reader sees can be found as written;
 * the code around it is held to the limit.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../src/local/postgres/migrate.ts';

const LIMIT = 200;
const FOLDERS = ['src', 'supabase/schemas', 'functions', 'scripts', 'bench', 'test', 'bin'];
const TEXT = /\.(?:ts|mts|mjs|js|svelte|sql|md|json|toml|html|css|yaml|yml)$/;
/** Written by a command, copied from elsewhere, or a lockfile. */
const NOT_OURS = [
	/^src\/lib\/database\.types\.ts$/,
	/^bench\/results\.md$/,
	/^test\/sql\/splinter\//,
	/(^|\/)package-lock\.json$/,
];

/** The line as measured: in SQL without its string literals ('' inside one is a quote). */
export function measured(line: string, path: string): number {
	return path.endsWith('.sql') ? line.replace(/'(?:[^']|'')*'/g, "''").length : line.length;
}

async function files(dir: string): Promise<string[]> {
	const out: string[] = [];
	for (const entry of await readdir(join(projectRoot, dir), { withFileTypes: true })) {
		if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
		const path = `${dir}/${entry.name}`;
		if (entry.isDirectory()) out.push(...(await files(path)));
		else if (TEXT.test(entry.name) && !NOT_OURS.some((re) => re.test(path))) out.push(path);
	}
	return out;
}

describe('line length', () => {
	it('measures SQL without its string literals, and everything else as written', () => {
		const sql = `  'a comment text ''quoted'' ${'x'.repeat(300)}';`;
		expect(measured(sql, 'supabase/schemas/a.sql')).toBe(5);
		expect(measured(sql, 'src/a.ts')).toBe(sql.length);
	});

	it(`no line of the sources, schema, function, scripts, bench, tests or command is over ${LIMIT} characters`, async () => {
		const long: string[] = [];
		let checked = 0;
		for (const folder of FOLDERS) {
			for (const path of await files(folder)) {
				checked++;
				(await readFile(join(projectRoot, path), 'utf8')).split('\n').forEach((line, i) => {
					const length = measured(line, path);
					if (length > LIMIT) long.push(`${path}:${i + 1} (${length})`);
				});
			}
		}
		expect(checked).toBeGreaterThan(200);
		expect(long).toEqual([]);
	});
});
