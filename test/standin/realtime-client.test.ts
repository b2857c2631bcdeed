/**
 * The unmodified supabase-js / realtime-js client (vsn 2.0.0, binary
 * broadcast frames) against the stand-in: private channels authorized by an
 * RLS policy on realtime.messages, Broadcast from Database, client broadcast,
 * postgres_changes with RLS per subscriber, and reconnection after a restart.
 * The callback payload shape `{type: 'broadcast', event, payload, meta: {id}}`
 * is realtime-js src/lib/serializer.ts `_decodeUserBroadcast` over the frame of
 * supabase/realtime lib/realtime_web/socket/v2_serializer.ex.
 */
import type { RealtimeChannel } from '@supabase/supabase-js';
import { describe, expect, it } from 'vitest';
import { client, useStandin, userClient } from './helpers.ts';

const f = await useStandin(`
  create table public.items (id int primary key, owner_id uuid, label text);
  alter table public.items enable row level security;
  create policy items_owner on public.items for select to authenticated using (owner_id = (select auth.uid()));
  grant select on public.items to authenticated;
  create policy "user topic read" on realtime.messages for select to authenticated
    using (extension = 'broadcast' and (select realtime.topic()) = 'user:' || (select auth.uid())::text);
  create policy "user topic write" on realtime.messages for insert to authenticated
    with check (extension = 'broadcast' and (select realtime.topic()) = 'user:' || (select auth.uid())::text);
`);

type Status = { status: string; err?: Error };

/** Subscribes and resolves with the first terminal status (SUBSCRIBED, CHANNEL_ERROR, ...). */
function subscribe(channel: RealtimeChannel): Promise<Status> {
	return new Promise((resolve) => channel.subscribe((status, err) => resolve({ status, err })));
}

/** Collects broadcast payloads of `event` and lets a test await the n-th one. */
function collect(channel: RealtimeChannel, event: string) {
	const got: any[] = [];
	const waiters: [number, (v: any[]) => void][] = [];
	channel.on('broadcast', { event }, (payload) => {
		got.push(payload);
		for (const [n, resolve] of waiters) if (got.length >= n) resolve(got);
	});
	return {
		got,
		until: (n: number) =>
			got.length >= n ? Promise.resolve(got) : new Promise<any[]>((resolve) => waiters.push([n, resolve])),
	};
}

async function send(topic: string, event: string, payload: unknown, isPrivate: boolean): Promise<string> {
	await f.db.sql`select realtime.send(${f.db.sql.json(payload as never)}, ${event}, ${topic}, ${isPrivate})`;
	const [row] = await f.db.sql<
		{ id: string }[]
	>`select id::text from realtime.messages where topic = ${topic} order by inserted_at desc limit 1`;
	return row!.id;
}

describe('private channels with realtime-js', () => {
	it('subscribes to a topic the policy allows and receives realtime.send broadcasts with meta.id', async () => {
		const user = await userClient(f);
		const topic = `user:${user.id}`;
		const channel = user.supabase.channel(topic, { config: { private: true } });
		const inbox = collect(channel, 'status');
		expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
		const id = await send(topic, 'status', { progress: 50 }, true);
		const [msg] = await inbox.until(1);
		expect(msg).toEqual({ type: 'broadcast', event: 'status', payload: { progress: 50 }, meta: { id } });
	});

	it('gets CHANNEL_ERROR with upstream reason for a topic the policy refuses', async () => {
		const user = await userClient(f);
		const other = await userClient(f);
		const channel = user.supabase.channel(`user:${other.id}`, { config: { private: true } });
		const result = await subscribe(channel);
		expect(result.status).toBe('CHANNEL_ERROR');
		expect(result.err?.message).toBe(
			`Unauthorized: You do not have permissions to read from this Channel topic: user:${other.id}`,
		);
		await user.supabase.removeChannel(channel);
	});

	it('never delivers a private message to an unauthorized or anonymous subscriber', async () => {
		const owner = await userClient(f);
		const stranger = await userClient(f);
		const topic = `user:${owner.id}`;
		const ownerChannel = owner.supabase.channel(topic, { config: { private: true } });
		const ownerInbox = collect(ownerChannel, 'status');
		// The stranger listens on its own private topic and on the owner's topic as a public channel.
		const strangerOwn = stranger.supabase.channel(`user:${stranger.id}`, { config: { private: true } });
		const strangerOwnInbox = collect(strangerOwn, 'status');
		const anonPublic = client(f).channel(topic, { config: { private: false } });
		const anonInbox = collect(anonPublic, 'status');
		for (const c of [ownerChannel, strangerOwn, anonPublic]) expect((await subscribe(c)).status).toBe('SUBSCRIBED');

		await send(topic, 'status', { secret: true }, true);
		await send(`user:${stranger.id}`, 'status', { marker: 'stranger' }, true);
		await send(topic, 'status', { marker: 'public' }, false);

		expect((await ownerInbox.until(1)).map((m) => m.payload)).toEqual([{ secret: true }]);
		// Delivery is in commit order: once the later markers arrived, the private message would have too.
		expect((await strangerOwnInbox.until(1)).map((m) => m.payload)).toEqual([{ marker: 'stranger' }]);
		expect((await anonInbox.until(1)).map((m) => m.payload)).toEqual([{ marker: 'public' }]);
		expect(ownerInbox.got).toHaveLength(1);
	});
});

describe('client broadcast with realtime-js', () => {
	it('relays a broadcast to the other subscribers of the topic and acks it', async () => {
		const a = client(f);
		const b = client(f);
		const sender = a.channel('room:chat', { config: { broadcast: { ack: true } } });
		const receiver = b.channel('room:chat');
		const inbox = collect(receiver, 'msg');
		const own = collect(sender, 'msg');
		expect((await subscribe(sender)).status).toBe('SUBSCRIBED');
		expect((await subscribe(receiver)).status).toBe('SUBSCRIBED');
		expect(await sender.send({ type: 'broadcast', event: 'msg', payload: { text: 'hi' } })).toBe('ok');
		const [msg] = await inbox.until(1);
		expect(msg).toEqual({ type: 'broadcast', event: 'msg', payload: { text: 'hi' } });
		expect(own.got).toHaveLength(0);
	});

	it('lets a private channel send only where the insert policy allows', async () => {
		const user = await userClient(f);
		const topic = `user:${user.id}`;
		const sender = user.supabase.channel(topic, { config: { private: true, broadcast: { self: true } } });
		const inbox = collect(sender, 'note');
		expect((await subscribe(sender)).status).toBe('SUBSCRIBED');
		await sender.send({ type: 'broadcast', event: 'note', payload: { n: 1 } });
		expect((await inbox.until(1))[0].payload).toEqual({ n: 1 });
	});
});

describe('postgres_changes with realtime-js', () => {
	it('delivers INSERT and UPDATE of rows the subscriber may read, never others', async () => {
		const user = await userClient(f);
		const changes: any[] = [];
		let wake: () => void = () => {};
		const channel = user.supabase
			.channel('items-changes')
			.on('postgres_changes', { event: '*', schema: 'public', table: 'items' }, (p) => {
				changes.push(p);
				wake();
			});
		const system = new Promise<any>((resolve) => channel.on('system', {}, resolve));
		expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
		expect((await system).message).toBe('Subscribed to PostgreSQL');
		const until = (n: number) =>
			changes.length >= n ? Promise.resolve() : new Promise<void>((r) => (wake = () => changes.length >= n && r()));
		await f.db.sql`insert into public.items (id, owner_id, label) values (1, null, 'not mine')`;
		await f.db.sql`insert into public.items (id, owner_id, label) values (2, ${user.id}, 'mine')`;
		await f.db.sql`update public.items set label = 'still mine' where id = 2`;
		await until(2);
		expect(changes.map((c) => [c.eventType, c.new.id, c.new.label])).toEqual([
			['INSERT', 2, 'mine'],
			['UPDATE', 2, 'still mine'],
		]);
		expect(changes[1].old).toMatchObject({ id: 2, label: 'mine' });
		expect(changes[0]).toMatchObject({ schema: 'public', table: 'items', errors: null });
		expect(typeof changes[0].commit_timestamp).toBe('string');
	});
});

describe('restart', () => {
	it('a subscribed client reconnects after the stand-in is stopped and started on the same port', async () => {
		const user = await userClient(f);
		const topic = `user:${user.id}`;
		const port = f.standin.port;
		let subscribed = 0;
		let listeners: (() => void)[] = [];
		const subscribedTimes = (n: number) =>
			new Promise<void>((resolve) => {
				const tick = () => (subscribed >= n ? resolve() : listeners.push(tick));
				tick();
			});
		const channel = user.supabase.channel(topic, { config: { private: true } });
		const inbox = collect(channel, 'after');
		channel.subscribe((status) => {
			if (status !== 'SUBSCRIBED') return;
			subscribed++;
			const pending = listeners;
			listeners = [];
			for (const l of pending) l();
		});
		await subscribedTimes(1);
		await f.standin.stop();
		await f.standin.start();
		expect(f.standin.port).toBe(port);
		await subscribedTimes(2);
		await send(topic, 'after', { ok: true }, true);
		expect((await inbox.until(1))[0].payload).toEqual({ ok: true });
		const { data } = await user.supabase.from('items').select('id').limit(1);
		expect(Array.isArray(data)).toBe(true);
	});
});
