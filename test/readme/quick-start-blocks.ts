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

/** The packages of the quick start's `npm i` line, each as the line writes it (`postgres`, `postgres@3`). */
export async function readmeInstallLine(): Promise<string[]> {
	const sh = codeBlocks(await readmeQuickStart()).find((b) => b.lang === 'sh');
	const line = sh && /^npm i (.+)$/m.exec(sh.code);
	if (!line) throw new Error("the quick start's first sh block has no `npm i` line");
	return line[1]!.split(/\s+/);
}

/** A package's name in an npm install argument (`@supabase/ssr@2` -> `@supabase/ssr`). */
export function packageName(arg: string): string {
	const at = arg.lastIndexOf('@');
	return at > 0 ? arg.slice(0, at) : arg;
}

/**
 * What the README's `npm i` line asks of `name`, as a package.json range:
 * `latest` when it names the package unpinned (npm installs the registry's
 * latest), else the version it gives.
 */
export async function readmeRange(name: string): Promise<string> {
	const arg = (await readmeInstallLine()).find((a) => packageName(a) === name);
	if (arg === undefined) throw new Error(`the README's npm i line does not name ${name}`);
	return arg === name ? 'latest' : arg.slice(name.length + 1);
}
