/**
 * Functions stay small enough to read at once: the TypeScript syntax tree of
 * the package, the local stack, the edge worker and the command line is
 * walked, and any function, method or arrow over 80 lines is named.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOTS = ['src/lib', 'src/local', 'functions', 'bin'];
const MAX_FUNCTION_LINES = 80;
/** Generated from the SQL (npm run gen:types), not written by hand. */
const GENERATED = new Set(['src/lib/database.types.ts']);

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const path = join(dir, e.name);
		if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(path);
		return /\.(ts|mts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') && !GENERATED.has(path) ? [path] : [];
	});
}

function longFunctions(path: string): string[] {
	const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
	const found: string[] = [];
	const visit = (node: ts.Node): void => {
		if (ts.isFunctionLike(node) && 'body' in node && node.body) {
			const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
			const lines = file.getLineAndCharacterOfPosition(node.end).line - first + 1;
			const name = node.name?.getText(file) ?? '(anonymous)';
			if (lines > MAX_FUNCTION_LINES) found.push(`${path}:${first + 1} ${name} (${lines} lines)`);
		}
		ts.forEachChild(node, visit);
	};
	visit(file);
	return found;
}

describe('layout size', () => {
	it('no function, method or arrow runs over 80 lines', () => {
		const files = ROOTS.flatMap(sources);
		expect(files.length).toBeGreaterThan(50);
		expect(files.flatMap(longFunctions)).toEqual([]);
	});
});
