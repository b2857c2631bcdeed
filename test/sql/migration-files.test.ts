/**
 * The migrations as the Supabase CLI and `npx supabase-jobs init` read them:
 * each is named <14-digit UTC timestamp>_<name>.sql with a timestamp that is a
 * real UTC time no later than the commit that added the file (now, for a file
 * not committed yet), opens with a comment saying what it holds, and fixes the
 * search_path of every function it creates, once.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { migrationsDir, projectRoot } from '../../src/local/postgres/migrate.ts';

const run = promisify(execFile);

/** The UTC time a 14-digit stamp names, or null when it names none (month 13, hour 30, 31 February). */
function stampTime(stamp: string): number | null {
	const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(stamp);
	if (!m) return null;
	const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
	const t = Date.UTC(y, mo - 1, d, h, mi, s);
	const back = new Date(t);
	const same =
		back.getUTCFullYear() === y &&
		back.getUTCMonth() === mo - 1 &&
		back.getUTCDate() === d &&
		back.getUTCHours() === h &&
		back.getUTCMinutes() === mi &&
		back.getUTCSeconds() === s;
	return same ? t : null;
}

/** When `path` was first committed (ms), or now when it is not committed. */
async function addedAt(path: string): Promise<number> {
	const { stdout } = await run('git', ['log', '--diff-filter=A', '--format=%ct', '--', path], { cwd: projectRoot });
	const times = stdout.split('\n').filter(Boolean).map(Number);
	return times.length ? Math.min(...times) * 1000 : Date.now();
}

/** The problems of one migration file's name, given when it was added. */
function nameProblems(file: string, added: number): string[] {
	const m = /^(\d{14})_([a-z0-9_]+)\.sql$/.exec(file);
	if (!m) return [`${file}: not <14-digit UTC timestamp>_<lowercase name>.sql`];
	const t = stampTime(m[1]!);
	if (t === null) return [`${file}: ${m[1]} is not a UTC time`];
	if (t > added) return [`${file}: ${m[1]} is later than the commit that added it (${new Date(added).toISOString()})`];
	return [];
}

const files = (await readdir(migrationsDir)).filter((f) => !f.startsWith('.')).sort();

describe('migration files', () => {
	it('the rule refuses hour 30, 31 February, a short stamp, a capital letter and a time after the commit', () => {
		const at = Date.UTC(2026, 11, 1, 16, 0, 0);
		expect(nameProblems('20261201155959_ok.sql', at)).toEqual([]);
		expect(nameProblems('20261201160000_ok.sql', at)).toEqual([]);
		for (const bad of [
			'20261202300000_hour_30.sql',
			'20260231000000_thirty_first_february.sql',
			'2026120116000_short.sql',
			'20261201150000_Capital.sql',
			'20261201160001_after_its_commit.sql',
			'20261201150000_no_extension',
		]) {
			expect(nameProblems(bad, at), bad).toHaveLength(1);
		}
	});

	it('each is named with a valid UTC timestamp no later than the commit that added it', async () => {
		expect(files.length).toBeGreaterThan(0);
		const problems: string[] = [];
		for (const f of files) problems.push(...nameProblems(f, await addedAt(join('supabase/migrations', f))));
		expect(problems).toEqual([]);
	});

	it('each opens with a comment and sets the search_path of every function it creates exactly once', async () => {
		for (const f of files) {
			const text = await readFile(join(migrationsDir, f), 'utf8');
			expect(text.startsWith('-- '), `${f} opens with a comment`).toBe(true);
			const functions = text.split(/^create (?:or replace )?function /im).slice(1);
			for (const fn of functions) {
				const head = fn.slice(0, fn.search(/^as \$/m));
				const name = fn.slice(0, fn.indexOf('('));
				expect(head.match(/^set search_path = ''$/gm) ?? [], `${f}: ${name}`).toHaveLength(1);
			}
		}
	});
});
