/**
 * The admin role (migration 20261201050000_admin_role.sql): a JWT whose
 * app_metadata.role is 'admin' (set by the service role; users cannot write
 * app_metadata) reads and cancels every job over the Data API and follows any
 * owner's list topic over Realtime; ordinary users still see only their own.
 * Through the stand-in, with real supabase-js clients.
 */
import { createClient } from '@supabase/supabase-js';
import { describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import { JobNotFoundError, PermissionDeniedError } from '../../src/lib/errors.ts';
import type { JobSummary } from '../../src/lib/store/job-summary.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { createUser } from '../helpers/db.ts';
import { Signal } from '../store/harness.ts';
import { useRealtimeFixture } from './helpers.ts';

const f = await useRealtimeFixture();

/** A signed-in user whose token says app_metadata.role = 'admin'. */
async function admin() {
	const { sub } = await createUser(f.db.sql);
	const token = await f.standin.mintUserToken(sub, {
		claims: { app_metadata: { provider: 'email', providers: ['email'], role: 'admin' } },
	});
	const supabase = createClient(f.standin.url, f.standin.anonKey, {
		realtime: { transport: WebSocket as never, reconnectAfterMs: () => 100 },
		auth: { persistSession: false, autoRefreshToken: false },
		accessToken: async () => token,
	});
	await supabase.realtime.setAuth();
	return { id: sub, supabase, store: new JobStore(supabaseAdapter(supabase)) };
}

describe('the admin role', () => {
	test('an admin reads every job through the API; an ordinary user still reads only their own', async () => {
		const a = await f.user();
		const b = await f.user();
		const boss = await admin();
		const job = await f.worker.enqueue('report', { ownerId: a.id });
		expect((await boss.store.get(job.id)).ownerId).toBe(a.id);
		expect((await boss.store.listRecent({ kind: 'report' })).jobs.map((j) => j.id)).toContain(job.id);
		expect(await b.store.get(job.id).catch((e) => e)).toBeInstanceOf(JobNotFoundError);
		expect((await b.store.listRecent({ kind: 'report' })).jobs).toEqual([]);
	});

	test("an admin cancels anyone's job; an ordinary user's cancel of it finds nothing", async () => {
		const a = await f.user();
		const b = await f.user();
		const boss = await admin();
		const job = await f.worker.enqueue('report', { ownerId: a.id });
		expect(await b.store.cancel(job.id)).toBeNull();
		expect((await boss.store.cancel(job.id, { reason: 'stopped by support' }))?.status).toBe('cancelled');
		expect((await a.store.get(job.id)).error).toBe('stopped by support');
	});

	test('an admin is still a user to the state machine: it cannot claim or close a job', async () => {
		const a = await f.user();
		const boss = await admin();
		const job = await f.worker.enqueue('report', { ownerId: a.id });
		expect(await boss.store.claim(job.id).catch((e) => e)).toBeInstanceOf(PermissionDeniedError);
		expect((await f.worker.get(job.id)).status).toBe('queued');
	});

	test("an admin follows any owner's list topic over Realtime; an ordinary user's join of it is refused", async () => {
		const a = await f.user();
		const b = await f.user();
		const boss = await admin();
		const seen: JobSummary[] = [];
		const statuses: string[] = [];
		const signal = new Signal();
		const stop = boss.store.subscribeList({
			ownerId: a.id,
			onChange: (job) => {
				if (job) seen.push(job);
				signal.notify();
			},
			onRealtime: (s) => {
				statuses.push(s);
				signal.notify();
			},
		});
		await signal.until(() => statuses.includes('live'));
		const job = await f.worker.enqueue('report', { ownerId: a.id });
		await signal.until(() => seen.some((j) => j.id === job.id));
		stop();

		const refused: string[] = [];
		const stopB = b.store.subscribeList({
			ownerId: a.id,
			onChange: () => {},
			onRealtime: (s) => {
				refused.push(s);
				signal.notify();
			},
		});
		await signal.until(() => refused.includes('refused'));
		stopB();
	});
});
