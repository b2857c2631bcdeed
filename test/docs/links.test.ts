/**
 * The README, the pages under docs/ and bench/'s pages link to each other by relative paths:
 * every such link lands on a file that exists and, with an anchor, on a heading
 * of that page (GitHub's slug of the heading, or an explicit `<a id>`).
 * External links (http, mailto) are left alone.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/local/postgres/migrate.ts';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[`*_~]/g, (c) => (c === '_' ? '_' : ''))
		.replace(/[^\p{L}\p{N}\s_-]/gu, '')
		.replace(/\s/g, '-');
}

/** The anchors a markdown page offers: its headings' slugs (numbered when repeated) and explicit ids. */
function anchorsOf(text: string): Set<string> {
	const out = new Set<string>();
	const seen = new Map<string, number>();
	let fenced = false;
	for (const line of text.split('\n')) {
		if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
		if (fenced) continue;
		const heading = /^#{1,6}\s+(.*?)\s*#*$/.exec(line);
		if (heading) {
			const base = slug(heading[1]!);
			const n = seen.get(base) ?? 0;
			seen.set(base, n + 1);
			out.add(n === 0 ? base : `${base}-${n}`);
		}
		for (const m of line.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
	}
	return out;
}

/** Relative link targets outside code: `[text](target)`. */
function linksOf(text: string): { target: string; line: number }[] {
	const out: { target: string; line: number }[] = [];
	let fenced = false;
	text.split('\n').forEach((line, i) => {
		if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
		if (fenced) return;
		for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
			const target = m[1]!;
			if (!/^[a-z]+:/i.test(target)) out.push({ target, line: i + 1 });
		}
	});
	return out;
}

async function pages(): Promise<string[]> {
	const files = [join(projectRoot, 'README.md')];
	const walk = async (dir: string): Promise<void> => {
		for (const entry of await readdir(dir, { withFileTypes: true })) {
			if (entry.name.startsWith('.')) continue;
			const path = join(dir, entry.name);
			if (entry.isDirectory()) await walk(path);
			else if (entry.name.endsWith('.md')) files.push(path);
		}
	};
	await walk(join(projectRoot, 'docs'));
	for (const entry of await readdir(join(projectRoot, 'bench')))
		if (entry.endsWith('.md')) files.push(join(projectRoot, 'bench', entry));
	return files;
}

describe('links between the README and the docs', () => {
	it('slugs headings as GitHub does', () => {
		expect(slug('Why Broadcast from the database, not `postgres_changes`')).toBe(
			'why-broadcast-from-the-database-not-postgres_changes',
		);
		expect(slug('0. The server’s limits (same server, same run)')).toBe('0-the-servers-limits-same-server-same-run');
		expect(anchorsOf('# A\n## B\n## B\n```\n# not a heading\n```\n<a id="x"></a>')).toEqual(
			new Set(['a', 'b', 'b-1', 'x']),
		);
	});

	it('every relative link lands on a file, and every anchor on a heading of it', async () => {
		const broken: string[] = [];
		let checked = 0;
		for (const file of await pages()) {
			for (const { target, line } of linksOf(await readFile(file, 'utf8'))) {
				checked++;
				const [path, anchor] = target.split('#') as [string, string | undefined];
				const to = path === '' ? file : resolve(dirname(file), decodeURI(path));
				const where = `${relative(projectRoot, file)}:${line} → ${target}`;
				if (!existsSync(to)) broken.push(`${where}: no such file`);
				else if (anchor !== undefined && to.endsWith('.md') && !anchorsOf(await readFile(to, 'utf8')).has(anchor))
					broken.push(`${where}: no such heading`);
			}
		}
		expect(broken).toEqual([]);
		expect(checked).toBeGreaterThan(50);
	});
});
