/**
 * Facts the docs state in prose and tables, checked against the code that
 * decides them: the HTTP status PostgREST gives each error's SQLSTATE (as the
 * stand-in maps it, from PostgREST's own mapSQLtoHTTP), what `toHttpError`
 * makes of it, and the job states the guides list.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SQLSTATE_TO_ERROR } from '../../src/lib/internal/map-sql-error.ts';
import { httpStatusOf } from '../../src/lib/kit.ts';
import { JOB_STATUSES } from '../../src/lib/state.ts';
import { statusForSqlState } from '../../src/local/standin/rest/errors.ts';
import { projectRoot } from '../../src/local/postgres/migrate.ts';
import { readGuide } from './guide-sections.ts';

const read = (path: string) => readFile(join(projectRoot, path), 'utf8');

/** The rows of the first markdown table whose header row contains `header`, as cells. */
function tableWith(text: string, header: string): string[][] {
	const lines = text.split('\n');
	const start = lines.findIndex((l) => l.startsWith('|') && l.includes(header));
	if (start < 0) throw new Error(`no table with "${header}"`);
	const rows: string[][] = [];
	for (const line of lines.slice(start + 2)) {
		if (!line.startsWith('|')) break;
		rows.push(
			line
				.slice(1, -1)
				.split('|')
				.map((c) => c.trim()),
		);
	}
	return rows;
}

/** The error class each SQLSTATE becomes, by the class's name; and the first SQLSTATE of each class. */
const classOf = (sqlstate: string) => SQLSTATE_TO_ERROR[sqlstate]?.('x', {}).name;
const sqlstateOf = (name: string) => Object.keys(SQLSTATE_TO_ERROR).find((code) => classOf(code) === name);

/** What PostgREST answers a user (authenticated) and anon for this SQLSTATE, as the docs write it. */
function postgrestStatus(sqlstate: string): string {
	const authed = statusForSqlState(sqlstate, 'x', true);
	const anon = statusForSqlState(sqlstate, 'x', false);
	return authed === anon ? String(authed) : `${anon}/${authed}`;
}

describe('what the docs say about errors is what the code does', () => {
	it('docs/sql-api.md: each SQLSTATE becomes the class shown, PostgREST answers the status shown, and toHttpError throws the status shown', async () => {
		const rows = tableWith(await read('docs/sql-api.md'), 'HTTP via PostgREST');
		expect(rows.length).toBeGreaterThanOrEqual(10);
		const wrong: string[] = [];
		for (const [sqlstate, cls, http, kit] of rows as [string, string, string, string][]) {
			const name = /`(\w+Error)`/.exec(cls)?.[1];
			if (classOf(sqlstate) !== name)
				wrong.push(`${sqlstate}: the docs say ${name}, the code makes ${classOf(sqlstate)}`);
			if (http !== postgrestStatus(sqlstate))
				wrong.push(`${sqlstate}: the docs say HTTP ${http}, PostgREST answers ${postgrestStatus(sqlstate)}`);
			const thrown = httpStatusOf({ code: sqlstate, message: 'x' });
			const shown = /^\d{3}/.exec(kit)?.[0];
			if ((thrown === null ? 'rethrown' : String(thrown)) !== (shown ?? kit.split(' ')[0]))
				wrong.push(`${sqlstate}: the docs say toHttpError gives ${kit}, it gives ${thrown ?? 'a rethrow'}`);
		}
		expect(wrong).toEqual([]);
	});

	it('the guides (en and pt-BR): each error class has the HTTP status PostgREST gives its SQLSTATE', async () => {
		const wrong: string[] = [];
		for (const language of ['en', 'pt-BR']) {
			const rows = tableWith(await read(`docs/guide/${language}/users.md`), '`code`');
			expect(rows.length, language).toBeGreaterThanOrEqual(10);
			for (const cells of rows) {
				const name = /`(\w+Error)`/.exec(cells[0]!)?.[1];
				const http = cells.at(-1)!;
				const sqlstate = name === undefined ? undefined : sqlstateOf(name);
				const expected = sqlstate === undefined ? '—' : postgrestStatus(sqlstate);
				if (http !== expected) wrong.push(`${language}: ${name} says HTTP ${http}, PostgREST answers ${expected}`);
			}
		}
		expect(wrong).toEqual([]);
	});

	it('the check itself: 55000 is a 500 through PostgREST, and a quota error a 429 from toHttpError', () => {
		expect(postgrestStatus('55000')).toBe('500');
		expect(postgrestStatus('42501')).toBe('401/403');
		expect(httpStatusOf({ code: 'PT429', message: 'x' })).toBe(429);
	});
});

describe('what the docs say about states is what the code does', () => {
	it('the guides’ state-machine section names every job status, in both languages', async () => {
		for (const language of ['en', 'pt-BR']) {
			const text = await read(`docs/guide/${language}/users.md`);
			const section = readGuide(text).sections.find((s) => s.id === 'state-machine');
			expect(section, language).toBeDefined();
			// The section's text: from its heading to the next anchor.
			const body = text.split('\n').slice(section!.line).join('\n').split('<a id=')[0]!;
			for (const status of JOB_STATUSES) expect(body, `${language}: ${status}`).toContain(`\`${status}\``);
		}
	});
});

describe('the limits the docs state are the SQL limits', () => {
	it('the replay bound: the operators guides (en and pt-BR) and JobStore.replay state supabase_jobs.batch_max()', async () => {
		const limits = await read('supabase/schemas/02_limits_and_checks.sql');
		const body = /function supabase_jobs\.batch_max\(\)[\s\S]*?return (\d+);/.exec(limits);
		const max = Number(body![1]);
		expect(max).toBeGreaterThan(0);
		expect(await read('docs/guide/en/operators.md')).toContain(
			`A replay takes at most \`supabase_jobs.batch_max()\` (${max.toLocaleString('en')}) jobs`,
		);
		expect(await read('docs/guide/pt-BR/operators.md')).toContain(
			`Uma reexecução leva no máximo \`supabase_jobs.batch_max()\` (${max.toLocaleString('pt-BR')}) jobs`,
		);
		expect(await read('src/lib/store/job-store.ts')).toContain(
			`batch limit (\`supabase_jobs.batch_max()\`, ${max.toLocaleString('en')})`,
		);
	});
});
