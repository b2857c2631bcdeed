/**
 * What every property file over the input surface shares: the three layers a
 * value can arrive by (JobStore over postgres.js, JobStore over supabase-js
 * through the stand-in, and the SQL functions called as PostgREST would), the
 * hostile values the generators mix in, and the one invariant: a call either
 * refuses with a typed error naming the field and writes nothing, or what it
 * wrote reads back as asked.
 */
import { expect } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { isJobError } from '../../src/lib/errors.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { claimsFor, serviceRole } from '../helpers/db.ts';
import { fc } from '../helpers/property.ts';
import { useRealtimeFixture, type RealtimeFixture } from '../realtime/helpers.ts';

export interface Surfaces {
	f: RealtimeFixture;
	/** The worker's store over each adapter (the service role). */
	stores: { name: 'postgres.js' | 'supabase-js'; store: JobStore }[];
}

/** A database, the stand-in over it, and a service-role store per adapter. */
export async function openSurfaces(): Promise<Surfaces> {
	const f = await useRealtimeFixture();
	return {
		f,
		stores: [
			{ name: 'postgres.js', store: new JobStore(postgresAdapter(f.db.sql, { claims: claimsFor(serviceRole) })) },
			{ name: 'supabase-js', store: new JobStore(f.harness.adapter({ role: 'service_role' })) },
		],
	};
}

// Hostile values, mixed into every generator.

/** Numbers no field should take at face value, and a few it should. */
export const hostileNumber = fc.constantFrom(
	Number.NaN,
	Number.POSITIVE_INFINITY,
	Number.NEGATIVE_INFINITY,
	1e300,
	-1e300,
	-0,
	0.5,
	-1,
	2 ** 31,
	-(2 ** 31) - 1,
	Number.MAX_SAFE_INTEGER + 2,
	Number.MIN_VALUE,
);

/** Any number: hostile ones, small integers, doubles. */
export const anyNumber = fc.oneof(hostileNumber, fc.integer({ min: -1000, max: 1000 }), fc.double());

/** Strings: empty, very long, NUL bytes, lone surrogates, astral characters, and ordinary text. */
export const hostileString = fc.oneof(
	fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfff', '😀', 'é\u0301', '\n', "'; drop table x; --"),
	fc.constant('a'.repeat(70_000)),
	fc.string({ unit: 'binary', maxLength: 40 }),
	fc.string({ maxLength: 40 }),
);

/** Dates at and past the ends of what JavaScript and PostgreSQL hold, an invalid one, and ordinary ones. */
export const hostileDate = fc.oneof(
	fc.constantFrom(
		new Date(8.64e15),
		new Date(-8.64e15),
		new Date(Number.NaN),
		new Date(0),
		new Date(-62198755200000), // year 0
		new Date(253402300800000), // year 10000
	),
	fc.date({
		min: new Date(Date.now() - 86_400_000),
		max: new Date(Date.now() + 365 * 86_400_000),
		noInvalidDate: true,
	}),
);

/** Values of the wrong type for any field. */
export const wrongType = fc.oneof(
	fc.constantFrom(null, true, false, [], {}, 'text', 42, [1, 2], { a: { b: { c: [] } } }),
	fc.jsonValue({ maxDepth: 3 }),
);

/** JSON objects, nested, with hostile keys and values. */
export const jsonObject = fc.dictionary(
	fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', '\u0000', '__proto__', 'constructor')),
	fc.jsonValue({ maxDepth: 3 }),
	{ maxKeys: 5 },
);

/** JSON objects PostgreSQL's jsonb can take (no NUL anywhere): what SQL callers can send at all. */
export const sqlJsonObject = jsonObject.filter((o) => !JSON.stringify(o).includes('\\u0000'));

/** What a field is sometimes given instead of its value: nothing, a wrong type, a hostile number or string. */
export function orHostile<T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
	return fc.oneof({ weight: 4, arbitrary: good }, hostileNumber, hostileString, wrongType);
}

/** An object with up to `max` of these fields (each drawn from its arbitrary), so most cases are about a few fields. */
export function someOf(fields: Record<string, fc.Arbitrary<unknown>>, max = 3): fc.Arbitrary<Record<string, unknown>> {
	const keys = Object.keys(fields);
	return fc
		.uniqueArray(fc.constantFrom(...keys), { maxLength: max })
		.chain((chosen) => fc.record(Object.fromEntries(chosen.map((k) => [k, fields[k]!]))))
		.map((o) => ({ ...o }));
}

/** A PostgreSQL array literal of text values (null elements as NULL), to send as text and cast in SQL. */
export function pgArray(values: readonly (string | null)[]): string {
	return `{${values.map((v) => (v === null ? 'NULL' : `"${v.replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`;
}

// The invariant.

/** True when `field` (as an error names it) names one of `fields`, an item path like `items[2].delayMs` included. */
function names(field: string | null | undefined, fields: readonly string[]): boolean {
	if (!field) return false;
	return fields.some(
		(f) => field === f || field.endsWith(`.${f}`) || field.startsWith(`${f}[`) || field.startsWith(`${f}.`),
	);
}

/**
 * The error a TypeScript call refused with is an Error, a JobError of code
 * invalid_input, and names (its field) one of `fields`.
 */
export function expectTypedRefusal(e: unknown, fields: readonly string[]): void {
	expect(e, 'an Error').toBeInstanceOf(Error);
	expect(isJobError(e), `a JobError: ${String(e)}`).toBe(true);
	const err = e as Error & { code: string; field?: string | null };
	expect(err.code, `code of ${err.message}`).toBe('invalid_input');
	expect(
		names(err.field, fields),
		`field ${String(err.field)} (${err.message}) names one of ${fields.join(', ')}`,
	).toBe(true);
}

/** The error a SQL call refused with is 22023 whose DETAIL field=... names one of the SQL `fields`. */
export function expectSqlRefusal(e: unknown, fields: readonly string[]): void {
	const err = e as { code?: string; message?: string; detail?: string };
	expect(err.code, `SQLSTATE of ${String(err.message)}`).toBe('22023');
	const field = /^field=(.*)$/.exec(err.detail ?? '')?.[1];
	expect(names(field, fields), `field ${String(field)} (${err.message}) names one of ${fields.join(', ')}`).toBe(true);
}

/** What a value becomes on the wire: JSON has no -0, no undefined member, no NaN. */
export const jsonRoundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

/**
 * The cases of one property both refused and stored, so neither branch was vacuous.
 * A replay of one case (`FC_PATH`) sees one outcome only: the check is not made then.
 */
export function expectBothOutcomes(seen: ReadonlySet<string>): void {
	if (process.env.FC_PATH) return;
	expect([...seen].sort(), 'the cases both refuse and store').toEqual(['refused', 'stored']);
}

/**
 * The invariant of every property: runs `call`; when it refuses, `refusal`
 * checks the error and `snapshot` must read the same as before; when it
 * resolves, `stored` checks what it wrote against what was asked.
 */
export async function refusedOrStored<T>(options: {
	call: () => Promise<T>;
	snapshot: () => Promise<unknown>;
	refusal: (e: unknown) => void;
	stored: (result: T) => Promise<void> | void;
}): Promise<'refused' | 'stored'> {
	const before = await options.snapshot();
	let result: { ok: true; value: T } | { ok: false; error: unknown };
	try {
		result = { ok: true, value: await options.call() };
	} catch (error) {
		result = { ok: false, error };
	}
	if (!result.ok) {
		options.refusal(result.error);
		expect(await options.snapshot(), 'nothing was written').toEqual(before);
		return 'refused';
	}
	await options.stored(result.value);
	return 'stored';
}

/** How the SQL properties call: `as(sql, serviceRole, fn)` sets role and claims in one transaction, as PostgREST does. */
export { as, serviceRole } from '../helpers/db.ts';
