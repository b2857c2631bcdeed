/**
 * The components take their colours and spacing from `--sj-*` custom
 * properties, each read with its default as the fallback
 * (`var(--sj-muted, #6b7280)`), so an app themes them all from one place and
 * an app that sets none sees the defaults. The guide lists every property
 * with its default, in both languages, and this test holds the list to the
 * components.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SVELTE = join(ROOT, 'src/lib/svelte');
const GUIDES = { en: 'docs/guide/en/users.md', 'pt-BR': 'docs/guide/pt-BR/users.md' };

// prettier-ignore
const NAMED_COLOURS = ('aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet ' +
	'brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan ' +
	'darkgoldenrod darkgray darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred ' +
	'darksalmon darkseagreen darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue ' +
	'dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray ' +
	'green greenyellow grey honeydew hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen ' +
	'lemonchiffon lightblue lightcoral lightcyan lightgoldenrodyellow lightgray lightgreen lightgrey lightpink ' +
	'lightsalmon lightseagreen lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen ' +
	'linen magenta maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen mediumslateblue ' +
	'mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream mistyrose moccasin navajowhite navy ' +
	'oldlace olive olivedrab orange orangered orchid palegoldenrod palegreen paleturquoise palevioletred papayawhip ' +
	'peachpuff peru pink plum powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown ' +
	'seagreen seashell sienna silver skyblue slateblue slategray slategrey snow springgreen steelblue tan teal ' +
	'thistle tomato turquoise violet wheat white whitesmoke yellow yellowgreen transparent').split(' ');
const COLOUR = new RegExp(
	`#[0-9a-f]{3,8}\\b|\\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color|color-mix)\\(|(?<![\\w-])(?:${NAMED_COLOURS.join('|')})(?![\\w-])`,
	'i',
);
const SPACING = /^(?:margin|padding)(?:-[a-z-]+)?$|^(?:row-|column-)?gap$/;
/** A non-zero length; a pixel or less is a hairline (the visually hidden nudge), not a spacing. */
const LENGTH = /(-?\d*\.?\d+)(rem|em|px|%|ch|vh|vw)\b/g;

interface Declaration {
	property: string;
	value: string;
}

/** A component's CSS: its <style> block and its `style:` directives, without comments. */
function cssOf(source: string): Declaration[] {
	const style = /<style[^>]*>([\s\S]*?)<\/style>/.exec(source)?.[1] ?? '';
	const declarations = style
		.replace(/\/\*[\s\S]*?\*\//g, '')
		.split('}')
		.flatMap((rule) => (rule.split('{').at(-1) ?? '').split(';'))
		.map((part) => /^\s*([-\w]+)\s*:\s*([\s\S]+?)\s*$/.exec(part))
		.filter((m) => m !== null)
		.map((m) => ({ property: m[1]!, value: m[2]! }));
	const markup = source.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, '');
	for (const m of markup.matchAll(/\bstyle:([-\w]+)=(?:"([^"]*)"|\{([^}]*)\})/g)) {
		declarations.push({ property: m[1]!, value: m[2] ?? m[3] ?? '' });
	}
	for (const m of markup.matchAll(/\bstyle="([^"]*)"/g)) {
		for (const part of m[1]!.split(';')) {
			const d = /^\s*([-\w]+)\s*:\s*(.+?)\s*$/.exec(part);
			if (d) declarations.push({ property: d[1]!, value: d[2]! });
		}
	}
	return declarations;
}

/** Takes the `var(--sj-name, fallback)` out of a value, noting each; what is left is hard-coded. */
function splitThemed(value: string): { rest: string; themed: { name: string; fallback: string | null }[] } {
	const themed: { name: string; fallback: string | null }[] = [];
	let rest = '';
	let i = 0;
	while (i < value.length) {
		const m = /^var\(\s*(--sj-[a-z0-9-]+)\s*(,)?/.exec(value.slice(i));
		if (!m) {
			rest += value[i++];
			continue;
		}
		let depth = 1;
		let j = i + m[0].length;
		const start = j;
		while (j < value.length && depth > 0) {
			if (value[j] === '(') depth++;
			if (value[j] === ')') depth--;
			j++;
		}
		themed.push({ name: m[1]!, fallback: m[2] ? value.slice(start, j - 1).trim() : null });
		rest += ' ';
		i = j;
	}
	return { rest, themed };
}

/** What is wrong with one declaration: a hard-coded colour or spacing, or a --sj-* read without its default. */
function problemsOf({ property, value }: Declaration): string[] {
	const { rest, themed } = splitThemed(value);
	const problems: string[] = [];
	if (COLOUR.test(rest)) problems.push(`${property}: ${value} hard-codes a colour`);
	if (SPACING.test(property)) {
		const lengths = [...rest.matchAll(LENGTH)].filter(
			([, n, unit]) => Number(n) !== 0 && !(unit === 'px' && Math.abs(Number(n)) <= 1),
		);
		if (lengths.length) problems.push(`${property}: ${value} hard-codes a spacing`);
	}
	for (const t of themed)
		if (t.fallback === null) problems.push(`${property}: ${value} reads ${t.name} without a default`);
	return problems;
}

function files(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		return entry.isDirectory() ? files(path) : [path];
	});
}

const components = files(SVELTE)
	.filter((f) => f.endsWith('.svelte'))
	.map((f) => ({ file: relative(ROOT, f), css: cssOf(readFileSync(f, 'utf8')) }));

/** Every --sj-* property the components read, with the defaults they give it. */
function tokensUsed(): Map<string, Set<string>> {
	const tokens = new Map<string, Set<string>>();
	for (const { css } of components) {
		for (const d of css) {
			for (const t of splitThemed(d.value).themed) {
				if (t.fallback === null) continue;
				if (!tokens.has(t.name)) tokens.set(t.name, new Set());
				tokens.get(t.name)!.add(t.fallback);
			}
		}
	}
	return tokens;
}

/** The guide's theming table: `| \`--sj-name\` | \`default\` | ... |` rows. */
function tokensDocumented(file: string): Record<string, string> {
	const text = readFileSync(join(ROOT, file), 'utf8');
	const rows = [...text.matchAll(/^\|\s*`(--sj-[a-z0-9-]+)`\s*\|\s*`([^`]+)`\s*\|/gm)];
	return Object.fromEntries(rows.map((m) => [m[1]!, m[2]!]));
}

describe('the components are themed through --sj-* custom properties', () => {
	it('tells a hard-coded colour or spacing from one read through var(--sj-…, default)', () => {
		expect(problemsOf({ property: 'color', value: '#6b7280' })).toHaveLength(1);
		expect(problemsOf({ property: 'border', value: '1px solid rgb(0 0 0 / 10%)' })).toHaveLength(1);
		expect(problemsOf({ property: 'background', value: 'white' })).toHaveLength(1);
		expect(problemsOf({ property: '--_sj-fill', value: '#2563eb' })).toHaveLength(1);
		expect(problemsOf({ property: 'padding', value: '0.25rem var(--sj-space-3, 0.75rem)' })).toHaveLength(1);
		expect(problemsOf({ property: 'color', value: 'var(--sj-muted)' })).toHaveLength(1);
		expect(problemsOf({ property: 'color', value: 'var(--sj-muted, #6b7280)' })).toEqual([]);
		expect(problemsOf({ property: 'border', value: '1px solid var(--sj-border, #d1d5db)' })).toEqual([]);
		expect(problemsOf({ property: 'margin', value: 'var(--sj-space-4, 1rem) 0 var(--sj-space-2, 0.5rem)' })).toEqual(
			[],
		);
		expect(problemsOf({ property: 'margin', value: '-1px' })).toEqual([]);
		expect(problemsOf({ property: 'white-space', value: 'nowrap' })).toEqual([]);
		expect(problemsOf({ property: 'background', value: 'var(--_sj-fill)' })).toEqual([]);
	});

	it('finds the styles of every component', () => {
		expect(components.length).toBeGreaterThanOrEqual(16);
		expect(components.find((c) => c.file.endsWith('JobProgress.svelte'))!.css.length).toBeGreaterThan(20);
	});

	it('hard-codes no colour and no spacing in any component: each is a var(--sj-…, default)', () => {
		const problems = components.flatMap(({ file, css }) => css.flatMap(problemsOf).map((p) => `${file}: ${p}`));
		expect(problems).toEqual([]);
	});

	it('gives each --sj-* property one default everywhere it is read', () => {
		const mixed = [...tokensUsed()]
			.filter(([, defaults]) => defaults.size > 1)
			.map(([name, d]) => `${name}: ${[...d].join(' | ')}`);
		expect(mixed).toEqual([]);
	});

	for (const [language, file] of Object.entries(GUIDES)) {
		it(`lists every --sj-* property with its default in the ${language} guide, and no other`, () => {
			const used = Object.fromEntries([...tokensUsed()].map(([name, defaults]) => [name, [...defaults][0]!]));
			expect(Object.keys(used).length).toBeGreaterThan(20);
			expect(tokensDocumented(file)).toEqual(used);
		});
	}
});
