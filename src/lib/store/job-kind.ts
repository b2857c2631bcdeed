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
 *
 * @example
 * ```ts
 * const extract: JobKind<'extract', typeof schema> = defineJobKind({ name: 'extract', params: schema });
 * ```
 */
export interface JobKind<
	N extends string = string,
	S extends z.ZodType<JobParams> = z.ZodType<JobParams>,
	Plan = unknown,
> {
	/** The `kind` column: the worker branches on it and the interface filters by it. */
	readonly name: N;
	/** The schema `params` must satisfy. */
	readonly params: S;
	/** The measured phase plan (a `PhasePlan`), when the kind declares one. */
	readonly plan: Plan | undefined;
	/**
	 * Checks params against the schema and returns the parsed value, or throws
	 * {@link InvalidJobInputError} naming the field at fault.
	 */
	parseParams(value: unknown): z.output<S>;
}

/**
 * The params a kind accepts on enqueue (its schema's input type).
 *
 * @example
 * ```ts
 * const p: JobKindInput<typeof extract> = { filename: 'tender.pdf' };
 * ```
 */
export type JobKindInput<K extends JobKind> = z.input<K['params']>;

/**
 * The params a handler of a kind receives (its schema's output type).
 *
 * @example
 * ```ts
 * function handle(params: JobKindParams<typeof extract>) { return params.filename; }
 * ```
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
export function defineJobKind<N extends string, S extends z.ZodType<JobParams>, Plan = unknown>(definition: {
	name: N;
	params: S;
	plan?: Plan;
}): JobKind<N, S, Plan> {
	const { name, params, plan } = definition;
	if (typeof name !== 'string' || name === '') throw new TypeError('defineJobKind: name is required');
	// Checked here, where the mistake is made: otherwise the first enqueue would fail with "safeParse is not a function".
	if (typeof (params as { safeParse?: unknown } | undefined)?.safeParse !== 'function')
		throw new TypeError(
			`defineJobKind: params of ${name} must be a zod schema (e.g. z.object({ ... })); got ${typeof params}`,
		);
	return Object.freeze({
		name,
		params,
		plan,
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
