/**
 * The job API over supabase-js against the stand-in with hosted Supabase's
 * limits on (max_rows 1000, statement_timeout per role): a batch larger than
 * max_rows reports every job, a keyed batch sent again writes nothing twice,
 * and a statement timeout reaches the caller as a TimeoutError naming the call.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import { InvalidJobInputError, TimeoutError, isJobError } from '../../src/lib/errors.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { createUser } from '../helpers/db.ts';
import { useRealtimeFixture } from '../realtime/helpers.ts';

const f = await useRealtimeFixture();
const service = new JobStore(supabaseAdapter(f.client('service_role'), { realtime: false }));

const countOf = async (kind: string) =>
	(await f.db.sql`select count(*)::int as n from supabase_jobs.job where kind = ${kind}`)[0]!.n as number;

const rejection = async (p: Promise<unknown>) => {
	try {
		await p;
	} catch (e) {
		return e;
	}
	throw new Error('expected a rejection');
};

/** `n` queued jobs of a new kind, written straight to the database. */
async function queued(n: number): Promise<{ kind: string; ids: string[] }> {
	const kind = `limits.${randomUUID().slice(0, 8)}`;
	const ids = await f.worker.enqueueMany(
		kind,
		Array.from({ length: n }, (_, i) => ({ params: { i } })),
	);
	return { kind, ids };
}

describe('a batch larger than max_rows reports every job over supabase-js', () => {
	it('enqueueMany of 5,000 items returns 5,000 ids in order, and the same keyed batch sent again writes no job twice', async () => {
		const kind = `limits.${randomUUID().slice(0, 8)}`;
		const items = Array.from({ length: 5000 }, (_, i) => ({ params: { i }, idempotencyKey: `${kind}:${i}` }));
		const started = performance.now();
		const ids = await service.enqueueMany(kind, items);
		const firstMs = performance.now() - started;
		expect(ids).toHaveLength(5000);
		expect(new Set(ids).size).toBe(5000);
		expect(await countOf(kind)).toBe(5000);
		const rows = await f.db.sql`select id, (params->>'i')::int as i from supabase_jobs.job where id = any(${ids})`;
		const byId = new Map(rows.map((r) => [r.id as string, r.i as number]));
		expect(ids.map((id) => byId.get(id))).toEqual(items.map((_, i) => i));
		const again = await service.enqueueMany(kind, items);
		expect(again).toEqual(ids);
		expect(await countOf(kind)).toBe(5000);
		console.log(`enqueueMany 5,000 keyed items over REST: ${Math.round(firstMs)} ms (5 calls of 1,000)`);
	});

	it('enqueueMany without keys returns all 2,500 ids (three calls)', async () => {
		const kind = `limits.${randomUUID().slice(0, 8)}`;
		const ids = await service.enqueueMany(
			kind,
			Array.from({ length: 2500 }, (_, i) => ({ params: { i } })),
		);
		expect(ids).toHaveLength(2500);
		expect(await countOf(kind)).toBe(2500);
	});

	it('a keyed batch failing in its second call keeps the first call’s jobs; sent again, every job is written exactly once', async () => {
		const kind = `limits.${randomUUID().slice(0, 8)}`;
		const nobody = randomUUID(); // no user of the project: the database refuses it (owner_id's foreign key)
		const items = Array.from({ length: 2500 }, (_, i) => ({
			params: { i },
			idempotencyKey: `k${i}`,
			...(i === 1800 ? { ownerId: nobody } : {}),
		}));
		const e = await rejection(service.enqueueMany(kind, items));
		expect(e).toBeInstanceOf(InvalidJobInputError);
		expect(e).toMatchObject({ field: 'ownerId' });
		expect(await countOf(kind)).toBe(1000);
		const { sub } = await createUser(f.db.sql);
		const fixed = items.map((item, i) => (i === 1800 ? { ...item, ownerId: sub } : item));
		const ids = await service.enqueueMany(kind, fixed);
		expect(ids).toHaveLength(2500);
		expect(new Set(ids).size).toBe(2500);
		expect(await countOf(kind)).toBe(2500);
	});

	it('a key named by two items of one batch is refused naming the second, before anything is written', async () => {
		const kind = `limits.${randomUUID().slice(0, 8)}`;
		const e = await rejection(
			service.enqueueMany(kind, [{ idempotencyKey: 'a' }, { idempotencyKey: 'b' }, { idempotencyKey: 'a' }]),
		);
		expect(e).toMatchObject({ code: 'invalid_input', field: 'items[2].idempotencyKey' });
		expect(await countOf(kind)).toBe(0);
	});

	it('succeedMany of 2,000 running jobs reports all 2,000', async () => {
		const { kind } = await queued(2000);
		const claimed = [
			...(await f.worker.claimNext({ kinds: [kind], limit: 1000 })),
			...(await f.worker.claimNext({ kinds: [kind], limit: 1000 })),
		];
		expect(claimed).toHaveLength(2000);
		const started = performance.now();
		const closed = await service.succeedMany(claimed.map((j) => ({ id: j.id, attempt: j.attempts })));
		console.log(`succeedMany 2,000 over REST: ${Math.round(performance.now() - started)} ms`);
		expect(closed).toHaveLength(2000);
		expect(new Set(closed.map((j) => j.id))).toEqual(new Set(claimed.map((j) => j.id)));
		expect(closed.every((j) => j.status === 'done')).toBe(true);
	});

	it('cancelMany of 2,000 jobs reports every one: 1,000 per call (its limit), then 0', async () => {
		const { kind } = await queued(2000);
		const counts: number[] = [];
		const started = performance.now();
		for (let n = -1; n !== 0;) counts.push((n = await service.cancelMany({ kind, limit: 1000 })));
		console.log(`cancelMany 2,000 over REST: ${Math.round(performance.now() - started)} ms (${counts.join(' + ')})`);
		expect(counts).toEqual([1000, 1000, 0]);
		const [{ n }] = await f.db
			.sql`select count(*)::int as n from supabase_jobs.job where kind = ${kind} and status = 'cancelled'`;
		expect(n).toBe(2000);
	});

	it('replay of 2,000 failed jobs returns all 2,000 new jobs, each trying one of them again', async () => {
		const { kind, ids } = await queued(2000);
		await f.db
			.sql`update supabase_jobs.job set status = 'failed', finished_at = now(), error = 'boom', error_code = 'boom'
		                where id = any(${ids})`;
		const started = performance.now();
		const replayed = await service.replay({ kind });
		console.log(`replay 2,000 over REST: ${Math.round(performance.now() - started)} ms`);
		expect(replayed).toHaveLength(2000);
		const rows = await f.db.sql`select retry_of from supabase_jobs.job where id = any(${replayed.map((j) => j.id)})`;
		expect(new Set(rows.map((r) => r.retry_of))).toEqual(new Set(ids));
		expect(await service.replay({ kind })).toEqual([]);
	});
});

describe('idempotency keys in a batch, over postgres.js (one call, all or nothing)', () => {
	it('the keyed batch sent again answers the same ids and writes nothing new; a new key in it is written', async () => {
		const kind = `limits.${randomUUID().slice(0, 8)}`;
		const items = Array.from({ length: 3 }, (_, i) => ({ params: { i }, idempotencyKey: `p${i}` }));
		const ids = await f.worker.enqueueMany(kind, items);
		expect(await f.worker.enqueueMany(kind, items)).toEqual(ids);
		const more = await f.worker.enqueueMany(kind, [...items, { params: { i: 3 }, idempotencyKey: 'p3' }]);
		expect(more.slice(0, 3)).toEqual(ids);
		expect(await countOf(kind)).toBe(4);
	});

	it('job_enqueue_many refuses a key that is not 1 to 200 characters of text, naming the item', async () => {
		const kind = `limits.${randomUUID().slice(0, 8)}`;
		for (const bad of [5, '', 'x'.repeat(201)]) {
			const items = JSON.stringify([{ idempotency_key: 'ok' }, { idempotency_key: bad }]);
			const e = await rejection(f.db.sql`select * from public.job_enqueue_many(${kind}, ${items}::text::jsonb)`);
			expect(e).toMatchObject({ code: '22023', detail: 'field=items[1].idempotency_key' });
		}
		expect(await countOf(kind)).toBe(0);
	});
});

describe('a statement timeout reaches the caller as a TimeoutError naming the call', () => {
	it('over supabase-js: a role whose statement_timeout is 300 ms waits on a locked job past it', async () => {
		// A custom role (as hosted projects make for plans) with its own low timeout, so the test need
		// not wait out authenticated's 8 s: PostgREST applies the JWT role's own settings, not the inherited role's.
		const role = `sj_slow_${randomUUID().slice(0, 8)}`;
		await f.db.sql
			.unsafe(`create role ${role} nologin inherit; grant authenticated to ${role}; grant ${role} to authenticator;
		  alter role ${role} set statement_timeout = '300ms'`);
		await f.standin.reloadConfig();
		const { sub } = await createUser(f.db.sql);
		const token = await f.standin.mintUserToken(sub, { role });
		const client = createClient(f.standin.url, f.standin.anonKey, {
			realtime: { transport: WebSocket as never },
			auth: { persistSession: false, autoRefreshToken: false },
			accessToken: async () => token,
		});
		const store = new JobStore(supabaseAdapter(client, { realtime: false }));
		const job = await store.enqueue(`limits.${randomUUID().slice(0, 8)}`, {});
		const holder = f.db.connect({ max: 1 });
		const e = await holder.begin(async (tx) => {
			await tx`select 1 from supabase_jobs.job where id = ${job.id} for update`;
			return await rejection(store.cancel(job.id));
		});
		expect(e).toBeInstanceOf(TimeoutError);
		expect(isJobError(e, 'timeout')).toBe(true);
		expect(e).toMatchObject({ call: 'job_cancel', sqlstate: '57014' });
		expect((e as Error).message).toMatch(/^job_cancel: canceling statement due to statement timeout/);
		expect((await store.get(job.id)).status).toBe('queued');
	});

	it('over postgres.js: a connection with a 300 ms statement_timeout waits on a locked job past it', async () => {
		const { ids } = await queued(1);
		const slow = f.db.connect({ max: 1, connection: { statement_timeout: 300 } });
		const store = new JobStore(postgresAdapter(slow));
		const holder = f.db.connect({ max: 1 });
		const e = await holder.begin(async (tx) => {
			await tx`select 1 from supabase_jobs.job where id = ${ids[0]!} for update`;
			return await rejection(store.cancel(ids[0]!));
		});
		expect(e).toBeInstanceOf(TimeoutError);
		expect(e).toMatchObject({ call: 'job_cancel', sqlstate: '57014' });
	});
});
