/**
 * Reads a guide page as the translations test compares it: its sections (each
 * heading carries an explicit anchor, `<a id="...">` on the line before it, so
 * a section is paired with its translation by that id, not by its title or
 * position), the code blocks of each section, and its links.
 */

/** One fenced code block. */
export interface CodeBlock {
	/** The info string: `ts`, `svelte`, `sql`, `sh`... */
	lang: string;
	code: string;
	/** 1-based line of the opening fence. */
	line: number;
}

/** One heading and what follows it up to the next heading. */
export interface Section {
	id: string;
	level: number;
	title: string;
	line: number;
	blocks: CodeBlock[];
}

/** A guide page, read. */
export interface GuidePage {
	sections: Section[];
	/** Link targets, as written: `operators.md#deploying`, `#enqueue`, `../../state-machine.md`. */
	links: { target: string; line: number }[];
	/** What is wrong with the page on its own: a heading without an anchor, an anchor used twice. */
	problems: string[];
}

const ANCHOR = /^<a id="([a-z0-9][a-z0-9-]*)"><\/a>$/;
const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
const FENCE = /^(`{3,}|~{3,})\s*([^`\s]*)/;

/**
 * Splits a page into anchored sections and their code blocks.
 *
 * @example
 * const page = readGuide('<a id="intro"></a>\n\n# Intro\n');
 * page.sections[0].id; // 'intro'
 */
export function readGuide(text: string): GuidePage {
	const lines = text.split('\n');
	const sections: Section[] = [];
	const links: GuidePage['links'] = [];
	const problems: string[] = [];
	const seen = new Set<string>();
	let pendingAnchor: { id: string; line: number } | null = null;
	let fence: { marker: string; block: CodeBlock; body: string[] } | null = null;

	for (let i = 0; i < lines.length; i++) {
		const line = lines[i]!;
		const n = i + 1;
		if (fence) {
			if (line.trimStart().startsWith(fence.marker) && line.trim() === line.trim()[0]!.repeat(line.trim().length)) {
				fence.block.code = fence.body.join('\n');
				(sections.at(-1)?.blocks ?? orphanBlocks(problems, n)).push(fence.block);
				fence = null;
			} else {
				fence.body.push(line);
			}
			continue;
		}
		const open = FENCE.exec(line);
		if (open) {
			fence = { marker: open[1]!, block: { lang: open[2] ?? '', code: '', line: n }, body: [] };
			pendingAnchor = null;
			continue;
		}
		for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
			const target = m[1]!;
			if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ target, line: n });
		}
		const anchor = ANCHOR.exec(line.trim());
		if (anchor) {
			pendingAnchor = { id: anchor[1]!, line: n };
			continue;
		}
		const heading = HEADING.exec(line);
		if (heading) {
			if (!pendingAnchor) {
				problems.push(`line ${n}: heading "${heading[2]}" has no <a id="..."></a> on the line before it`);
			} else if (seen.has(pendingAnchor.id)) {
				problems.push(`line ${n}: anchor "${pendingAnchor.id}" is used twice`);
			}
			const id = pendingAnchor?.id ?? `(line ${n})`;
			seen.add(id);
			sections.push({ id, level: heading[1]!.length, title: heading[2]!, line: n, blocks: [] });
			pendingAnchor = null;
			continue;
		}
		if (line.trim() !== '' && pendingAnchor) {
			problems.push(`line ${pendingAnchor.line}: anchor "${pendingAnchor.id}" is not followed by a heading`);
			pendingAnchor = null;
		}
	}
	if (fence) problems.push(`line ${fence.block.line}: a code block is never closed`);
	return { sections, links, problems };
}

function orphanBlocks(problems: string[], line: number): CodeBlock[] {
	problems.push(`line ${line}: a code block before the first heading`);
	return [];
}

/** How each language writes strings and comments, for {@link codeWithoutComments}. */
const SYNTAX: Record<string, { quotes: string; line: string[]; block: [string, string][] }> = {
	ts: { quotes: `'"\``, line: ['//'], block: [['/*', '*/']] },
	svelte: {
		quotes: `'"\``,
		line: ['//'],
		block: [
			['/*', '*/'],
			['<!--', '-->'],
		],
	},
	sql: { quotes: `'"`, line: ['--'], block: [['/*', '*/']] },
	sh: { quotes: `'"`, line: ['#'], block: [] },
	toml: { quotes: `'"`, line: ['#'], block: [] },
};

/**
 * The code of a block without its comments and blank lines: what must be the
 * same in every language (comments are translated, code is not). Strings are
 * code (a kind name, a column), so a comment marker inside one is kept.
 *
 * @example
 * codeWithoutComments('ts', "run(); // starts it"); // 'run();'
 */
export function codeWithoutComments(lang: string, code: string): string {
	const syntax = SYNTAX[lang];
	let out = '';
	if (!syntax) {
		out = code;
	} else {
		let i = 0;
		while (i < code.length) {
			const c = code[i]!;
			if (syntax.quotes.includes(c)) {
				let j = i + 1;
				while (j < code.length && code[j] !== c) j += code[j] === '\\' ? 2 : 1;
				out += code.slice(i, j + 1);
				i = j + 1;
				continue;
			}
			// A shell comment starts a word: `a#b` is not one.
			const line = syntax.line.find((m) => code.startsWith(m, i) && (m !== '#' || i === 0 || /\s/.test(code[i - 1]!)));
			if (line) {
				const eol = code.indexOf('\n', i);
				i = eol === -1 ? code.length : eol;
				continue;
			}
			const block = syntax.block.find(([open]) => code.startsWith(open, i));
			if (block) {
				const close = code.indexOf(block[1], i + block[0].length);
				i = close === -1 ? code.length : close + block[1].length;
				continue;
			}
			out += c;
			i++;
		}
	}
	return out
		.split('\n')
		.map((l) => l.trimEnd())
		.filter((l) => l.trim() !== '')
		.join('\n');
}

/**
 * What differs between a page and its translation: sections present in one
 * language only, sections at another level or in another order, and code
 * blocks whose code (comments aside) is not the same. Empty when in step.
 *
 * @example
 * compareGuides(readGuide(en), readGuide(pt)); // ['section "errors" exists in en only']
 */
export function compareGuides(
	a: GuidePage,
	b: GuidePage,
	names: readonly [string, string] = ['en', 'pt-BR'],
): string[] {
	const out: string[] = [];
	const byId = (page: GuidePage) => new Map(page.sections.map((s) => [s.id, s]));
	const [ma, mb] = [byId(a), byId(b)];
	for (const s of a.sections) if (!mb.has(s.id)) out.push(`section "${s.id}" exists in ${names[0]} only`);
	for (const s of b.sections) if (!ma.has(s.id)) out.push(`section "${s.id}" exists in ${names[1]} only`);
	const shared = (page: GuidePage, other: Map<string, Section>) => page.sections.filter((s) => other.has(s.id));
	const [orderA, orderB] = [shared(a, mb), shared(b, ma)];
	for (let i = 0; i < orderA.length; i++) {
		const sa = orderA[i]!;
		const sb = orderB[i]!;
		if (sa.id !== sb.id) {
			out.push(`sections out of order: "${sa.id}" in ${names[0]} is where ${names[1]} has "${sb.id}"`);
			break;
		}
		if (sa.level !== sb.level)
			out.push(`section "${sa.id}" is level ${sa.level} in ${names[0]} and ${sb.level} in ${names[1]}`);
		if (sa.blocks.length !== sb.blocks.length) {
			out.push(
				`section "${sa.id}" has ${sa.blocks.length} code blocks in ${names[0]} and ${sb.blocks.length} in ${names[1]}`,
			);
			continue;
		}
		sa.blocks.forEach((ba, k) => {
			const bb = sb.blocks[k]!;
			if (ba.lang !== bb.lang) {
				out.push(`section "${sa.id}", block ${k + 1}: ${ba.lang} in ${names[0]}, ${bb.lang} in ${names[1]}`);
			} else if (codeWithoutComments(ba.lang, ba.code) !== codeWithoutComments(bb.lang, bb.code)) {
				out.push(
					`section "${sa.id}", block ${k + 1} (${names[0]} line ${ba.line}, ${names[1]} line ${bb.line}): the code differs, not only its comments`,
				);
			}
		});
	}
	return out;
}

/**
 * The file a snippet says it is, from its first line (`// src/lib/jobs.ts`,
 * `<!-- src/routes/+page.svelte -->`), or null.
 *
 * @example
 * snippetPath('// src/lib/jobs.ts\nexport {};'); // 'src/lib/jobs.ts'
 */
export function snippetPath(code: string): string | null {
	const first = code.split('\n', 1)[0]!.trim();
	const m = /^(?:\/\/|<!--)\s*([\w$[\]+./-]+\.(?:ts|svelte))\s*(?:-->)?$/.exec(first);
	return m ? m[1]! : null;
}
