/**
 * The quick start exists twice: README.md's section (English) and
 * docs/guide/pt-BR/quick-start.md. The prose is translated; the code is the
 * same, block for block, file marker for file marker, so the Portuguese reader
 * runs exactly what the README-as-written test builds.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeBlocks, quickStartSection, readmeQuickStart, ROOT } from '../readme/quick-start-blocks.ts';

describe('the quick start in pt-BR', () => {
	it('has the README section’s code blocks, identical and in the same order', async () => {
		const en = codeBlocks(await readmeQuickStart());
		const pt = codeBlocks(await readFile(join(ROOT, 'docs/guide/pt-BR/quick-start.md'), 'utf8'));
		expect(en.filter((b) => b.file).length).toBeGreaterThanOrEqual(5);
		expect(pt).toEqual(en);
	});

	it('is translated: no English sentence of the README section is left in its prose', async () => {
		const prose = (text: string) =>
			text
				.replace(/```[\s\S]*?```/g, '')
				.split(/\n\s*\n/)
				.map((p) => p.trim())
				.filter((p) => p && !p.startsWith('<!--') && !p.startsWith('#'));
		const en = prose(await readmeQuickStart());
		const pt = prose(await readFile(join(ROOT, 'docs/guide/pt-BR/quick-start.md'), 'utf8'));
		expect(pt.length).toBe(en.length);
		for (const paragraph of en) expect(pt).not.toContain(paragraph);
	});

	it('reads its markers strictly: a missing closing marker is an error; a block names its file on its first line', () => {
		expect(() => quickStartSection('<!-- quick-start -->\ntext\n')).toThrow(/quick-start/);
		expect(
			codeBlocks(
				'```ts\n// src/a.ts\nx;\n```\n```svelte\n<!-- src/routes/[id]/+page.svelte -->\n```\n```sh\n// ls\n```\n',
			),
		).toEqual([
			{ lang: 'ts', code: '// src/a.ts\nx;\n', file: 'src/a.ts' },
			{ lang: 'svelte', code: '<!-- src/routes/[id]/+page.svelte -->\n', file: 'src/routes/[id]/+page.svelte' },
			{ lang: 'sh', code: '// ls\n', file: null },
		]);
	});
});
