// The kind names a kinds.ts declares, read from its text: every
// `defineJobKind({ name: '<literal>', ... })`. Read, not run: the file is
// TypeScript whose imports Deno's import map resolves, Node 20 cannot import
// it, and a check should not execute the app's code. init derives the kinds
// migration it writes from its own template this way, and `doctor` compares
// the same reading of the app's file with what the database has registered.

/**
 * The text with comments blanked out (strings and template literals kept), so
 * a commented-out kind does not count. Positions are preserved.
 * @param {string} text
 */
function withoutComments(text) {
	let out = '';
	let i = 0;
	while (i < text.length) {
		const c = text[i];
		const next = text[i + 1];
		if (c === '/' && next === '/') {
			const end = text.indexOf('\n', i);
			const stop = end < 0 ? text.length : end;
			out += ' '.repeat(stop - i);
			i = stop;
		} else if (c === '/' && next === '*') {
			const end = text.indexOf('*/', i + 2);
			const stop = end < 0 ? text.length : end + 2;
			out += text.slice(i, stop).replace(/[^\n]/g, ' ');
			i = stop;
		} else if (c === "'" || c === '"' || c === '`') {
			const start = i++;
			while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
			i++;
			out += text.slice(start, i);
		} else {
			out += c;
			i++;
		}
	}
	return out;
}

/**
 * The value of the `name` key at the top level of the object literal that
 * starts at `open` (a `{`): the literal, or null when it is not a plain string.
 * @param {string} text comments blanked
 * @param {number} open index of the `{`
 * @returns {{ name: string | null }}
 */
function nameKey(text, open) {
	let depth = 0;
	for (let i = open; i < text.length; i++) {
		const c = text[i];
		if (c === "'" || c === '"' || c === '`') {
			i++;
			while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
			continue;
		}
		if (c === '{' || c === '(' || c === '[') depth++;
		else if (c === '}' || c === ')' || c === ']') {
			depth--;
			if (depth === 0) break;
		} else if (depth === 1 && /[A-Za-z_$]/.test(c) && /[{,]\s*$/.test(text.slice(Math.max(open, i - 200), i))) {
			const key = /^([A-Za-z_$][\w$]*)\s*(:|,|\})/.exec(text.slice(i));
			if (key?.[1] === 'name') {
				if (key[2] !== ':') return { name: null };
				const value = /^name\s*:\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)"|`([^`\\$]*)`)\s*(?:,|\}|\n)/.exec(text.slice(i));
				return { name: value ? (value[1] ?? value[2] ?? value[3] ?? null) : null };
			}
			if (key) i += key[1].length - 1;
		}
	}
	return { name: null };
}

/**
 * Every kind a kinds module declares, in order: `names` read as string
 * literals, `unreadable` the line numbers of definitions whose name is
 * computed (a constant, a template with `${}`), which no reading can check.
 * @param {string} text the module's source
 * @returns {{ names: string[]; unreadable: number[] }}
 */
export function kindNamesIn(text) {
	const code = withoutComments(text);
	/** @type {string[]} */
	const names = [];
	/** @type {number[]} */
	const unreadable = [];
	const call = /\bdefineJobKind\s*(?:<[^>]*>\s*)?\(\s*\{/g;
	for (let m = call.exec(code); m; m = call.exec(code)) {
		const { name } = nameKey(code, m.index + m[0].length - 1);
		if (name === null) unreadable.push(code.slice(0, m.index).split('\n').length);
		else if (!names.includes(name)) names.push(name);
	}
	return { names, unreadable };
}
