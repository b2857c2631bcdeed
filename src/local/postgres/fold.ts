/**
 * Folds a migration into supabase/schemas (before 0.2.0, when the baseline is
 * still generated): each `create or replace function` of the migration
 * replaces that function's one definition in the schema files, its
 * `comment on function` replaces (or follows) the function's comment, and an
 * `alter function ... set <name> = <value>` becomes a `set` line of the
 * function. Whatever else the migration says (grants, tables, data, a new
 * function) is listed for the person folding to place by hand.
 * Used by `npm run fold:migration` (scripts/fold-migration.ts). Local tooling.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { listSqlFiles, schemasDir } from './migrate.ts';

/** One top-level statement: its text (from its first token to its `;`) and where it sits. */
export interface Statement {
	text: string;
	start: number;
	end: number;
}

/** Splits SQL into top-level statements, skipping comments, quotes and dollar-quoted bodies. */
export function statements(sql: string): Statement[] {
	const out: Statement[] = [];
	let i = 0;
	let start = -1;
	while (i < sql.length) {
		const ch = sql[i]!;
		const next = sql[i + 1];
		if (ch === '-' && next === '-') {
			const eol = sql.indexOf('\n', i);
			i = eol < 0 ? sql.length : eol + 1;
			continue;
		}
		if (ch === '/' && next === '*') {
			const close = sql.indexOf('*/', i + 2);
			i = close < 0 ? sql.length : close + 2;
			continue;
		}
		if (/\s/.test(ch)) {
			i++;
			continue;
		}
		if (start < 0) start = i;
		if (ch === "'" || ch === '"') {
			let j = i + 1;
			while (j < sql.length) {
				if (sql[j] === ch && sql[j + 1] === ch) j += 2;
				else if (sql[j] === ch) break;
				else j++;
			}
			i = j + 1;
			continue;
		}
		const tag = ch === '$' ? /^\$[A-Za-z_]*\$/.exec(sql.slice(i)) : null;
		if (tag) {
			const close = sql.indexOf(tag[0], i + tag[0].length);
			i = close < 0 ? sql.length : close + tag[0].length;
			continue;
		}
		if (ch === ';') {
			out.push({ text: sql.slice(start, i + 1), start, end: i + 1 });
			start = -1;
		}
		i++;
	}
	if (start >= 0 && sql.slice(start).trim()) out.push({ text: sql.slice(start).trim(), start, end: sql.length });
	return out;
}

const qualified = (name: string) => (name.includes('.') ? name : `public.${name}`).replace(/"/g, '').toLowerCase();
const CREATE = /^create\s+(?:or\s+replace\s+)?function\s+([\w."]+)\s*\(/i;
const COMMENT = /^comment\s+on\s+function\s+([\w."]+)\s*(?:\(|\s+is\b)/i;
const ALTER_SET = /^alter\s+function\s+([\w."]+)\s*(?:\([^)]*\))?\s+set\s+(\w+)\s*(?:=|to)\s*(.+?);$/is;

export interface FoldResult {
	/** Functions whose definition was replaced, with the schema file. */
	replaced: { name: string; file: string }[];
	/** Statements left for the person folding: a new function, a grant, a table... */
	left: string[];
}

/**
 * Folds the migration text into the schema files of `dir`, in place.
 *
 * @example
 * const r = await foldMigration(await readFile(path, 'utf8'));
 * for (const s of r.left) console.log('place by hand:', s);
 */
export async function foldMigration(migration: string, dir = schemasDir): Promise<FoldResult> {
	const files = new Map<string, string>();
	for (const f of await listSqlFiles(dir)) files.set(f, await readFile(f, 'utf8'));
	const result: FoldResult = { replaced: [], left: [] };

	/** The schema file and statement defining function `name`, if any. */
	const find = (name: string, pattern: RegExp) => {
		for (const [file, text] of files) {
			const hit = statements(text).find((s) => {
				const m = pattern.exec(s.text);
				return m !== null && qualified(m[1]!) === name;
			});
			if (hit) return { file, text, hit };
		}
		return null;
	};

	for (const s of statements(migration)) {
		const create = CREATE.exec(s.text);
		const comment = COMMENT.exec(s.text);
		const alter = ALTER_SET.exec(s.text);
		if (create) {
			const name = qualified(create[1]!);
			const found = find(name, CREATE);
			if (!found) {
				result.left.push(
					`new function ${name}: add it to the file of its concern, its revoke and grants at the end of that file`,
				);
				continue;
			}
			files.set(found.file, found.text.slice(0, found.hit.start) + s.text + found.text.slice(found.hit.end));
			result.replaced.push({ name, file: basename(found.file) });
		} else if (comment) {
			const name = qualified(comment[1]!);
			const existing = find(name, COMMENT);
			const owner = find(name, CREATE);
			if (existing) {
				files.set(
					existing.file,
					existing.text.slice(0, existing.hit.start) + s.text + existing.text.slice(existing.hit.end),
				);
			} else if (owner) {
				files.set(owner.file, owner.text.slice(0, owner.hit.end) + '\n' + s.text + owner.text.slice(owner.hit.end));
			} else result.left.push(s.text.split('\n')[0]!);
		} else if (alter) {
			const name = qualified(alter[1]!);
			const owner = find(name, CREATE);
			const at = owner ? owner.hit.text.search(/^as\s+\$/im) : -1;
			if (!owner || at < 0) {
				result.left.push(s.text.split('\n')[0]!);
				continue;
			}
			const setting = `set ${alter[2]!.toLowerCase()} = ${alter[3]!.trim()}\n`;
			const [key] = setting.split(' = ');
			// A setting the definition already has is replaced, not repeated.
			const lines = owner.hit.text.slice(0, at).split('\n');
			const kept = lines.filter((l) => !l.trim().toLowerCase().startsWith(`${key} `)).join('\n');
			const text = kept + setting + owner.hit.text.slice(at);
			files.set(owner.file, owner.text.slice(0, owner.hit.start) + text + owner.text.slice(owner.hit.end));
		} else {
			result.left.push(s.text.split('\n')[0]!);
		}
	}
	for (const [file, text] of files) await writeFile(file, text);
	return result;
}
