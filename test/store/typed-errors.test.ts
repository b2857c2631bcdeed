/**
 * What comes out of either adapter when a call fails is always an Error and a
 * JobError: a 22023 names the field the TypeScript caller wrote (the SQL
 * argument mapped through one table), PostgreSQL's own 22003/22007/22008/
 * 22009/22015 are InvalidJobInputError, and anything else is a DatabaseError
 * keeping its code and message. And a row the package cannot read fails that
 * row only: a listing leaves it out and reports it by id.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { supabaseAdapter, type SupabaseRpcClient } from '../../src/lib/adapters/supabase.ts';
import { DatabaseError, InvalidJobInputError, TimeoutError, isJobError } from '../../src/lib/errors.ts';
import type { JobAdapter } from '../../src/lib/store/adapter.ts';
import { UnexpectedRowError } from '../../src/lib/store/job.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { claimsFor, createUser, serviceRole } from '../helpers/db.ts';
import { useRealtimeFixture } from '../realtime/helpers.ts';

const f = await useRealtimeFixture();

const rejection = (p: Promise<unknown>) =>
	p.then(
		() => new Error('accepted'),
		(e: unknown) => e,
	);

const adapters: Record<string, (caller: { sub?: string }) => JobAdapter> = {
	'postgres.js': ({ sub }) =>
		postgresAdapter(f.db.sql, { claims: claimsFor(sub ? { role: 'authenticated', sub } : serviceRole) }),
	'supabase-js': ({ sub }) => f.harness.adapter(sub ? { role: 'authenticated', sub } : { role: 'service_role' }),
};

describe.each(Object.entries(adapters))('over %s, an error the database raises', (_, adapterFor) => {
	let userId: string;
	let user: JobStore;
	let service: JobStore;
	beforeAll(async () => {
		userId = (await createUser(f.db.sql)).sub;
		user = new JobStore(adapterFor({ sub: userId }));
		service = new JobStore(adapterFor({}));
	});

	it('setConcurrency({ maxRunning: 0 }) names maxRunning, in the field and the sentence', async () => {
		const e = await rejection(service.setConcurrency('typed.errors', { maxRunning: 0 }));
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect(e).toMatchObject({ field: 'maxRunning', message: 'maxRunning is at least 1; got 0' });
		const perKey = await rejection(service.setConcurrency('typed.errors', { maxRunningPerKey: -1 }));
		expect(perKey).toMatchObject({ field: 'maxRunningPerKey' });
	});

	it("a user's priority above the kind's range names priority, and items[1].priority in a batch", async () => {
		const one = await rejection(user.enqueue('typed.errors', { priority: 32767 }));
		expect(one).toBeInstanceOf(InvalidJobInputError);
		expect(one).toMatchObject({ field: 'priority' });
		const many = await rejection(user.enqueueMany('typed.errors', [{}, { priority: 11 }]));
		expect(many).toMatchObject({ field: 'items[1].priority' });
		expect((await service.enqueue('typed.errors', { priority: 32767 })).priority).toBe(32767);
	});

	it('a 22003 or 22007 from a value no check stopped is an InvalidJobInputError, an Error and a JobError', async () => {
		const adapter = adapterFor({});
		for (const args of [
			{ kind: 'typed.errors', delay: '1e300 seconds' },
			{ kind: 'typed.errors', max_attempts: 1e10 },
		]) {
			const e = await rejection(adapter.call('job_enqueue', args));
			expect(e).toBeInstanceOf(Error);
			expect(isJobError(e, 'invalid_input')).toBe(true);
		}
	});

	it('a row the package cannot read fails its own read, and listRecent and children leave it out, reporting its id', async () => {
		const kind = `unreadable.${randomUUID().slice(0, 8)}`;
		const reported: UnexpectedRowError[] = [];
		const store = new JobStore(adapterFor({ sub: userId }), { onUnreadableRow: (e) => reported.push(e) });
		const parent = await f.worker.enqueue(kind, { ownerId: userId });
		await f.worker.claim(parent.id);
		const child = await f.worker.enqueueChild(parent.id, kind);
		const good = await store.enqueue(kind);
		const bad = await store.enqueue(kind);
		// Written as the superuser: a start no JavaScript Date holds.
		await f.db.sql`update supabase_jobs.job set available_at = '287225-01-01' where id in (${bad.id}, ${child.id})`;

		const page = await store.listRecent({ kind });
		expect(page.jobs.map((j) => j.id).sort()).toEqual([good.id, parent.id].sort());
		expect(await store.children(parent.id)).toEqual([]);
		// The child is the user's and of the kind: listRecent leaves it out too.
		expect([...new Set(reported.map((e) => e.jobId))].sort()).toEqual([bad.id, child.id].sort());
		expect(reported[0]).toBeInstanceOf(UnexpectedRowError);

		const read = await rejection(store.get(bad.id));
		expect(read).toBeInstanceOf(UnexpectedRowError);
		expect(read).toMatchObject({ jobId: bad.id });
		await f.db.sql`delete from supabase_jobs.job where kind = ${kind}`;
	});
});

describe('an error no SQLSTATE names is a DatabaseError keeping its code and message', () => {
	const rpcFailing = (outcome: () => Promise<{ data: unknown; error: unknown }>): SupabaseRpcClient => {
		const caller = { rpc: () => outcome() };
		return { ...caller, schema: () => caller };
	};

	it.each([
		['an unknown PostgREST error', { code: 'PGRST202', message: 'Could not find the function', details: null }],
		['a network failure without a code', { message: 'TypeError: fetch failed', code: '' }],
	])('over supabase-js: %s', async (_, body) => {
		const store = new JobStore(supabaseAdapter(rpcFailing(async () => ({ data: null, error: body }))));
		const e = await rejection(store.listRecent());
		expect(e).toBeInstanceOf(Error);
		expect(e).toBeInstanceOf(DatabaseError);
		expect(isJobError(e, 'database_error')).toBe(true);
		expect(e).toMatchObject({ message: body.message, sqlstate: body.code || null, cause: body });
	});

	it('over supabase-js: a client that throws', async () => {
		const store = new JobStore(supabaseAdapter(rpcFailing(() => Promise.reject(new TypeError('fetch failed')))));
		expect(await rejection(store.listRecent())).toMatchObject({ code: 'database_error', message: 'fetch failed' });
	});

	it.each([['a lost connection', Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' })]])(
		'over postgres.js: %s',
		async (_, thrown) => {
			const sql = { unsafe: () => Promise.reject(thrown) };
			const store = new JobStore(postgresAdapter(sql as never));
			const e = await rejection(store.listRecent());
			expect(e).toBeInstanceOf(DatabaseError);
			expect(e).toMatchObject({
				code: 'database_error',
				sqlstate: thrown.code,
				message: thrown.message,
				cause: thrown,
			});
		},
	);
});

describe('a statement timeout (57014) is a TimeoutError naming the call, on both adapters', () => {
	const said = 'canceling statement due to statement timeout';

	it('over supabase-js: a PostgREST body with code 57014', async () => {
		const body = { code: '57014', message: said, details: null, hint: null };
		const caller = { rpc: async () => ({ data: null, error: body }) };
		const store = new JobStore(supabaseAdapter({ ...caller, schema: () => caller }));
		const e = await rejection(store.listRecent());
		expect(e).toBeInstanceOf(TimeoutError);
		expect(isJobError(e, 'timeout')).toBe(true);
		expect(isJobError(e, 'database_error')).toBe(false);
		expect(e).toMatchObject({ call: 'job_list_recent', sqlstate: '57014', cause: body });
		expect((e as Error).message).toContain('job_list_recent');
		expect((e as Error).message).toContain(said);
	});

	it('over postgres.js: a PostgresError with code 57014', async () => {
		const thrown = Object.assign(new Error(said), { code: '57014' });
		const store = new JobStore(postgresAdapter({ unsafe: () => Promise.reject(thrown) } as never));
		const e = await rejection(store.listRecent());
		expect(e).toBeInstanceOf(TimeoutError);
		expect(e).toMatchObject({ code: 'timeout', call: 'job_list_recent', sqlstate: '57014', cause: thrown });
	});

	it('a watch timing out is a TimeoutError with no call', () => {
		expect(new TimeoutError('job 42 still running after 60 s')).toMatchObject({ call: null, sqlstate: null });
	});
});
