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

	it('reads a timestamp as Date reads it, whatever its fraction, offset or date, and refuses one Date refuses', () => {
		const texts = [
			'2026-12-02T00:28:29.123456+00:00',
			'2026-12-02T00:28:29+00:00',
			'2026-12-02T00:28:29.1+05:30',
			'2026-12-02T23:59:59.999999-03:00',
			'2026-12-02T00:28:29.12Z',
			'2026-02-31T00:00:00+00:00',
			'2026-12-02T24:00:00Z',
			'0099-05-05T00:00:00+00:00',
			'2026-12-02 00:28:29+00',
			'2026-12-02T00:28:29.123456+0000',
		];
		for (let i = 0; i < 2000; i++) {
			const offset = ((i * 37) % 96) * 15 - 720;
			const local = new Date(1_700_000_000_000 + i * 987_654_321 + offset * 60_000).toISOString().slice(0, 23);
			const sign = offset < 0 ? '-' : '+';
			const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
			const mm = String(Math.abs(offset) % 60).padStart(2, '0');
			texts.push(`${local}${String(i % 1000).padStart(3, '0')}${sign}${hh}:${mm}`);
		}
		for (const text of texts)
			expect(parseJobRow({ ...row(), created_at: text }).createdAt.getTime(), text).toBe(new Date(text).getTime());
		for (const text of ['2026-13-02T00:28:29+00:00', '2026-12-02T00:28:29.+00:00', '2026-12-02T00:28:29.5-11']) {
			expect(Number.isNaN(new Date(text).getTime()), text).toBe(true);
			expect(() => parseJobRow({ ...row(), created_at: text }), text).toThrow(/created_at/);
		}
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
