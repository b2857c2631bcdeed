/**
 * Test helpers for the stand-in: a database of the file's own with a stand-in
 * over it, supabase-js clients for anon / service_role / a user (the real,
 * unmodified clients, realtime over `ws`), and a raw Phoenix websocket client
 * for frames realtime-js never sends (vsn 1.0.0, malformed tokens).
 */
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { afterAll } from 'vitest';
import WebSocket from 'ws';
import { createStandin, type Standin, type StandinOptions } from '../../src/local/standin/server.ts';
import { createUser, useTestDatabase, type TestDatabase } from '../helpers/db.ts';

export const JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';

export interface StandinFixture {
	db: TestDatabase;
	standin: Standin;
	clients: SupabaseClient[];
}

export async function useStandin(
	setupSql?: string,
	options: Partial<Omit<StandinOptions, 'databaseUrl' | 'jwtSecret'>> = {},
): Promise<StandinFixture> {
	const db = await useTestDatabase();
	if (setupSql) await db.sql.unsafe(setupSql);
	const standin = await createStandin({ ...options, databaseUrl: db.url, jwtSecret: JWT_SECRET });
	const fixture: StandinFixture = { db, standin, clients: [] };
	afterAll(async () => {
		await Promise.all(fixture.clients.map((c) => c.removeAllChannels()));
		await standin.close();
	});
	return fixture;
}

/** A supabase-js client with `token` as its access token (anon key when absent). */
export function client(f: StandinFixture, token?: string, key = f.standin.anonKey): SupabaseClient {
	const c = createClient(f.standin.url, key, {
		realtime: { transport: WebSocket as never, reconnectAfterMs: () => 200 },
		auth: { persistSession: false, autoRefreshToken: false },
		...(token ? { accessToken: async () => token } : {}),
	});
	f.clients.push(c);
	return c;
}

export async function userClient(f: StandinFixture): Promise<{ id: string; token: string; supabase: SupabaseClient }> {
	const user = await createUser(f.db.sql);
	const token = await f.standin.mintUserToken(user.sub);
	const supabase = client(f, token);
	await supabase.realtime.setAuth(token);
	return { id: user.sub, token, supabase };
}

export type Frame = { topic: string; event: string; payload: any; ref: string | null; join_ref?: string | null };

/** A raw Phoenix socket: JSON objects for vsn 1.0.0, arrays for 2.0.0. */
export class RawSocket {
	readonly frames: (Frame | Buffer)[] = [];
	private waiters: { match: (f: Frame | Buffer) => boolean; resolve: (f: any) => void }[] = [];
	private ref = 0;

	private constructor(
		readonly ws: WebSocket,
		readonly vsn: '1.0.0' | '2.0.0',
	) {
		ws.on('message', (data, isBinary) => {
			const buf = Buffer.from(data as Buffer);
			let frame: Frame | Buffer = buf;
			if (!isBinary) {
				const parsed = JSON.parse(buf.toString('utf8'));
				frame = Array.isArray(parsed)
					? { join_ref: parsed[0], ref: parsed[1], topic: parsed[2], event: parsed[3], payload: parsed[4] }
					: (parsed as Frame);
			}
			this.frames.push(frame);
			this.waiters = this.waiters.filter((w) => {
				if (!w.match(frame)) return true;
				w.resolve(frame);
				return false;
			});
		});
	}

	static async open(url: string, apikey: string, vsn: '1.0.0' | '2.0.0' = '1.0.0'): Promise<RawSocket> {
		const ws = new WebSocket(
			`${url.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${encodeURIComponent(apikey)}&vsn=${vsn}`,
		);
		const socket = new RawSocket(ws, vsn);
		await new Promise<void>((resolve, reject) => {
			ws.once('open', () => resolve());
			ws.once('error', reject);
		});
		afterAll(() => ws.close());
		return socket;
	}

	send(topic: string, event: string, payload: unknown, joinRef: string | null = null): string {
		const ref = String(++this.ref);
		this.ws.send(
			this.vsn === '2.0.0'
				? JSON.stringify([joinRef, ref, topic, event, payload])
				: JSON.stringify({ topic, event, payload, ref, join_ref: joinRef }),
		);
		return ref;
	}

	/** The first frame (already received or future) matching `match`. */
	next<T extends Frame | Buffer = Frame>(match: (f: Frame) => boolean): Promise<T> {
		const m = (f: Frame | Buffer) => !Buffer.isBuffer(f) && match(f);
		const seen = this.frames.find(m);
		if (seen) return Promise.resolve(seen as T);
		return new Promise((resolve) => this.waiters.push({ match: m, resolve }));
	}

	reply(ref: string): Promise<Frame> {
		return this.next((f) => f.event === 'phx_reply' && f.ref === ref);
	}

	async join(topic: string, payload: unknown): Promise<{ ref: string; reply: Frame }> {
		const ref = this.send(
			topic,
			'phx_join',
			payload,
			this.vsn === '2.0.0' ? String(this.ref + 1) : String(this.ref + 1),
		);
		return { ref, reply: await this.reply(ref) };
	}
}
