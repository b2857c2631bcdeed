/**
 * The README's quick start as data: the section between the lines
 * `<!-- quick-start -->` and `<!-- /quick-start -->`, its fenced code blocks,
 * and the files among them: a block whose first line names its path, as the
 * reader sees it (`// src/hooks.server.ts`, `<!-- src/routes/+page.svelte -->`),
 * so a test can build an app out of exactly what the README says.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface CodeBlock {
	/** The fence's info string, e.g. `ts`, `svelte`, `sh`. */
	lang: string;
	/** The block's text, ending with a newline. */
	code: string;
	/** The path its first line names (`// <path>` or `<!-- <path> -->`), or null. */
	file: string | null;
}

/** The text between the quick-start markers (each alone on its line); throws when they are missing or repeated. */
export function quickStartSection(markdown: string): string {
	const lines = markdown.split('\n');
	const open = lines.flatMap((l, i) => (l === '<!-- quick-start -->' ? [i] : []));
	const close = lines.flatMap((l, i) => (l === '<!-- /quick-start -->' ? [i] : []));
	if (open.length !== 1 || close.length !== 1 || close[0]! < open[0]!) {
		throw new Error(
			`expected one <!-- quick-start --> line followed by one <!-- /quick-start --> line, found ${open.length} and ${close.length}`,
		);
	}
	return lines.slice(open[0]! + 1, close[0]).join('\n');
}

/** A first line that is only a comment naming a relative path with a slash and an extension. */
const PATH_LINE = /^(?:\/\/ ([\w.[\]+-]+(?:\/[\w.[\]+-]+)+\.\w+)|<!-- ([\w.[\]+-]+(?:\/[\w.[\]+-]+)+\.\w+) -->)$/;

/** Every fenced block (``` fences) in order, with the file its first line names. */
export function codeBlocks(markdown: string): CodeBlock[] {
	const lines = markdown.split('\n');
	const blocks: CodeBlock[] = [];
	for (let i = 0; i < lines.length; i++) {
		const fence = /^```(\S*)\s*$/.exec(lines[i]!);
		if (!fence) continue;
		const end = lines.findIndex((l, j) => j > i && l === '```');
		if (end < 0) throw new Error(`unclosed code block at line ${i + 1}`);
		const body = lines.slice(i + 1, end);
		const path = PATH_LINE.exec(body[0] ?? '');
		blocks.push({ lang: fence[1]!, code: `${body.join('\n')}\n`, file: path ? (path[1] ?? path[2]!) : null });
		i = end;
	}
	return blocks;
}

/** README.md's quick-start section, read from the repository. */
export async function readmeQuickStart(): Promise<string> {
	return quickStartSection(await readFile(join(ROOT, 'README.md'), 'utf8'));
}
