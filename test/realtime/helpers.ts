/**
 * JobStore over the unmodified supabase-js client, through the local stand-in
 * (REST + Realtime on one port over the file's own database): clients per
 * caller (service key, minted user tokens, anon), the ConformanceHarness, a
 * postgres.js worker store, and a way to wait for a watcher to be joined.
 */
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { afterAll } from 'vitest';
import WebSocket from 'ws';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import type { JobAdapter, JobTopicStatus } from '../../src/lib/store/adapter.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import type { QueryEvent } from '../../src/local/standin/db.ts';
import { createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import type { ConformanceCaller, ConformanceHarness } from '../store/harness.ts';
import { counting, Signal } from '../store/harness.ts';

export const JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';

export interface RealtimeFixture {
	db: TestDatabase;
	standin: Standin;
	/** Every statement the stand-in sent, in order (REST and Realtime). */
	queries: QueryEvent[];
	/** A new supabase-js client: the service key, a user's minted token, or anon. */
	client(as: 'service_role' | 'anon' | { sub: string }): SupabaseClient;
	/** A user in auth.users with a supabase-js client of their own. */
	user(): Promise<{ id: string; supabase: SupabaseClient; store: JobStore }>;
	/** The worker: postgres.js straight to the database as its owner (never through the stand-in). */
	worker: JobStore;
	/** The ConformanceHarness over supabase-js through the stand-in. */
	harness: ConformanceHarness;
}

export async function useRealtimeFixture(): Promise<RealtimeFixture> {
	const db = await useTestDatabase();
	const queries: QueryEvent[] = [];
	const standin = await createStandin({ databaseUrl: db.url, jwtSecret: JWT_SECRET, onQuery: (e) => queries.push(e) });
	const clients: SupabaseClient[] = [];

	const client = (as: 'service_role' | 'anon' | { sub: string }): SupabaseClient => {
		const key = as === 'service_role' ? standin.serviceRoleKey : standin.anonKey;
		const token = typeof as === 'object' ? standin.mintUserToken(as.sub) : null;
		const c = createClient(standin.url, key, {
			// Reconnect quickly after the stand-in restarts (the default backs off up to 10 s).
			realtime: { transport: WebSocket as never, reconnectAfterMs: () => 100 },
			auth: { persistSession: false, autoRefreshToken: false },
			...(token ? { accessToken: () => token } : {}),
		});
		clients.push(c);
		return c;
	};

	const adapters = new Map<string, JobAdapter>();
	const adapterFor = (caller: ConformanceCaller): JobAdapter => {
		const key = caller.role === 'service_role' ? 'service_role' : caller.sub;
		let adapter = adapters.get(key);
		if (!adapter) {
			adapter = supabaseAdapter(client(caller.role === 'service_role' ? 'service_role' : { sub: caller.sub }));
			adapters.set(key, adapter);
		}
		return adapter;
	};

	const owner = db.connect({ max: 4 });
	const worker = new JobStore(postgresAdapter(owner), { staleAfter: 300 });

	afterAll(async () => {
		await Promise.all(clients.map((c) => c.removeAllChannels().catch(() => {})));
		await standin.close();
	});

	return {
		db,
		standin,
		queries,
		client,
		async user() {
			const { sub } = await createUser(db.sql);
			const supabase = client({ sub });
			return { id: sub, supabase, store: new JobStore(supabaseAdapter(supabase)) };
		},
		worker,
		harness: {
			adapter: adapterFor,
			createUser: async () => (await createUser(db.sql)).sub,
			backdate: async (id, seconds, table = 'jobs') => {
				await db.sql.unsafe(
					`update public.${table} set started_at = started_at - make_interval(secs => $2), heartbeat_at = heartbeat_at - make_interval(secs => $2) where id = $1 and status = 'running'`,
					[id, seconds],
				);
			},
			createJobTable: async (name) => {
				await db.sql`select supabase_jobs.create_job_table(${name})`;
			},
		},
	};
}

/** A store whose calls are counted, keeping the adapter's Realtime capability. */
export function countingStore(adapter: JobAdapter) {
	const counted = counting(adapter);
	const withRealtime: JobAdapter = { ...counted.adapter, realtime: adapter.realtime };
	return { ...counted, store: new JobStore(withRealtime) };
}

/** Records a watcher's Realtime statuses and lets a test wait for one. */
export function realtimeStatuses() {
	const seen: JobTopicStatus[] = [];
	const signal = new Signal();
	return {
		seen,
		onRealtime: (s: JobTopicStatus) => {
			seen.push(s);
			signal.notify();
		},
		until: (s: JobTopicStatus, n = 1) => signal.until(() => seen.filter((x) => x === s).length >= n),
	};
}

/** Frames a watch yields, with a signal per frame. */
export function frames<T>() {
	const got: T[] = [];
	const signal = new Signal();
	return {
		got,
		push(v: T) {
			got.push(v);
			signal.notify();
		},
		until: (n: number) => signal.until(() => got.length >= n),
	};
}
