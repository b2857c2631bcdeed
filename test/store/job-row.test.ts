/**
 * parseJobRow reads the rows the adapters deliver without zod (the Node
 * runner parses every claimed row), and must read them exactly as the zod
 * schema does: same Job, and a row it cannot read still refused by name.
 */
import { describe, expect, it } from 'vitest';
import { jobRowSchema, parseJobRow } from '../../src/lib/store/job.ts';
import { isJobError } from '../../src/lib/errors.ts';

const row = (): Record<string, unknown> => ({
	id: '01a23379-9e17-7c42-8ba5-12edda5262d8',
	is_active: true,
	created_at: '2026-12-01T21:18:58.058342+00:00',
	updated_at: new Date('2026-12-01T21:18:59.000Z'),
	kind: 'noop',
	status: 'running',
	params: { i: 0 },
	payload: Buffer.from([1, 2, 3]),
	result_id: null,
	error: null,
	error_code: null,
	attempts: 1,
	max_attempts: 3,
	started_at: '2026-12-01T21:18:59.1+00:00',
	finished_at: null,
	progress: 12.5,
	stage: 'read',
	heartbeat_at: null,
	owner_id: null,
	locale: 'pt-BR',
	available_at: '2026-12-01T21:18:58.058342+00:00',
	timings: { read: { seconds: 2, size: 3 }, junk: 1 },
	job_table: 'jobs',
	heartbeat_ms: 5000,
	tags: ['a'],
	idempotency_key: null,
	idempotency_expires_at: null,
	priority: 2,
	expires_at: null,
	concurrency_key: 'k',
	parent_id: null,
	expected_seconds: 4.5,
	resumed_at: null,
	expected_end_at: null,
	retry_of: null,
	metadata: { pages: 3 },
});

describe('parseJobRow', () => {
	it('reads a row as the zod schema does: timestamps as Dates, the payload as a plain Uint8Array, bad timings skipped', () => {
		const fast = parseJobRow(row());
		expect(fast).toEqual(jobRowSchema.parse(row()));
		expect(fast.createdAt).toBeInstanceOf(Date);
		expect(fast.payload?.constructor).toBe(Uint8Array);
		expect(fast.timings).toEqual({ read: { seconds: 2, size: 3 } });
	});

	it('fills the columns an older job table lacks with the same defaults', () => {
		const older = row();
		for (const column of ['heartbeat_ms', 'tags', 'priority', 'parent_id', 'metadata', 'retry_of', 'expected_end_at'])
			delete older[column];
		expect(parseJobRow(older)).toEqual(jobRowSchema.parse(older));
		expect(parseJobRow(older)).toMatchObject({ tags: [], priority: 0, metadata: null, heartbeatMs: null });
	});

	it("reads PostgREST's hex payload too", () => {
		expect(parseJobRow({ ...row(), payload: '\\x0102ff' }).payload).toEqual(new Uint8Array([1, 2, 255]));
	});

	it('refuses a row it cannot read, naming the column', () => {
		for (const [column, value] of [
			['attempts', '1'],
			['status', 'sleeping'],
			['created_at', 'not a time'],
			['params', [1]],
			['tags', ['a', 2]],
			['progress', Number.NaN],
			['error', undefined],
		] as const) {
			let caught: unknown;
			try {
				parseJobRow({ ...row(), [column]: value });
			} catch (e) {
				caught = e;
			}
			expect(isJobError(caught, 'unexpected_row'), column).toBe(true);
			expect((caught as Error).message, column).toContain(column);
		}
	});
});
