/**
 * How a question is answered, read from the JSON Schema its handler's zod
 * schema became (`z.toJSONSchema`): one of several, several of several, yes
 * or no, a number (whole or not, in a range), a date or a date and time, a
 * text (its length, its pattern). Each shape also says, in the page's
 * language, what an answer must be: the hint under the field, and the reason
 * a value is refused.
 */
import type { JobMessages } from './messages.ts';

/** One answer a choice offers: the value sent, and its key for `labels`. */
export interface QuestionOption {
	value: string | number | boolean | null;
	key: string;
}

/** The bounds of a number: inclusive (`min`, `max`) or not (`above`, `below`). */
export interface NumberBounds {
	min: number | null;
	max: number | null;
	above: number | null;
	below: number | null;
}

/**
 * How a question is answered; `unsupported` is not rendered.
 */
export type QuestionShape =
	| { kind: 'choice'; options: readonly QuestionOption[] }
	| { kind: 'several'; options: readonly QuestionOption[]; minItems: number | null; maxItems: number | null }
	| { kind: 'yesno' }
	| ({ kind: 'number'; integer: boolean } & NumberBounds)
	| { kind: 'date'; time: boolean }
	| { kind: 'text'; minLength: number | null; maxLength: number | null; pattern: string | null }
	| { kind: 'unsupported' };

type Schema = Record<string, unknown>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** zod writes the safe-integer range on every `.int()`: no bound a person needs told. */
const bound = (v: unknown): number | null => {
	const n = num(v);
	return n === null || Math.abs(n) >= Number.MAX_SAFE_INTEGER ? null : n;
};
const isLiteral = (v: unknown): v is QuestionOption['value'] =>
	v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** The literals of an enum, or of a union of literals (`anyOf`/`oneOf` of `const`); null for anything else. */
function literals(schema: Schema): QuestionOption[] | null {
	let values: unknown[] | null = null;
	if (Array.isArray(schema.enum)) values = schema.enum;
	else {
		const union = schema.anyOf ?? schema.oneOf;
		if (Array.isArray(union) && union.length > 0) {
			const consts = union.map((s: unknown) => {
				if (!s || typeof s !== 'object') return undefined;
				const o = s as Schema;
				if ('const' in o) return o.const;
				return Array.isArray(o.enum) && o.enum.length === 1 ? o.enum[0] : undefined;
			});
			if (consts.every((c) => c !== undefined)) values = consts;
		}
	}
	if (values === null || values.length === 0 || !values.every(isLiteral)) return null;
	return values.map((value) => ({ value: value as QuestionOption['value'], key: String(value) }));
}

/**
 * The shape of a question's answer, for the kinds a handler asks with zod's common types.
 *
 * @example
 * questionShape({ type: 'string', enum: ['en', 'pt-BR'] }).kind; // 'choice'
 * questionShape({ type: 'integer', minimum: 1, maximum: 5 }); // { kind: 'number', integer: true, min: 1, max: 5, ... }
 */
export function questionShape(schema: Schema): QuestionShape {
	const options = literals(schema);
	if (options) return { kind: 'choice', options };
	if (schema.type === 'boolean') return { kind: 'yesno' };
	if (schema.type === 'number' || schema.type === 'integer')
		return {
			kind: 'number',
			integer: schema.type === 'integer',
			min: bound(schema.minimum),
			max: bound(schema.maximum),
			above: bound(schema.exclusiveMinimum),
			below: bound(schema.exclusiveMaximum),
		};
	if (schema.type === 'array' && schema.items && typeof schema.items === 'object') {
		const items = literals(schema.items as Schema);
		if (items)
			return { kind: 'several', options: items, minItems: num(schema.minItems), maxItems: num(schema.maxItems) };
	}
	if (schema.type === 'string') {
		if (schema.format === 'date') return { kind: 'date', time: false };
		if (schema.format === 'date-time') return { kind: 'date', time: true };
		return {
			kind: 'text',
			minLength: num(schema.minLength),
			maxLength: num(schema.maxLength),
			pattern: typeof schema.pattern === 'string' ? schema.pattern : null,
		};
	}
	return { kind: 'unsupported' };
}

const fillIn = (text: string, values: Record<string, string | number>) =>
	text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));

/**
 * What an answer of this shape must be, as one sentence in the page's
 * language ("A whole number: at least 1, at most 10."); '' when nothing
 * needs saying. `description` (zod's `.describe()`) says what a pattern
 * means, when the handler wrote one.
 *
 * @example
 * constraintText({ kind: 'date', time: false }, JOB_MESSAGES.en); // 'A date (year-month-day).'
 */
export function constraintText(shape: QuestionShape, m: JobMessages, description?: unknown): string {
	const q = m.question;
	const parts: string[] = [];
	switch (shape.kind) {
		case 'number': {
			if (shape.min !== null) parts.push(fillIn(q.atLeast, { n: shape.min }));
			if (shape.above !== null) parts.push(fillIn(q.moreThan, { n: shape.above }));
			if (shape.max !== null) parts.push(fillIn(q.atMost, { n: shape.max }));
			if (shape.below !== null) parts.push(fillIn(q.lessThan, { n: shape.below }));
			return sentence(shape.integer ? q.integer : q.number, parts);
		}
		case 'date':
			return sentence(shape.time ? q.dateTime : q.date, []);
		case 'several': {
			const { minItems: min, maxItems: max } = shape;
			if (min !== null && max !== null) return sentence(fillIn(q.chooseBetween, { min, max }), []);
			if (min !== null) return sentence(fillIn(q.chooseAtLeast, { n: min }), []);
			if (max !== null) return sentence(fillIn(q.chooseAtMost, { n: max }), []);
			return sentence(q.chooseAny, []);
		}
		case 'choice':
		case 'yesno':
			return sentence(q.chooseOne, []);
		case 'text': {
			if (shape.minLength !== null && shape.minLength > 0) parts.push(fillIn(q.atLeastChars, { n: shape.minLength }));
			if (shape.maxLength !== null) parts.push(fillIn(q.atMostChars, { n: shape.maxLength }));
			if (shape.pattern !== null)
				parts.push(
					typeof description === 'string' && description.trim()
						? description.trim()
						: fillIn(q.pattern, { pattern: shape.pattern }),
				);
			return parts.length ? sentence(q.text, parts) : '';
		}
		default:
			return '';
	}
}

function sentence(head: string, parts: string[]): string {
	return parts.length ? `${head}: ${parts.join(', ')}.` : `${head}.`;
}

/**
 * The value typed into a field, as the schema wants it: a number as a
 * number (undefined when empty; NaN stays NaN and is refused), a date as the
 * `YYYY-MM-DD` the input gives, a date and time as an ISO string in UTC.
 *
 * @example
 * typedValue({ kind: 'date', time: true }, '2026-12-01T14:00'); // '2026-12-01T14:00:00.000Z' read in the browser's zone
 */
export function typedValue(shape: QuestionShape, raw: string): unknown {
	if (raw.trim() === '') return undefined;
	if (shape.kind === 'number') return Number(raw);
	if (shape.kind === 'date' && shape.time) {
		const at = new Date(raw);
		return Number.isNaN(at.getTime()) ? raw : at.toISOString();
	}
	return raw;
}
