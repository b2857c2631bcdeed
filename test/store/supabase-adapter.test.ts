/**
 * supabaseAdapter's request and error mapping, against a tiny stand-in for
 * PostgREST's HTTP side passed to createClient({ global: { fetch } }): it
 * records each request and answers PostgREST-shaped bodies. The database
 * behaviour itself is covered by the conformance suite (over postgres.js here,
 * over supabase-js with the stand-in server); this file pins the transport.
 */
import { createClient } from '@supabase/supabase-js';
import { describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import {
	DatabaseError,
	IllegalTransitionError,
	InvalidJobInputError,
	JobAlreadyFinishedError,
	JobCancelledError,
	JobNotFoundError,
	JobNotRunningError,
	PermissionDeniedError,
	StaleAfterRequiredError,
	UnknownJobTableError,
} from '../../src/lib/errors.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';

interface Recorded {
	method: string;
	url: URL;
	headers: Headers;
	body: unknown;
}

type Reply = { status: number; body: unknown };

/** A fetch that answers like PostgREST would, per RPC name, and records every request. */
function fakePostgrest(answer: (fn: string, body: Record<string, unknown>) => Reply) {
	const requests: Recorded[] = [];
	const fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
		const url = new URL(input instanceof Request ? input.url : String(input));
		const body = typeof init.body === 'string' ? JSON.parse(init.body) : null;
		requests.push({ method: init.method ?? 'GET', url, headers: new Headers(init.headers), body });
		const fn = url.pathname.replace('/rest/v1/rpc/', '');
		const reply = answer(fn, body ?? {});
		return new Response(reply.status === 204 ? null : JSON.stringify(reply.body), {
			status: reply.status,
			headers: { 'content-type': 'application/json; charset=utf-8' },
		});
	};
	const client = createClient('http://stand.in', 'sb_publishable_test', {
		global: { fetch },
		auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
		// Node 20 has no global WebSocket; realtime is never connected here, but the client wants a transport.
		realtime: { transport: WebSocket as never },
	});
	return { client, requests };
}

const ID = '2b0c6f7e-8a3d-4c1e-9f5a-0d1e2f3a4b5c';

/** A job row exactly as PostgREST renders it: ISO timestamps with microseconds, bytea as \x hex. */
function row(overrides: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		id: ID,
		is_active: true,
		created_at: '2026-11-30T14:00:00.123456+00:00',
		updated_at: '2026-11-30T14:00:00.123456+00:00',
		kind: 'extract',
		status: 'queued',
		params: { filename: 'tender.pdf' },
		payload: null,
		result_id: null,
		error: null,
		error_code: null,
		attempts: 0,
		max_attempts: 3,
		started_at: null,
		finished_at: null,
		progress: 0,
		stage: null,
		heartbeat_at: null,
		owner_id: null,
		locale: null,
		available_at: '2026-11-30T14:00:00.123456+00:00',
		timings: null,
		...overrides,
	};
}

describe('supabaseAdapter: requests', () => {
	test("enqueue is one RPC with named args; the payload goes as PostgREST's bytea hex", async () => {
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: row() }));
		const store = new JobStore(supabaseAdapter(client));
		const job = await store.enqueue('extract', {
			params: { filename: 'tender.pdf' },
			payload: new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff]),
			maxAttempts: 5,
			locale: 'pt-BR',
		});
		expect(requests).toHaveLength(1);
		const [req] = requests;
		expect(req!.method).toBe('POST');
		expect(req!.url.pathname).toBe('/rest/v1/rpc/job_enqueue');
		expect(req!.body).toEqual({
			kind: 'extract',
			params: { filename: 'tender.pdf' },
			payload: '\\x25504446' + '00ff',
			max_attempts: 5,
			locale: 'pt-BR',
			job_table: 'jobs',
		});
		expect(job).toMatchObject({ id: ID, status: 'queued', params: { filename: 'tender.pdf' }, payload: null });
		expect(job.createdAt).toEqual(new Date('2026-11-30T14:00:00.123Z'));
	});

	test('a text payload is sent as its UTF-8 bytes', async () => {
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: row() }));
		await new JobStore(supabaseAdapter(client)).enqueue('extract', { payload: 'ã' });
		expect((requests[0]!.body as Record<string, unknown>).payload).toBe('\\xc3a3');
	});

	test('every byte value goes as two hex digits; the documented 10 MiB maximum is encoded in seconds, not tens of seconds', async () => {
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: row() }));
		const store = new JobStore(supabaseAdapter(client));
		await store.enqueue('extract', { payload: Uint8Array.from({ length: 256 }, (_, i) => i) });
		const expected = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).join('');
		expect((requests[0]!.body as Record<string, unknown>).payload).toBe(`\\x${expected}`);
		// Appending to a string took ~18 s for the documented maximum; a byte array takes ~0.1 s.
		const started = performance.now();
		await store.enqueue('extract', { payload: new Uint8Array(10 * 1024 * 1024).fill(0xab) });
		expect(performance.now() - started).toBeLessThan(5000);
		const sent = (requests[1]!.body as Record<string, string>).payload!;
		expect(sent).toHaveLength(2 + 2 * 10 * 1024 * 1024);
		expect(sent.slice(0, 6)).toBe('\\xabab');
	});

	test('claim turns the hex payload into bytes; an empty set means the job is not yours', async () => {
		let answer: unknown = [
			row({ status: 'running', attempts: 1, started_at: '2026-11-30T14:00:01.5+00:00', payload: '\\x2550444600ff' }),
		];
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: answer }));
		const store = new JobStore(supabaseAdapter(client));
		const job = await store.claim(ID);
		expect(job?.payload).toEqual(new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff]));
		expect(job?.startedAt).toEqual(new Date('2026-11-30T14:00:01.500Z'));
		expect(requests[0]!.body).toEqual({ id: ID, job_table: 'jobs' });
		answer = [];
		expect(await store.claim(ID)).toBeNull();
	});

	test('tick returns the bare status PostgREST answers for a scalar function', async () => {
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: 'cancelled' }));
		expect(await new JobStore(supabaseAdapter(client)).tick(ID, { progress: 42.5, stage: 'reading', attempt: 2 })).toBe(
			'cancelled',
		);
		expect(requests[0]!.body).toEqual({ id: ID, progress: 42.5, stage: 'reading', attempt: 2, job_table: 'jobs' });
	});

	test('intervals travel as text: retry delay and reclaim stale_after', async () => {
		const { client, requests } = fakePostgrest((fn) => ({
			status: 200,
			body: fn === 'job_reclaim_stale' ? [] : row({ status: 'queued', error: 'busy', error_code: 'retrying' }),
		}));
		const store = new JobStore(supabaseAdapter(client), { table: 'exports', staleAfterMs: 300_000 });
		await store.retry(ID, 'busy', { delaySeconds: 1.5, attempt: 1 });
		expect(await store.reclaimStale()).toEqual([]);
		expect(requests.map((r) => r.body)).toEqual([
			{ id: ID, error: 'busy', delay: '1.5 seconds', attempt: 1, job_table: 'exports' },
			{ stale_after: '300 seconds', job_table: 'exports' },
		]);
	});

	test('plural statuses go as one JSON array; nextCursor keeps the microseconds PostgREST sent', async () => {
		const rows = [
			row({ id: 'aaaaaaaa-0000-4000-8000-000000000001', created_at: '2026-11-30T14:00:00.000200+00:00' }),
			row({ id: 'aaaaaaaa-0000-4000-8000-000000000002', created_at: '2026-11-30T14:00:00.000100+00:00' }),
			// The row past the page: it only says that another page exists.
			row({ id: 'aaaaaaaa-0000-4000-8000-000000000003', created_at: '2026-11-30T14:00:00.000000+00:00' }),
		];
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: rows }));
		const page = await new JobStore(supabaseAdapter(client)).listRecent({
			kind: 'extract',
			statuses: ['queued', 'running'],
			limit: 2,
		});
		expect(requests[0]!.body).toEqual({
			kind: 'extract',
			statuses: ['queued', 'running'],
			limit: 3,
			job_table: 'jobs',
		});
		expect(page.jobs).toHaveLength(2);
		expect(page.nextCursor).toBe('2026-11-30T14:00:00.000100+00:00~aaaaaaaa-0000-4000-8000-000000000002');
	});

	test('cancel: [] (nothing to stop) is null, not an error', async () => {
		const { client } = fakePostgrest(() => ({ status: 200, body: [] }));
		expect(await new JobStore(supabaseAdapter(client)).cancel(ID, { reason: 'by the user' })).toBeNull();
	});

	test('phaseHistory reads the timings of each row', async () => {
		const { client, requests } = fakePostgrest(() => ({
			status: 200,
			body: [{ timings: { table: { seconds: 30, size: 4000 } }, finished_at: '2026-11-30T14:00:00+00:00' }],
		}));
		expect(await new JobStore(supabaseAdapter(client)).phaseHistory('extract', 10)).toEqual([
			{ table: { seconds: 30, size: 4000 } },
		]);
		expect(requests[0]!.url.pathname).toBe('/rest/v1/rpc/job_phase_history');
		expect(requests[0]!.body).toEqual({ kind: 'extract', limit: 10, job_table: 'jobs' });
	});

	test('a schema other than public is sent as Content-Profile', async () => {
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: row() }));
		await new JobStore(supabaseAdapter(client, { schema: 'jobs_api' })).get(ID);
		expect(requests[0]!.headers.get('content-profile')).toBe('jobs_api');
	});

	test('refusals made in TypeScript send no request at all', async () => {
		const { client, requests } = fakePostgrest(() => ({ status: 200, body: [] }));
		const store = new JobStore(supabaseAdapter(client));
		await expect(store.reclaimStale()).rejects.toBeInstanceOf(StaleAfterRequiredError);
		await expect(store.tick(ID, { progress: Number.NaN })).rejects.toBeInstanceOf(InvalidJobInputError); // JSON would send null
		await expect(store.get('not-a-uuid')).rejects.toBeInstanceOf(JobNotFoundError);
		expect(requests).toEqual([]);
	});
});

describe('supabaseAdapter: PostgREST error bodies come out as the same classes as postgres.js errors', () => {
	const cases = [
		{ status: 404, code: 'PT404', cls: JobNotFoundError, name: 'JobNotFoundError' },
		{ status: 409, code: 'PT409', cls: JobAlreadyFinishedError, name: 'JobAlreadyFinishedError' },
		{ status: 410, code: 'PT410', cls: JobCancelledError, name: 'JobCancelledError' },
		{ status: 400, code: '55000', cls: JobNotRunningError, name: 'JobNotRunningError' },
		{ status: 400, code: 'SJ001', cls: IllegalTransitionError, name: 'IllegalTransitionError' },
		{ status: 400, code: '22004', cls: StaleAfterRequiredError, name: 'StaleAfterRequiredError' },
		{ status: 404, code: '42P01', cls: UnknownJobTableError, name: 'UnknownJobTableError' },
		{ status: 403, code: '42501', cls: PermissionDeniedError, name: 'PermissionDeniedError' },
	] as const;
	for (const c of cases) {
		test(`${c.code} (HTTP ${c.status}) -> ${c.name}`, async () => {
			const { client } = fakePostgrest(() => ({
				status: c.status,
				body: { code: c.code, message: `refused: ${c.code}`, details: null, hint: 'a hint' },
			}));
			const e = await new JobStore(supabaseAdapter(client)).succeed(ID).catch((err: unknown) => err);
			expect(e).toBeInstanceOf(c.cls);
			expect((e as Error).name).toBe(c.name);
			expect(e).toMatchObject({ message: `refused: ${c.code}`, hint: 'a hint' });
		});
	}

	test('succeed refuses to land on top of a cancellation: PT410 is a JobAlreadyFinishedError too', async () => {
		const { client } = fakePostgrest(() => ({
			status: 410,
			body: { code: 'PT410', message: 'job was cancelled; cannot succeed it', details: null, hint: null },
		}));
		const e = await new JobStore(supabaseAdapter(client)).succeed(ID).catch((err: unknown) => err);
		expect(e).toBeInstanceOf(JobCancelledError);
		expect(e).toBeInstanceOf(JobAlreadyFinishedError);
	});

	test('22023 -> InvalidJobInputError naming the field from DETAIL', async () => {
		const { client } = fakePostgrest(() => ({
			status: 400,
			body: {
				code: '22023',
				message: 'locale must be a language tag',
				details: 'field=locale',
				hint: 'Nothing was written.',
			},
		}));
		const e = await new JobStore(supabaseAdapter(client))
			.enqueue('extract', { locale: 'xx_bad' })
			.catch((err: unknown) => err);
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect((e as InvalidJobInputError).field).toBe('locale');
	});

	test('a watch tries again after a failure of no known code (a DatabaseError) and ends on the terminal row', async () => {
		let calls = 0;
		const { client } = fakePostgrest(() =>
			++calls === 1
				? { status: 503, body: { message: 'upstream unavailable' } }
				: { status: 200, body: row({ status: 'done', progress: 100, finished_at: '2026-11-30T14:01:00+00:00' }) },
		);
		const store = new JobStore(supabaseAdapter(client, { realtime: false }));
		const seen: string[] = [];
		for await (const job of store.watch(ID, { intervalMs: 10, transport: 'poll' })) seen.push(job.status);
		expect(seen).toEqual(['done']);
		expect(calls).toBeGreaterThanOrEqual(2);
	});

	test('an error PostgREST raises itself (unknown function, PGRST202) is a DatabaseError keeping its code', async () => {
		const { client } = fakePostgrest(() => ({
			status: 404,
			body: { code: 'PGRST202', message: 'Could not find the function public.job_get', details: null, hint: null },
		}));
		const e = await new JobStore(supabaseAdapter(client)).get(ID).catch((err: unknown) => err);
		expect(e).toBeInstanceOf(DatabaseError);
		expect(e).toMatchObject({ code: 'database_error', sqlstate: 'PGRST202' });
		expect(e).not.toBeInstanceOf(JobNotFoundError);
	});
});

describe('supabaseAdapter: batches in pieces of at most maxRows (PostgREST cuts longer replies)', () => {
	const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

	test('enqueueMany of 5 items with maxRows 2 sends 3 calls of 2, 2 and 1 items, in order, and returns the 5 ids', async () => {
		let next = 0;
		const { client, requests } = fakePostgrest((_, body) => ({
			status: 200,
			body: (body.items as unknown[]).map(() => ({ id: uuid(next++) })),
		}));
		const store = new JobStore(supabaseAdapter(client, { maxRows: 2, realtime: false }));
		const ids = await store.enqueueMany(
			'extract',
			Array.from({ length: 5 }, (_, i) => ({ params: { i } })),
		);
		expect(ids).toEqual([0, 1, 2, 3, 4].map(uuid));
		expect(
			requests.map((r) => (r.body as { items: { params: { i: number } }[] }).items.map((it) => it.params.i)),
		).toEqual([[0, 1], [2, 3], [4]]);
	});

	test('replay asks for maxRows jobs a call (limit) until a call returns fewer', async () => {
		const pages = [2, 2, 1];
		let n = 0;
		const { client, requests } = fakePostgrest(() => ({
			status: 200,
			body: Array.from({ length: pages.shift() ?? 0 }, () => row({ id: uuid(n++) })),
		}));
		const again = await new JobStore(supabaseAdapter(client, { maxRows: 2, realtime: false })).replay({
			kind: 'extract',
		});
		expect(again.map((j) => j.id)).toEqual([0, 1, 2, 3, 4].map(uuid));
		expect(requests.map((r) => (r.body as { limit: number }).limit)).toEqual([2, 2, 2]);
	});

	test('a maxRows that is not a positive integer is refused naming maxRows', () => {
		const { client } = fakePostgrest(() => ({ status: 200, body: [] }));
		expect(() => supabaseAdapter(client, { maxRows: 0 })).toThrow(/maxRows must be a positive integer/);
		expect(() => supabaseAdapter(client, { maxRows: 1.5 })).toThrow(RangeError);
	});

	test('without maxRows the hosted 1000 holds: 2,500 items go as 1000, 1000 and 500', async () => {
		let next = 0;
		const { client, requests } = fakePostgrest((_, body) => ({
			status: 200,
			body: (body.items as unknown[]).map(() => ({ id: uuid(next++) })),
		}));
		const ids = await new JobStore(supabaseAdapter(client, { realtime: false })).enqueueMany(
			'extract',
			Array.from({ length: 2500 }, () => ({})),
		);
		expect(ids).toHaveLength(2500);
		expect(requests.map((r) => (r.body as { items: unknown[] }).items.length)).toEqual([1000, 1000, 500]);
	});
});
