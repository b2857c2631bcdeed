/**
 * Hostile strings and malformed values, written once for every boundary.
 * `HOSTILE_STRINGS` are refused wherever a format is required (kind, job
 * table, locale, cursor); in free text (a stage, an error sentence) the valid
 * ones are data and must come back verbatim.
 */

/** Strings no format-checked field accepts. Named, so a failure says which one. */
export const HOSTILE_STRINGS: Readonly<Record<string, string>> = {
	empty: '',
	blank: '   ',
	sqlQuote: "x'; drop table public.jobs; --",
	sqlComment: 'x/* */or 1=1',
	sqlSemicolon: 'a;b',
	dollarQuote: '$$; select pg_sleep(10); $$',
	backslash: 'a\\b',
	doubleQuote: 'a"b',
	pathTraversal: '../../etc/passwd',
	nulByte: 'ok\u0000bad',
	controlChars: 'a\u0001\u001b[31mb',
	newline: 'a\nb',
	rtlOverride: 'abc\u202egpj.exe',
	emoji: '🔥📄✅',
	zeroWidth: 'a\u200bb',
	html: '<script>alert(1)</script>',
	htmlAttr: '"><img src=x onerror=alert(1)>',
	long: 'k'.repeat(10_000),
	loneSurrogate: 'a\ud800b',
	percentEncoded: '%27%3B%20drop',
	unicodeDigits: '١٢٣',
	whitespaceAround: ' extract ',
};

/** Free text that is valid content: stored and read back exactly as sent, never interpreted. */
export const HOSTILE_CONTENT: Readonly<Record<string, string>> = {
	sqlQuote: "x'; drop table public.jobs; --",
	dollarQuote: '$$; select pg_sleep(10); $$',
	backslash: 'a\\b\\\\c',
	html: '<script>alert(1)</script>',
	htmlAttr: '"><img src=x onerror=alert(1)>',
	rtlOverride: 'abc\u202egpj.exe',
	emoji: '🔥📄✅ 👩‍👩‍👧',
	zeroWidth: 'a\u200bb',
	newline: 'line one\nline two',
	cjk: '読み込めませんでした',
};

/** A UUID no row has. */
export const NIL_UUID = '00000000-0000-4000-8000-000000000000';

/** Text that is not a UUID, however it is read. */
export const NON_UUIDS: Readonly<Record<string, string>> = {
	word: 'not-a-uuid',
	empty: '',
	short: '1',
	sqlQuote: "' or 1=1 --",
	oneCharTooMany: '00000000-0000-4000-8000-0000000000000',
	badHex: '00000000-0000-4000-8000-00000000000g',
	nulByte: '00000000-0000-4000-8000-000000000000\u0000',
};
