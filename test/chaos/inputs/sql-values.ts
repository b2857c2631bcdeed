/**
 * Values for the SQL boundary, by parameter type and name: the malformed ones
 * a sweep sends, and a valid one for every other required parameter so the
 * bad value is what the function has to judge. All are PostgreSQL text, cast
 * in the statement (`$1::text::uuid`), so the server parses them itself.
 */
import { HOSTILE_STRINGS, NIL_UUID, NON_UUIDS } from './hostile.ts';

export interface SweepFixtures {
	/** A queued job of the calling user (for service_role: a running job, so worker checks apply). */
	ownJob: string;
	/** A queued job of another user. */
	otherUsersJob: string;
	/** The running job workers close and tick. */
	runningJob: string;
}

/**
 * Parameters that carry free text (a sentence, a stage, a key): only what no
 * text may hold (a NUL byte) and overlong values are bad there; the rest of
 * the hostile strings are content (checked verbatim elsewhere).
 */
export const FREE_TEXT_PARAMS = new Set([
	'error',
	'reason',
	'stage',
	'message',
	'value',
	'action',
	'prefix',
	'field',
	'secret',
	'error_code',
	'idempotency_key',
	'concurrency_key',
	'key',
	// A question for the user (ctx.ask) and a chunk of a job's streamed output.
	'prompt',
	'body',
]);

/** Sentences the database shortens (ending in `…`) rather than refuses: a worker's fail() must always close the row. */
export const SHORTENED_PARAMS = new Set(['error', 'reason']);

const entries = (o: Readonly<Record<string, string>>) => Object.entries(o);

const deepJson = '['.repeat(1000) + ']'.repeat(1000);
const veryDeepJson = '['.repeat(20_000) + ']'.repeat(20_000);
const bigObject = JSON.stringify({ text: 'x'.repeat(200_000) });

const JSON_MALFORMED: [string, string][] = [
	['unclosed', '{'],
	['string', '"just a string"'],
	['number', '42'],
	['nulEscape', '{"a": "\\u0000"}'],
	['deep', deepJson],
	['veryDeep', veryDeepJson],
	['big', bigObject],
	['trailingGarbage', '{} x'],
];

/** Malformed values for a parameter of `type` (as format_type names it), labelled. */
export function badValues(type: string, param: string): [string, string][] {
	const array = type.endsWith('[]');
	const base = array ? type.slice(0, -2) : type;
	if (!array && base === 'text' && FREE_TEXT_PARAMS.has(param)) {
		const values: [string, string][] = [
			['nulByte', HOSTILE_STRINGS.nulByte!],
			['long', 'k'.repeat(100_000)],
		];
		// A failure sentence is required: whitespace of any kind is no sentence.
		if (param === 'error') values.push(['blankLines', ' \n\t\r ']);
		return values;
	}
	if (array) {
		// Tags are labels the user writes: free text, bounded in number and length.
		const elements =
			base === 'uuid'
				? entries(NON_UUIDS)
				: param === 'tags'
					? [
							['empty', ''],
							['long', 'k'.repeat(10_000)],
						]
					: entries(HOSTILE_STRINGS).filter(([k]) => k !== 'long');
		return [
			['notAnArray', 'not an array'],
			['unclosed', '{'],
			...elements.map(([k, v]): [string, string] => [`element:${k}`, `{${JSON.stringify(v)}}`]),
			['thousandElements', `{${Array.from({ length: 1000 }, (_, i) => `e${i}`).join(',')}}`],
		];
	}
	switch (base) {
		case 'uuid':
			return entries(NON_UUIDS);
		case 'text':
		case 'character varying':
			return entries(HOSTILE_STRINGS);
		case 'smallint':
		case 'integer':
		case 'bigint':
			return [
				['fraction', '1.5'],
				['word', 'abc'],
				['empty', ''],
				['overflow', '99999999999999999999'],
				['nan', 'NaN'],
			];
		case 'real':
		case 'double precision':
		case 'numeric':
			return [
				['nan', 'NaN'],
				['infinity', 'Infinity'],
				['minusInfinity', '-Infinity'],
				['word', 'abc'],
				['overflow', '1e400'],
			];
		case 'jsonb':
		case 'json':
			// Timings are read leniently on purpose (src/lib/store/job.ts readTimings): only their being an object is checked.
			if (param === 'timings') return JSON_MALFORMED.filter(([k]) => k !== 'big');
			return JSON_MALFORMED;
		case 'bytea':
			return [
				['badHex', '\\xzz'],
				['oddHex', '\\x123'],
			];
		case 'timestamp with time zone':
			return [
				['word', 'garbage'],
				['badMonth', '2026-13-45'],
				['outOfRange', '294277-01-01 00:00:00+00'],
				['infinity', 'infinity'],
				['minusInfinity', '-infinity'],
			];
		case 'interval':
			return [
				['word', 'forever'],
				['unknownUnit', '1 fortnight'],
				['negative', '-1 day'],
				['overflow', '999999999 years'],
			];
		case 'boolean':
			return [
				['word', 'maybe'],
				['empty', ''],
			];
		case 'job_status':
			return [
				['unknown', 'finished'],
				['sqlQuote', "done'; --"],
				['empty', ''],
			];
		case 'regclass':
			return [
				['missing', 'no_such_table'],
				['catalog', 'pg_catalog.pg_authid'],
				['auth', 'auth.users'],
				['sqlQuote', "x'; drop table jobs"],
			];
		default:
			return [
				['word', 'garbage'],
				['unclosed', '('],
			];
	}
}

/** Ids that are well formed but name no job of the caller's (unknown, or another user's). */
export function foreignIds(fx: SweepFixtures, role: string): [string, string][] {
	const ids: [string, string][] = [['unknownId', NIL_UUID]];
	if (role === 'authenticated') ids.push(['otherUsersJob', fx.otherUsersJob]);
	return ids;
}

/** A valid value for a required parameter that is not the one under test. */
export function validValue(fn: string, param: string, type: string, role: string, fx: SweepFixtures): string {
	const ownId = role === 'service_role' ? fx.runningJob : fx.ownJob;
	switch (param) {
		case 'id':
		case 'job_id':
			return ownId;
		case 'ids':
		case 'candidates':
			return `{${ownId}}`;
		case 'kind':
			return 'chaos.known';
		case 'kinds':
			return '{chaos.known}';
		case 'job_table':
		case 'label':
			return 'jobs';
		case 'items':
			return fn === 'job_enqueue_many' ? '[{}]' : '[]';
		case 'schedules':
			return '[]';
		case 'error':
		case 'reason':
		case 'message':
			return 'The file could not be read.';
	}
	const array = type.endsWith('[]');
	if (array) return '{}';
	switch (type) {
		case 'uuid':
			return NIL_UUID;
		case 'smallint':
		case 'integer':
		case 'bigint':
		case 'real':
		case 'double precision':
		case 'numeric':
			return '1';
		case 'jsonb':
		case 'json':
			return '{}';
		case 'bytea':
			return '\\x00';
		case 'timestamp with time zone':
			return new Date().toISOString();
		case 'interval':
			return '1 second';
		case 'boolean':
			return 'false';
		case 'job_status':
			return 'queued';
		case 'regclass':
			return 'public.jobs';
		default:
			return 'chaos';
	}
}
