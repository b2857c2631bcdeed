/**
 * Hosted Realtime's quotas (Free plan): messages per second counted as hosted
 * counts them (each database broadcast once, each delivery to each
 * subscriber); over the rate, database broadcasts are dropped and a channel
 * receiving a message is shut down with "Too many messages per second"; a
 * database broadcast over the payload limit is dropped with only a log line;
 * the 101st channel of a socket and a join over the join rate are refused with
 * upstream's reasons. Rates are averaged over ticks (5 s on hosted); the rate
 * tests shorten the tick to 100 ms so a burst shows within a test.
 */
import type { RealtimeChannel } from '@supabase/supabase-js';
import { describe, expect, it } from 'vitest';
import { createStandin } from '../../src/local/standin/server.ts';
import { client, JWT_SECRET, RawSocket, useStandin } from './helpers.ts';

const logged: string[] = [];
const f = await useStandin(undefined, { log: (e) => logged.push(String(e)) });
const rated = await useStandin(undefined, { realtime: { maxEventsPerSecond: 50, rateTickMs: 100, rateBuckets: 50 } });
const joins = await useStandin(undefined, { realtime: { maxJoinsPerSecond: 10, rateTickMs: 100 } });

async function until(check: () => boolean, ms = 10_000): Promise<void> {
	const end = Date.now() + ms;
	while (!check()) {
		if (Date.now() > end) throw new Error('condition not reached in time');
		await new Promise((r) => setTimeout(r, 20));
	}
}

function subscribed(channel: RealtimeChannel): Promise<{ status: string; err?: Error }> {
	return new Promise((resolve) => channel.subscribe((status, err) => resolve({ status, err })));
}

describe('message rate', () => {
	it('counts each database broadcast once and each delivery to each subscriber', async () => {
		const sockets = await Promise.all([1, 2, 3].map(() => RawSocket.open(f.standin.url, f.standin.anonKey)));
		for (const s of sockets) await s.join('realtime:counted', { config: { private: false } });
		f.standin.realtime.resetStats();
		await f.db.sql`select realtime.send('{"n":1}'::jsonb, 'e', 'counted', false)`;
		await Promise.all(sockets.map((s) => s.next((fr) => fr.event === 'broadcast')));
		await until(() => f.standin.realtime.stats().deliveries === 3);
		expect(f.standin.realtime.stats()).toMatchObject({ messages: 4, deliveries: 3, closedForRate: 0 });
		for (const s of sockets) s.ws.close();
	});

	it('over the rate, database broadcasts are dropped and a channel receiving a message is shut down', async () => {
		const stats = () => rated.standin.realtime.stats();
		const [a, b, c] = await Promise.all([1, 2, 3].map(() => RawSocket.open(rated.standin.url, rated.standin.anonKey)));
		for (const s of [a!, b!, c!])
			await s.join('realtime:busy', { config: { private: false, broadcast: { self: false } } });
		// 100 rows to 3 subscribers in one transaction: 400 messages: over the limit while the burst is among the last 50 ticks (5 s).
		await rated.db
			.sql`select realtime.send(jsonb_build_object('n', n), 'burst', 'busy', false) from generate_series(1, 100) n`;
		// Every burst row is either delivered or (once a tick saw the rate) dropped.
		const bursts = () => a!.frames.filter((fr) => !Buffer.isBuffer(fr) && fr.event === 'broadcast').length;
		await until(() => bursts() + stats().dropped.rate === 100);
		await until(() => stats().messagesPerSecond >= 50);
		const dropped = stats().dropped.rate;
		await rated.db.sql`select realtime.send('{}'::jsonb, 'dropped', 'busy', false)`;
		await until(() => stats().dropped.rate === dropped + 1);
		// A client broadcast still goes out; each channel that receives it is shut down.
		a!.send('realtime:busy', 'broadcast', { type: 'broadcast', event: 'ping', payload: {} }, '1');
		for (const s of [b!, c!]) {
			const system = await s.next((fr) => fr.event === 'system');
			expect(system.payload).toEqual({
				extension: 'system',
				status: 'error',
				message: 'Too many messages per second',
				channel: 'busy',
			});
			await s.next((fr) => fr.event === 'phx_close');
		}
		expect(stats().closedForRate).toBe(2);
		const events = b!.frames.filter((fr) => !Buffer.isBuffer(fr) && fr.event === 'broadcast');
		expect(events.map((fr) => (fr as { payload: { event: string } }).payload.event)).not.toContain('dropped');
	});
});

describe('payload size', () => {
	it('drops a database broadcast over 256 KB with only a log line; one under it is sent', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		await s.join('realtime:big', { config: { private: false } });
		const text = (n: number) => 'x'.repeat(n);
		await f.db.sql`select realtime.send(jsonb_build_object('t', ${text(257_000)}::text), 'too-big', 'big', false)`;
		await f.db.sql`select realtime.send(jsonb_build_object('t', ${text(250_000)}::text), 'fits', 'big', false)`;
		const got = await s.next((fr) => fr.event === 'broadcast');
		expect((got.payload as { event: string }).event).toBe('fits');
		expect(f.standin.realtime.stats().dropped.payloadSize).toBe(1);
		expect(logged).toContain('UnableToBroadcastChanges: :payload_size_exceeded');
		expect(s.frames.filter((fr) => !Buffer.isBuffer(fr) && fr.event === 'broadcast')).toHaveLength(1);
		s.ws.close();
	});
});

describe('channels per connection', () => {
	it('refuses the 101st channel of one socket with ChannelRateLimitReached; leaving one makes room', async () => {
		const supabase = client(f);
		const channels = Array.from({ length: 100 }, (_, i) => supabase.channel(`room-${i}`));
		const statuses = await Promise.all(channels.map(subscribed));
		expect(statuses.every((s) => s.status === 'SUBSCRIBED')).toBe(true);
		const extra = supabase.channel('room-100');
		const refused = await subscribed(extra);
		expect(refused.status).toBe('CHANNEL_ERROR');
		expect(refused.err?.message).toBe('ChannelRateLimitReached: Too many channels');
		expect(f.standin.realtime.stats().refused.channels).toBeGreaterThanOrEqual(1);
		await supabase.removeChannel(extra);
		await supabase.removeChannel(channels[0]!);
		expect((await subscribed(supabase.channel('room-101'))).status).toBe('SUBSCRIBED');
		await supabase.removeAllChannels();
	});
});

describe('joins per second', () => {
	it('over the join rate, a join is refused with ClientJoinRateLimitReached and the socket is closed', async () => {
		const s = await RawSocket.open(joins.standin.url, joins.standin.anonKey);
		const closed = new Promise<void>((resolve) => s.ws.once('close', () => resolve()));
		let refused: { reason?: string } | null = null;
		for (let i = 0; i < 200 && !refused; i++) {
			const { reply } = await s.join(`realtime:j${i}`, { config: { private: false } });
			const payload = reply.payload as { status: string; response: { reason?: string } };
			if (payload.status === 'error') refused = payload.response;
			else s.send(`realtime:j${i}`, 'phx_leave', {});
			if (i % 5 === 4) await new Promise((r) => setTimeout(r, 20));
		}
		expect(refused).toEqual({ reason: 'ClientJoinRateLimitReached: Too many joins per second' });
		await closed;
		expect(joins.standin.realtime.stats().refused.joins).toBe(1);
	});
});

describe('limits and counters', () => {
	it('refuses a bad limit naming the field, before starting anything', async () => {
		const bad = { databaseUrl: f.db.url, jwtSecret: JWT_SECRET };
		await expect(createStandin({ ...bad, realtime: { maxEventsPerSecond: -1 } })).rejects.toThrow(
			new TypeError('realtime.maxEventsPerSecond must be a finite number >= 0'),
		);
		await expect(createStandin({ ...bad, realtime: { startIdle: 'yes' as never } })).rejects.toThrow(
			new TypeError('realtime.startIdle must be a boolean'),
		);
	});

	it('serves the counters over HTTP to a holder of a project key, as stats() gives them', async () => {
		const url = `${f.standin.url}/standin/v1/realtime/stats`;
		expect((await fetch(url)).status).toBe(401);
		const res = await fetch(url, { headers: { apikey: f.standin.serviceRoleKey } });
		expect(res.status).toBe(200);
		const body = (await res.json()) as Record<string, unknown>;
		expect(Object.keys(body).sort()).toEqual(Object.keys(f.standin.realtime.stats()).sort());
		expect(body.replication).toBe('ready');
		expect(f.standin.realtime.limits).toMatchObject({
			maxEventsPerSecond: 100,
			maxPayloadSizeKb: 256,
			maxChannelsPerClient: 100,
			maxJoinsPerSecond: 100,
		});
	});
});
