/**
 * The replication window of hosted Realtime: an idle project's first join is
 * answered once its database connection exists, and replication of
 * realtime.messages starts after that, asynchronously; a row committed before
 * replication is ready is never sent. A channel joined with
 * `config.broadcast.replication_ready: true` gets a system message when it is
 * ready (realtime_channel.ex `:notify_replication_ready`), or is shut down when
 * it is not ready in time. The tenant goes idle after a run of checks without
 * users. Real realtime-js (supabase-js) against the stand-in.
 */
import type { RealtimeChannel } from '@supabase/supabase-js';
import { describe, expect, it } from 'vitest';
import { client, RawSocket, useStandin } from './helpers.ts';

const f = await useStandin(undefined, { realtime: { startIdle: true } });
// A project that idles after 3 checks 50 ms apart without a user (hosted: 11 checks a minute apart).
const quick = await useStandin(undefined, { realtime: { idleCheckMs: 50, idleChecks: 3 } });
const slow = await useStandin(undefined, {
	realtime: { startIdle: true, replicationStartDelayMs: 60_000, replicationReadyTimeoutMs: 300 },
});
const sql = f.db.sql;

/** Polls `check` every 20 ms until it holds, for at most `ms`. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
	const end = Date.now() + ms;
	while (!check()) {
		if (Date.now() > end) throw new Error('condition not reached in time');
		await new Promise((r) => setTimeout(r, 20));
	}
}

function watch(channel: RealtimeChannel) {
	const events: string[] = [];
	const system: unknown[] = [];
	channel.on('broadcast', { event: '*' }, (m: { event: string }) => events.push(m.event));
	channel.on('system', {}, (p: unknown) => system.push(p));
	return { events, system };
}

function subscribed(channel: RealtimeChannel): Promise<string> {
	return new Promise((resolve) => channel.subscribe((status) => status !== 'CLOSED' && resolve(status)));
}

const send = (topic: string, event: string, db = sql) =>
	db`select realtime.send(${db.json({ event })}, ${event}, ${topic}, false)`;

describe('replication window', () => {
	it("after an idle project's first join, a row committed before replication is ready is never sent; replication_ready then says it is", async () => {
		expect(f.standin.realtime.stats().replication).toBe('idle');
		const supabase = client(f);
		const channel = supabase.channel('window', { config: { broadcast: { replication_ready: true } } });
		const seen = watch(channel);
		expect(await subscribed(channel)).toBe('SUBSCRIBED');
		expect(f.standin.realtime.stats().replication).toBe('starting');
		await send('window', 'early');
		await until(() => seen.system.length > 0);
		expect(seen.system).toEqual([
			{ extension: 'system', status: 'ok', message: 'Replication connection established', channel: 'window' },
		]);
		await send('window', 'late');
		await until(() => seen.events.includes('late'));
		expect(seen.events).toEqual(['late']);
		expect(f.standin.realtime.stats().dropped.beforeReplication).toBeGreaterThanOrEqual(1);
		await supabase.removeAllChannels();
	});

	it('with replication ready, a replication_ready channel is told at once and misses nothing', async () => {
		const supabase = client(f);
		const channel = supabase.channel('ready', { config: { broadcast: { replication_ready: true } } });
		const seen = watch(channel);
		await subscribed(channel);
		await until(() => seen.system.length > 0, 1_000);
		await send('ready', 'first');
		await until(() => seen.events.includes('first'));
		await supabase.removeAllChannels();
	});

	it('the project goes idle after the checks find no user; the next join opens the window again', async () => {
		const stats = () => quick.standin.realtime.stats();
		await until(() => stats().replication === 'idle');
		const s = await RawSocket.open(quick.standin.url, quick.standin.anonKey);
		await s.join('realtime:again', { config: { private: false } });
		expect(stats().replication).toBe('starting');
		const before = stats().dropped.beforeReplication;
		await send('again', 'lost', quick.db.sql);
		// Replication not ready yet: the row is decided (dropped) once it is.
		await until(() => stats().dropped.beforeReplication > before);
		expect(stats().replication).toBe('ready');
		// A user stays connected: the project does not go idle while the socket is open, through
		// twice the checks that idle it without one.
		const checks = quick.standin.realtime.idleChecksRun();
		await until(() => quick.standin.realtime.idleChecksRun() >= checks + 6);
		expect(stats().replication).toBe('ready');
		await send('again', 'kept', quick.db.sql);
		const got = await s.next((fr) => fr.event === 'broadcast');
		expect(got.payload).toMatchObject({ event: 'kept' });
		s.ws.close();
	});

	it('goIdle() stops replication as idling does', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		await s.join('realtime:forced', { config: { private: false } });
		await until(() => f.standin.realtime.stats().replication === 'ready');
		s.ws.close();
		f.standin.realtime.goIdle();
		expect(f.standin.realtime.stats().replication).toBe('idle');
	});
});

describe('a dropped replication connection (a database restart)', () => {
	it('loses what is committed while it is down and comes back by itself', async () => {
		const s = await RawSocket.open(quick.standin.url, quick.standin.anonKey);
		await s.join('realtime:restart', { config: { private: false } });
		await until(() => quick.standin.realtime.stats().replication === 'ready');
		const db = quick.db.sql;
		await db`select pg_terminate_backend(pid) from pg_stat_activity
		         where application_name = 'supabase-jobs-standin-replication' and datname = current_database()`;
		await send('restart', 'lost', db);
		// Back within a bounded time: a probe sent every 200 ms eventually arrives.
		const arrived = s.next((fr) => fr.event === 'broadcast');
		let n = 0;
		// postgres.js runs a query only once it is awaited or given a handler.
		const probing = setInterval(() => send('restart', `probe-${n++}`, db).catch(() => {}), 200);
		try {
			await Promise.race([
				arrived,
				new Promise((_, reject) => setTimeout(() => reject(new Error('not back')), 10_000)),
			]);
		} finally {
			clearInterval(probing);
		}
		const events = s.frames.filter((fr) => !Buffer.isBuffer(fr) && fr.event === 'broadcast');
		expect(events.map((fr) => (fr as { payload: { event: string } }).payload.event)).not.toContain('lost');
		s.ws.close();
	});
});

describe('replication that is not ready in time', () => {
	it("shuts a replication_ready channel down with upstream's system error", async () => {
		const g = slow;
		const s = await RawSocket.open(g.standin.url, g.standin.anonKey);
		await s.join('realtime:slow', { config: { private: false, broadcast: { replication_ready: true } } });
		const system = await s.next((fr) => fr.event === 'system');
		expect(system.payload).toEqual({
			extension: 'system',
			status: 'error',
			message: 'Replication connection was not established in time',
			channel: 'slow',
		});
		await s.next((fr) => fr.event === 'phx_close');
	});
});
