/**
 * The Phoenix / Realtime wire protocol with a raw websocket, vsn 1.0.0 and
 * 2.0.0. Shapes from supabase/realtime: lib/realtime_web/channels/
 * realtime_channel.ex (join replies and reasons, system messages, access_token),
 * user_socket.ex (handshake errors), socket/v2_serializer.ex (binary kind 4),
 * and Phoenix.Socket.V1.JSONSerializer (v1 frames carry topic/event/payload/ref).
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { randomUUID } from 'node:crypto';
import { RawSocket, useStandin } from './helpers.ts';
import { createUser } from '../helpers/db.ts';

const f = await useStandin(`
  create table public.items (id int primary key, owner_id uuid, label text);
  alter table public.items enable row level security;
  create policy items_owner on public.items for select to authenticated using (owner_id = (select auth.uid()));
  grant select on public.items to authenticated;
  create policy "user topic read" on realtime.messages for select to authenticated
    using (extension = 'broadcast' and (select realtime.topic()) = 'user:' || (select auth.uid())::text);
`);

describe('realtime protocol (vsn 1.0.0 frames)', () => {
	it('answers a heartbeat on topic phoenix with an ok reply of the same ref', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const ref = s.send('phoenix', 'heartbeat', {});
		const reply = await s.reply(ref);
		expect(reply).toEqual({ topic: 'phoenix', event: 'phx_reply', payload: { status: 'ok', response: {} }, ref });
	});

	it('joins a public channel: ok reply with postgres_changes []', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const { reply, ref } = await s.join('realtime:room-1', {
			config: {
				broadcast: { self: false, ack: false },
				presence: { key: '', enabled: false },
				postgres_changes: [],
				private: false,
			},
		});
		expect(reply).toEqual({
			topic: 'realtime:room-1',
			event: 'phx_reply',
			payload: { status: 'ok', response: { postgres_changes: [] } },
			ref,
		});
	});

	it('echoes postgres_changes bindings with integer ids, then sends the system message', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const binding = { event: '*', schema: 'public', table: 'items', filter: 'id=eq.1' };
		const { reply } = await s.join('realtime:changes', { config: { postgres_changes: [binding], private: false } });
		const [echoed] = reply.payload.response.postgres_changes;
		expect(echoed).toMatchObject(binding);
		expect(Number.isInteger(echoed.id)).toBe(true);
		const system = await s.next((fr) => fr.event === 'system');
		expect(system.payload).toEqual({
			extension: 'postgres_changes',
			status: 'ok',
			message: 'Subscribed to PostgreSQL',
			channel: 'changes',
		});
	});

	it('refuses a join with an expired access_token', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const expired = await f.standin.mintUserToken('00000000-0000-0000-0000-000000000009', { expiresIn: -10 });
		const { reply } = await s.join('realtime:room-2', { config: { private: false }, access_token: expired });
		expect(reply.payload.status).toBe('error');
		expect(reply.payload.response.reason).toMatch(/^InvalidJWTToken: Token has expired \d+ seconds ago$/);
	});

	it('refuses a join whose signed token names a role other than anon, authenticated, service_role or one the authenticator may switch to', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const superuser = await f.standin.mintUserToken('00000000-0000-0000-0000-000000000009', { role: 'postgres' });
		const { reply } = await s.join('realtime:room-5', { config: { private: false }, access_token: superuser });
		expect(reply.payload).toEqual({
			status: 'error',
			response: {
				reason:
					'InvalidJWTToken: JWT role "postgres" is not allowed; it must be anon, authenticated, service_role or a role authenticator may switch to',
			},
		});
		const user = await f.standin.mintUserToken('00000000-0000-0000-0000-000000000009');
		const ok = await s.join('realtime:room-6', { config: { private: false }, access_token: user });
		expect(ok.reply.payload.status).toBe('ok');
	});

	it('joins with a token whose role is a custom role the authenticator may switch to, as PostgREST accepts it', async () => {
		const granted = `plan_pro_${randomUUID().slice(0, 8)}`;
		await f.db.sql.unsafe(
			`create role ${granted} nologin; grant authenticated to ${granted}; grant ${granted} to authenticator`,
		);
		try {
			const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
			const custom = await f.standin.mintUserToken('00000000-0000-0000-0000-000000000009', { role: granted });
			const { reply } = await s.join('realtime:room-7', { config: { private: false }, access_token: custom });
			expect(reply.payload.status).toBe('ok');
		} finally {
			await f.db.sql.unsafe(`drop role ${granted}`);
		}
	});

	it('refuses a join with a forged access_token', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const [h, p] = f.standin.anonKey.split('.');
		const { reply } = await s.join('realtime:room-3', { config: { private: false }, access_token: `${h}.${p}.AAAA` });
		expect(reply.payload).toEqual({
			status: 'error',
			response: { reason: 'JwtSignatureError: Failed to validate JWT signature' },
		});
	});

	it('refuses a private channel the RLS policy does not allow', async () => {
		const user = await createUser(f.db.sql);
		const other = await createUser(f.db.sql);
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const token = await f.standin.mintUserToken(user.sub);
		const { reply } = await s.join(`realtime:user:${other.sub}`, { config: { private: true }, access_token: token });
		expect(reply.payload).toEqual({
			status: 'error',
			response: {
				reason: `Unauthorized: You do not have permissions to read from this Channel topic: user:${other.sub}`,
			},
		});
		const mine = await s.join(`realtime:user:${user.sub}`, { config: { private: true }, access_token: token });
		expect(mine.reply.payload.status).toBe('ok');
	});

	it('refuses a private channel for anon', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const { reply } = await s.join('realtime:user:someone', { config: { private: true } });
		expect(reply.payload.response.reason).toBe(
			'Unauthorized: You do not have permissions to read from this Channel topic: user:someone',
		);
	});

	it('answers phx_leave with ok, then phx_close', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const { ref: joinRef } = await s.join('realtime:room-4', { config: {} });
		const ref = s.send('realtime:room-4', 'phx_leave', {});
		expect((await s.reply(ref)).payload).toEqual({ status: 'ok', response: {} });
		const close = await s.next((fr) => fr.event === 'phx_close');
		expect(close).toEqual({ topic: 'realtime:room-4', event: 'phx_close', payload: {}, ref: joinRef });
		const after = s.send('realtime:room-4', 'broadcast', { type: 'broadcast', event: 'x', payload: {} });
		expect((await s.reply(after)).payload).toEqual({ status: 'error', response: { reason: 'unmatched topic' } });
	});

	it('closes the channel with a system error when access_token pushes an unauthorized token', async () => {
		const user = await createUser(f.db.sql);
		const other = await createUser(f.db.sql);
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		const topic = `realtime:user:${user.sub}`;
		await s.join(topic, { config: { private: true }, access_token: await f.standin.mintUserToken(user.sub) });
		s.send(topic, 'access_token', { access_token: await f.standin.mintUserToken(other.sub) });
		const system = await s.next((fr) => fr.event === 'system' && fr.topic === topic);
		expect(system.payload).toEqual({
			extension: 'system',
			status: 'error',
			message: `You do not have permissions to read from this Channel topic: user:${user.sub}`,
			channel: `user:${user.sub}`,
		});
		await s.next((fr) => fr.event === 'phx_close' && fr.topic === topic);
	});

	it('delivers a public realtime.send as a v1 JSON broadcast with meta.id', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		await s.join('realtime:news', { config: { private: false } });
		await f.db.sql`select realtime.send(${f.db.sql.json({ n: 1 })}, 'hello', 'news', false)`;
		const msg = await s.next((fr) => fr.event === 'broadcast');
		const [row] = await f.db.sql<{ id: string }[]>`select id::text from realtime.messages where topic = 'news'`;
		expect(msg).toEqual({
			topic: 'realtime:news',
			event: 'broadcast',
			payload: { event: 'hello', payload: { n: 1 }, type: 'broadcast', meta: { id: row!.id } },
			ref: null,
		});
	});

	it('sends a row inserted directly into realtime.messages whatever its extension, and drops one with no private flag', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey);
		await s.join('realtime:direct', { config: { private: false } });
		const invalid = f.standin.realtime.stats().dropped.invalid;
		await f.db
			.sql`insert into realtime.messages (topic, extension, event, payload, private) values ('direct', 'broadcast', 'no-flag', '{}', null)`;
		await f.db
			.sql`insert into realtime.messages (topic, extension, event, payload, private) values ('direct', 'presence', 'sent', '{}', false)`;
		const msg = await s.next((fr) => fr.event === 'broadcast');
		expect(msg.payload).toMatchObject({ event: 'sent' });
		expect(f.standin.realtime.stats().dropped.invalid).toBe(invalid + 1);
		expect(s.frames.filter((fr) => !Buffer.isBuffer(fr) && fr.event === 'broadcast')).toHaveLength(1);
	});

	it('refuses the websocket handshake for a bad API key with 401 {error}', async () => {
		const ws = new WebSocket(`${f.standin.url.replace('http', 'ws')}/realtime/v1/websocket?apikey=nope&vsn=1.0.0`);
		const status = await new Promise<number>((resolve) =>
			ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
		);
		expect(status).toBe(401);
	});
});

describe('realtime protocol (vsn 2.0.0 frames)', () => {
	it('speaks arrays and delivers Broadcast from Database as binary user broadcast frames', async () => {
		const s = await RawSocket.open(f.standin.url, f.standin.anonKey, '2.0.0');
		const ref = s.send('phoenix', 'heartbeat', {});
		expect(await s.reply(ref)).toEqual({
			join_ref: null,
			ref,
			topic: 'phoenix',
			event: 'phx_reply',
			payload: { status: 'ok', response: {} },
		});
		const { reply } = await s.join('realtime:binary', { config: { private: false } });
		expect(reply.join_ref).toBe(reply.ref);
		await f.db.sql`select realtime.send(${f.db.sql.json({ x: 'y' })}, 'evt', 'binary', false)`;
		const frame = await new Promise<Buffer>((resolve) => {
			const found = s.frames.find((x) => Buffer.isBuffer(x));
			if (found) resolve(found as Buffer);
			else s.ws.once('message', (d, isBinary) => isBinary && resolve(Buffer.from(d as Buffer)));
		});
		// <<4, topic_size, event_size, metadata_size, encoding(1 = json), topic, event, metadata, payload>>
		expect(frame[0]).toBe(4);
		const topicSize = frame[1]!;
		const eventSize = frame[2]!;
		const metaSize = frame[3]!;
		expect(frame[4]).toBe(1);
		let o = 5;
		expect(frame.subarray(o, (o += topicSize)).toString()).toBe('realtime:binary');
		expect(frame.subarray(o, (o += eventSize)).toString()).toBe('evt');
		expect(JSON.parse(frame.subarray(o, (o += metaSize)).toString())).toHaveProperty('id');
		expect(JSON.parse(frame.subarray(o).toString())).toEqual({ x: 'y' });
	});
});
