/**
 * defineJobKind refuses a definition it could never use, at definition time:
 * a missing name or params that are not a schema are programmer mistakes
 * (TypeError), never a 4xx at the first enqueue.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';

describe('defineJobKind', () => {
	it('refuses a kind without a name', () => {
		expect(() => defineJobKind({ name: '', params: z.object({}) })).toThrow(
			new TypeError('defineJobKind: name is required'),
		);
	});

	it('refuses params that are not a zod schema, naming params and the kind', () => {
		expect(() => defineJobKind({ name: 'export.csv', params: undefined as never })).toThrow(
			/defineJobKind: params of export\.csv must be a zod schema/,
		);
		expect(() => defineJobKind({ name: 'export.csv', params: { rows: 'number' } as never })).toThrow(TypeError);
	});

	it('checks params against the schema and names the field at fault', () => {
		const kind = defineJobKind({ name: 'export.csv', params: z.object({ rows: z.number().int() }) });
		expect(kind.parseParams({ rows: 3 })).toEqual({ rows: 3 });
		expect(() => kind.parseParams({ rows: 'three' })).toThrow(
			expect.objectContaining({ code: 'invalid_input', field: 'rows' }),
		);
	});
});
