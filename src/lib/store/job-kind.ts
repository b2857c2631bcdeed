/**
 * A kind of work declared once — its name, the zod schema of its params, and
 * optionally its measured phase plan — so enqueue, the handler and the page
 * are all typed from one place, and bad params are refused before any write.
 */
import type { z } from 'zod';
import { InvalidJobInputError } from '../errors.ts';
import type { JobParams } from './job.ts';

/**
 * A declared kind of work. Create it with {@link defineJobKind}.
 */
export interface JobKind<
	N extends string = string,
	S extends z.ZodType<JobParams> = z.ZodType<JobParams>,
	Plan = unknown,
	M extends z.ZodType<JobParams> = z.ZodType<JobParams>,
> {
	/** The `kind` column: the worker branches on it and the interface filters by it. */
	readonly name: N;
	/** The schema `params` must satisfy. */
	readonly params: S;
	/** The measured phase plan (a `PhasePlan`), when the kind declares one. */
	readonly plan: Plan | undefined;
	/** The schema of the job's metadata (`ctx.setMetadata`), when the kind declares one. */
	readonly metadata: M | undefined;
	/**
	 * The `error_code`s of this kind's failures that trying again cannot help
	 * (the same input fails the same way: an empty file, a binary file). A
	 * screen does not offer Try again for them and says why; empty when none.
	 */
	readonly permanentErrors: readonly string[];
	/**
	 * What people call this work, in their language (the `label` given to
	 * defineJobKind: by BCP 47 tag, e.g. `'pt-BR'`, else by language, else
	 * `'en'`); the name when no label was given. Screens show this, never the name.
	 */
	labelFor(locale?: string | null): string;
	/**
	 * Checks params against the schema and returns the parsed value, or throws
	 * {@link InvalidJobInputError} naming the field at fault.
	 */
	parseParams(value: unknown): z.output<S>;
	/**
	 * Checks metadata against the kind's schema, every key optional (a handler
	 * sets them one by one), and returns it; throws {@link InvalidJobInputError}
	 * naming the field (`metadata.pages`). Without a schema, any JSON object.
	 */
	parseMetadata(value: unknown): Partial<z.output<M>>;
}

/**
 * The metadata a kind's jobs carry (its schema's output type, every key
 * optional until the handler sets it).
 */
export type JobKindMetadata<K extends JobKind> = Partial<z.output<NonNullable<K['metadata']>>>;

/**
 * The params a kind accepts on enqueue (its schema's input type).
 */
export type JobKindInput<K extends JobKind> = z.input<K['params']>;

/**
 * The params a handler of a kind receives (its schema's output type).
 */
export type JobKindParams<K extends JobKind> = z.output<K['params']> & JobParams;

/**
 * The field at fault, as the database's DETAIL `field=<name>` would name it:
 * the zod issue path, dot-joined (`filename`, `pages.0`), or `params` for the whole object.
 */
function fieldOf(path: readonly PropertyKey[]): string {
	return path.length === 0 ? 'params' : path.map((p) => String(p)).join('.');
}

/**
 * Declares a kind of work. Its params are checked on enqueue, before any row
 * is written, and the error names the field.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { defineJobKind, PhasePlan } from 'supabase-jobs';
 *
 * export const extract = defineJobKind({
 *   name: 'extract',
 *   params: z.object({ filename: z.string().min(1) }),
 *   plan: PhasePlan.fromSeconds({ pdf: 1, table: 30, reading: 19 }),
 * });
 *
 * const job = await store.enqueue(extract, { params: { filename: 'tender.pdf' }, payload: bytes });
 * job.params.filename; // string
 * ```
 */
export function defineJobKind<
	N extends string,
	S extends z.ZodType<JobParams>,
	Plan = unknown,
	M extends z.ZodType<JobParams> = z.ZodType<JobParams>,
>(definition: {
	name: N;
	params: S;
	plan?: Plan;
	/** What people call it: one string, or one per locale (`{ en: 'Document analysis', 'pt-BR': 'Análise de documento' }`). */
	label?: string | Readonly<Record<string, string>>;
	/**
	 * The schema of what the handler reports about the work as it goes
	 * (`ctx.setMetadata({ pages: 12 })`): a zod object, every key optional on
	 * the way. Screens read it typed (`job.metadata`).
	 */
	metadata?: M;
	/** Error codes (`JobUserError`'s `errorCode`) of failures that trying again cannot help. @default [] */
	permanentErrors?: readonly string[];
}): JobKind<N, S, Plan, M> {
	const { name, params, plan, label, metadata } = definition;
	const permanentErrors = checkErrorCodes(name, definition.permanentErrors ?? []);
	if (typeof name !== 'string' || name === '') throw new TypeError('defineJobKind: name is required');
	// Checked here, where the mistake is made: otherwise the first enqueue would fail with "safeParse is not a function".
	if (typeof (params as { safeParse?: unknown } | undefined)?.safeParse !== 'function')
		throw new TypeError(
			`defineJobKind: params of ${name} must be a zod schema (e.g. z.object({ ... })); got ${typeof params}`,
		);
	if (metadata !== undefined && typeof (metadata as { safeParse?: unknown }).safeParse !== 'function')
		throw new TypeError(`defineJobKind: metadata of ${name} must be a zod schema (e.g. z.object({ ... }))`);
	if (label !== undefined && typeof label !== 'string' && (typeof label !== 'object' || label === null))
		throw new TypeError(`defineJobKind: label of ${name} is a string or an object of strings by locale`);
	// Keys are set one at a time: an object schema is checked with every key optional.
	const partialMetadata = (metadata as { partial?: () => z.ZodType } | undefined)?.partial?.() ?? metadata;
	return Object.freeze({
		name,
		params,
		plan,
		metadata,
		permanentErrors,
		parseMetadata(value: unknown): Partial<z.output<M>> {
			if (typeof value !== 'object' || value === null || Array.isArray(value))
				throw invalidMetadata(name, 'metadata', 'metadata is an object', undefined);
			if (!partialMetadata) return value as Partial<z.output<M>>;
			const result = partialMetadata.safeParse(value);
			if (result.success) return result.data as Partial<z.output<M>>;
			const issue = result.error.issues[0];
			const path = issue?.path ?? [];
			const field = path.length === 0 ? 'metadata' : `metadata.${path.map((p) => String(p)).join('.')}`;
			throw invalidMetadata(name, field, issue?.message ?? 'invalid', result.error);
		},
		labelFor(locale?: string | null): string {
			return labelIn(label, locale) ?? name;
		},
		parseParams(value: unknown): z.output<S> {
			const result = params.safeParse(value);
			if (result.success) return result.data;
			const issue = result.error.issues[0];
			const field = fieldOf(issue?.path ?? []);
			throw new InvalidJobInputError(`params for ${name} are invalid: ${field}: ${issue?.message ?? 'invalid'}`, {
				field,
				details: `field=${field}`,
				hint: 'Nothing was written.',
				cause: result.error,
			});
		},
	});
}

function invalidMetadata(kind: string, field: string, message: string, cause: unknown): InvalidJobInputError {
	return new InvalidJobInputError(`metadata for ${kind} is invalid: ${field}: ${message}`, {
		field,
		details: `field=${field}`,
		hint: 'Nothing was written.',
		cause,
	});
}

/** The label for a locale: the exact tag, else the same language, else English, else none. */
function labelIn(label: string | Readonly<Record<string, string>> | undefined, locale?: string | null): string | null {
	if (label === undefined) return null;
	if (typeof label === 'string') return label;
	const tags = Object.keys(label);
	const wanted = (locale ?? 'en').toLowerCase();
	const language = wanted.split(/[-_]/)[0];
	const tag =
		tags.find((t) => t.toLowerCase() === wanted) ??
		tags.find((t) => t.toLowerCase().split(/[-_]/)[0] === language) ??
		tags.find((t) => t.toLowerCase().split(/[-_]/)[0] === 'en');
	return tag === undefined ? null : (label[tag] ?? null);
}

/**
 * Whether a value is a kind made by {@link defineJobKind}, rather than a kind name.
 *
 * @internal
 * @example
 * ```ts
 * const name = isJobKind(kind) ? kind.name : kind;
 * ```
 */
export function isJobKind(value: unknown): value is JobKind {
	return (
		typeof value === 'object' &&
		value !== null &&
		typeof (value as JobKind).parseParams === 'function' &&
		typeof (value as JobKind).name === 'string'
	);
}

/** The kind's permanent error codes, each a snake_case identifier (what `error_code` holds), frozen. */
function checkErrorCodes(name: string, codes: readonly string[]): readonly string[] {
	if (!Array.isArray(codes))
		throw new TypeError(`defineJobKind: permanentErrors of ${name} is an array of error codes`);
	for (const code of codes)
		if (typeof code !== 'string' || !/^[a-z][a-z0-9_]{0,63}$/.test(code))
			throw new TypeError(
				`defineJobKind: permanentErrors of ${name} holds error codes (snake_case identifiers); got ${JSON.stringify(code)}`,
			);
	return Object.freeze([...codes]);
}
