/**
 * The guides under docs/guide: every English page has its pt-BR translation,
 * section for section (paired by their explicit anchors), with the same code;
 * their links land; and the English pages' TypeScript and Svelte snippets
 * type-check against the package's sources, so the guide cannot drift from the API.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeWithoutComments, compareGuides, readGuide, snippetPath, type GuidePage } from './guide-sections.ts';
import { SNIPPET_CONTEXT } from './snippet-context.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const GUIDE = join(ROOT, 'docs/guide');
const LANGUAGES = ['en', 'pt-BR'] as const;

/**
 * Pages translated from a README section rather than from an English page:
 * checked against that section by their own test (quick-start-translation.test.ts).
 */
const README_TRANSLATIONS = new Set(['quick-start.md']);

async function pages(language: string): Promise<string[]> {
	return (await readdir(join(GUIDE, language))).filter((f) => f.endsWith('.md') && !README_TRANSLATIONS.has(f)).sort();
}

async function read(language: string, page: string): Promise<GuidePage> {
	return readGuide(await readFile(join(GUIDE, language, page), 'utf8'));
}

describe('the guide pages, read alone', () => {
	it('pairs sections by anchor: a section only in pt-BR, one at another level and changed code are each reported', () => {
		const en = readGuide(
			['<a id="a"></a>', '', '# A', '<a id="b"></a>', '', '## B', '', '```ts', "run('x'); // starts it", '```'].join(
				'\n',
			),
		);
		const same = readGuide(
			[
				'<a id="a"></a>',
				'',
				'# A (traduzido)',
				'<a id="b"></a>',
				'',
				'## B (traduzido)',
				'',
				'```ts',
				"run('x'); // começa",
				'```',
			].join('\n'),
		);
		expect(compareGuides(en, same)).toEqual([]);

		const drifted = readGuide(
			[
				'<a id="a"></a>',
				'',
				'# A',
				'<a id="b"></a>',
				'',
				'### B',
				'',
				'```ts',
				"run('y');",
				'```',
				'<a id="c"></a>',
				'',
				'## C',
			].join('\n'),
		);
		expect(compareGuides(en, drifted)).toEqual([
			'section "c" exists in pt-BR only',
			'section "b" is level 2 in en and 3 in pt-BR',
			'section "b", block 1 (en line 8, pt-BR line 8): the code differs, not only its comments',
		]);
	});

	it('refuses a heading without an anchor and an anchor used twice', () => {
		const page = readGuide(['# No anchor', '<a id="x"></a>', '## X', '<a id="x"></a>', '## X again'].join('\n'));
		expect(page.problems).toEqual([
			'line 1: heading "No anchor" has no <a id="..."></a> on the line before it',
			'line 5: anchor "x" is used twice',
		]);
	});

	it('ignores comments, not strings, when comparing code', () => {
		expect(codeWithoutComments('sql', "select 1; -- one\n-- alone\nselect 'a -- b';")).toBe(
			"select 1;\nselect 'a -- b';",
		);
		expect(codeWithoutComments('ts', "fetch('https://x.test'); // go\nsay('a // b'); /* c */")).toBe(
			"fetch('https://x.test');\nsay('a // b');",
		);
		expect(codeWithoutComments('svelte', '<!-- o -->\n<p>{a}</p>')).toBe('<p>{a}</p>');
		expect(codeWithoutComments('sh', 'npm test  # all')).toBe('npm test');
	});
});

describe('docs/guide in English and pt-BR', () => {
	it('has the same pages in both languages, and at least the user and operator guides', async () => {
		const [en, pt] = await Promise.all(LANGUAGES.map(pages));
		expect(pt).toEqual(en);
		expect(en).toEqual(expect.arrayContaining(['operators.md', 'users.md']));
	});

	it('every page: each heading anchored once, and each section in both languages at the same level and place, with the same code', async () => {
		const problems: string[] = [];
		for (const page of await pages('en')) {
			const [en, pt] = await Promise.all(LANGUAGES.map((l) => read(l, page)));
			for (const [language, guide] of [
				['en', en],
				['pt-BR', pt],
			] as const)
				problems.push(...guide.problems.map((p) => `${language}/${page} ${p}`));
			problems.push(...compareGuides(en, pt).map((p) => `${page}: ${p}`));
			expect(en.sections.length, page).toBeGreaterThan(5);
		}
		expect(problems).toEqual([]);
	});

	it('every relative link lands on a file that exists, and an anchor on a section of that page', async () => {
		const broken: string[] = [];
		for (const language of LANGUAGES) {
			for (const page of await pages(language)) {
				const file = join(GUIDE, language, page);
				for (const { target, line } of (await read(language, page)).links) {
					const [path, anchor] = target.split('#') as [string, string | undefined];
					const to = path === '' ? file : resolve(dirname(file), path);
					if (!existsSync(to)) {
						broken.push(`${language}/${page}:${line} → ${target}: no such file`);
						continue;
					}
					if (anchor !== undefined && to.endsWith('.md') && to.startsWith(GUIDE)) {
						const ids = readGuide(await readFile(to, 'utf8')).sections.map((s) => s.id);
						if (!ids.includes(anchor)) broken.push(`${language}/${page}:${line} → ${target}: no such section`);
					}
				}
			}
		}
		expect(broken).toEqual([]);
	});
});

describe('the English guides’ snippets', () => {
	// One TypeScript program over the whole package: seconds of CPU, more on a shared machine.
	it('every TypeScript and Svelte script block type-checks against src/lib', { timeout: 120_000 }, async () => {
		const ts = (await import('typescript')).default;
		const { compile } = await import('svelte/compiler');
		const failures: string[] = [];
		// One small project: every page's snippets as files, beside what they take as given.
		const project = join(GUIDE, 'en', '.snippets');
		const files = new Map<string, string>();
		const origin = new Map<string, string>();
		for (const [path, text] of Object.entries(SNIPPET_CONTEXT)) files.set(join(project, path), text);
		for (const page of await pages('en')) {
			const guide = await read('en', page);
			let n = 0;
			for (const section of guide.sections) {
				for (const block of section.blocks) {
					if (block.lang !== 'ts' && block.lang !== 'svelte') continue;
					n++;
					const named = snippetPath(block.code);
					const path = join(project, named ?? `src/lib/${page.replace(/\.md$/, '')}-${n}.${block.lang}`);
					const where = `en/${page}:${block.line}`;
					if (files.has(path) || files.has(`${path}.ts`)) {
						failures.push(`${where}: another block is already ${named}`);
						continue;
					}
					if (block.lang === 'svelte') {
						try {
							compile(block.code, { filename: path, generate: false });
						} catch (e) {
							failures.push(`${where}: ${(e as Error).message}`);
						}
						const script = /<script lang="ts">([\s\S]*?)<\/script>/.exec(block.code)?.[1];
						if (script === undefined) continue;
						files.set(`${path}.ts`, script);
						origin.set(`${path}.ts`, where);
					} else {
						files.set(path, block.code);
						origin.set(path, where);
					}
				}
			}
		}
		const dirs = new Set<string>();
		for (const f of files.keys()) for (let d = dirname(f); d.startsWith(project); d = dirname(d)) dirs.add(d);

		const options: import('typescript').CompilerOptions = {
			strict: true,
			noEmit: true,
			target: ts.ScriptTarget.ES2022,
			// As a SvelteKit (Vite) project resolves: extensionless ./$types and $lib/... included.
			module: ts.ModuleKind.ESNext,
			moduleResolution: ts.ModuleResolutionKind.Bundler,
			allowImportingTsExtensions: true,
			skipLibCheck: true,
			types: ['node'],
			lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
			// The package by its published names, resolved to its sources; SvelteKit's $lib to the snippets' own.
			paths: {
				'supabase-jobs': [join(ROOT, 'src/lib/index.ts')],
				'supabase-jobs/svelte': [join(ROOT, 'src/lib/svelte/index.ts')],
				'supabase-jobs/kit': [join(ROOT, 'src/lib/kit.ts')],
				'supabase-jobs/node': [join(ROOT, 'src/lib/node.ts')],
				'supabase-jobs/worker': [join(ROOT, 'src/lib/worker.ts')],
				'supabase-jobs/adapter': [join(ROOT, 'src/lib/adapter.ts')],
				'$lib/*': [join(project, 'src/lib/*')],
			},
		};
		const host = ts.createCompilerHost(options);
		const disk = { fileExists: host.fileExists, readFile: host.readFile, getSourceFile: host.getSourceFile };
		const directoryExists = host.directoryExists?.bind(host);
		host.fileExists = (f) => files.has(f) || disk.fileExists(f);
		host.readFile = (f) => files.get(f) ?? disk.readFile(f);
		host.directoryExists = (d) => dirs.has(d) || (directoryExists ? directoryExists(d) : true);
		host.getSourceFile = (f, language, ...rest) => {
			const text = files.get(f);
			return text === undefined ? disk.getSourceFile(f, language, ...rest) : ts.createSourceFile(f, text, language);
		};
		const program = ts.createProgram(
			[...files.keys(), join(ROOT, 'node_modules/@sveltejs/kit/types/index.d.ts')],
			options,
			host,
		);
		for (const d of ts.getPreEmitDiagnostics(program)) {
			const file = d.file?.fileName ?? '';
			const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : undefined;
			const where = origin.get(file) ?? relative(ROOT, file);
			failures.push(
				`${where} (${relative(project, file)}${at ? `:${at}` : ''}): ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
			);
		}
		expect(failures).toEqual([]);
		expect(origin.size).toBeGreaterThan(15);
	});
});
