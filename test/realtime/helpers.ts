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
import type { RealtimeLimits } from '../../src/local/standin/realtime/limits.ts';
import { createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import type { ConformanceCaller, ConformanceHarness } from '../store/harness.ts';
import { counting, databaseChores, Signal } from '../store/harness.ts';

export const JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';

export interface RealtimeFixture {
	db: TestDatabase;
	standin: Standin;
	/** Every statement the stand-in sent, in order (REST and Realtime). */
	queries: QueryEvent[];
	/** A new supabase-js client: the service key, a user's minted token, or anon. */
	client(
		as: 'service_role' | 'anon' | { sub: string; admin?: boolean },
		options?: { transport?: typeof WebSocket },
	): SupabaseClient;
	/** client(), once its Realtime token is set (a fresh client sets it asynchronously). */
	connect(
		as: 'service_role' | 'anon' | { sub: string; admin?: boolean },
		options?: { transport?: typeof WebSocket },
	): Promise<SupabaseClient>;
	/** A user in auth.users with a supabase-js client of their own. */
	user(): Promise<{ id: string; supabase: SupabaseClient; store: JobStore }>;
	/** The worker: postgres.js straight to the database as its owner (never through the stand-in). */
	worker: JobStore;
	/** The ConformanceHarness over supabase-js through the stand-in. */
	harness: ConformanceHarness;
}

/** `realtime`: the stand-in's Realtime limits and timings (the hosted Free plan's by default). */
export async function useRealtimeFixture(
	options: { realtime?: Partial<RealtimeLimits> } = {},
): Promise<RealtimeFixture> {
	const db = await useTestDatabase();
	const queries: QueryEvent[] = [];
	const standin = await createStandin({
		databaseUrl: db.url,
		jwtSecret: JWT_SECRET,
		onQuery: (e) => queries.push(e),
		...(options.realtime ? { realtime: options.realtime } : {}),
	});
	const clients: SupabaseClient[] = [];

	const client = (
		as: 'service_role' | 'anon' | { sub: string; admin?: boolean },
		options: { transport?: typeof WebSocket } = {},
	): SupabaseClient => {
		const key = as === 'service_role' ? standin.serviceRoleKey : standin.anonKey;
		const admin =
			typeof as === 'object' && as.admin ? { claims: { app_metadata: { provider: 'email', role: 'admin' } } } : {};
		const token = typeof as === 'object' ? standin.mintUserToken(as.sub, admin) : null;
		const c = createClient(standin.url, key, {
			// Reconnect quickly after the stand-in restarts (the default backs off up to 10 s).
			realtime: { transport: (options.transport ?? WebSocket) as never, reconnectAfterMs: () => 100 },
			auth: { persistSession: false, autoRefreshToken: false },
			...(token ? { accessToken: () => token } : {}),
		});
		clients.push(c);
		return c;
	};

	const adapters = new Map<string, JobAdapter>();
	const adapterFor = (caller: ConformanceCaller): JobAdapter => {
		const key = caller.role === 'service_role' ? 'service_role' : `${caller.sub}${caller.admin ? ':admin' : ''}`;
		let adapter = adapters.get(key);
		if (!adapter) {
			adapter = supabaseAdapter(
				client(caller.role === 'service_role' ? 'service_role' : { sub: caller.sub, admin: caller.admin }),
			);
			adapters.set(key, adapter);
		}
		return adapter;
	};

	const owner = db.connect({ max: 4 });
	const worker = new JobStore(postgresAdapter(owner), { staleAfterMs: 300_000 });

	afterAll(async () => {
		await Promise.all(clients.map((c) => c.removeAllChannels().catch(() => {})));
		await standin.close();
	});

	return {
		db,
		standin,
		queries,
		client,
		async connect(as, options) {
			const c = client(as, options);
			await c.realtime.setAuth();
			return c;
		},
		async user() {
			const { sub } = await createUser(db.sql);
			const supabase = client({ sub });
			await supabase.realtime.setAuth();
			return { id: sub, supabase, store: new JobStore(supabaseAdapter(supabase)) };
		},
		worker,
		harness: {
			adapter: adapterFor,
			...databaseChores(db.sql),
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

/**
 * A `ws` WebSocket class that records every frame the server sends (text, or
 * binary decoded as UTF-8: Realtime's binary broadcast frames carry the JSON
 * payload as text), for checks at the socket level.
 */
export function recordingTransport(): { transport: typeof WebSocket; frames: string[] } {
	const frames: string[] = [];
	class RecordingWebSocket extends WebSocket {
		constructor(address: string | URL, protocols?: string | string[]) {
			super(address, protocols);
			this.on('message', (data: WebSocket.RawData) => {
				const parts = Array.isArray(data) ? data : [data];
				frames.push(Buffer.concat(parts.map((p) => Buffer.from(p as ArrayBuffer))).toString('utf8'));
			});
		}
	}
	return { transport: RecordingWebSocket as unknown as typeof WebSocket, frames };
}

/**
 * Resolves once every Realtime delivery committed before it has been made:
 * the stand-in delivers in commit order, so a public marker broadcast seen by
 * `client` proves everything committed earlier was already delivered (or withheld).
 */
export async function deliveredSoFar(f: RealtimeFixture, client: SupabaseClient): Promise<void> {
	const topic = `sync-${Math.random().toString(36).slice(2)}`;
	const channel = client.channel(topic);
	const got = new Promise<void>((resolve) => channel.on('broadcast', { event: 'sync' }, () => resolve()));
	await new Promise<void>((resolve, reject) =>
		channel.subscribe((status, err) => {
			if (status === 'SUBSCRIBED') resolve();
			else if (status !== 'CLOSED') reject(err ?? new Error(status));
		}),
	);
	await f.db.sql`select realtime.send('{}'::jsonb, 'sync', ${topic}, false)`;
	await got;
	await client.removeChannel(channel);
}
