/**
 * The security matrix over Realtime: private channels of a user's list topic
 * (jobs:<owner>) and of a job's topic (job:<id>), for A's job and an ownerless
 * one, joined by the owner, another user, anon, a JWT without sub and a custom
 * role inheriting authenticated. Only A joins jobs:<A> (an admin any topic);
 * every other join is refused, and no frame of A's job or of the ownerless
 * one reaches anyone else, whatever they join (public channels included).
 */
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/local/standin/jwt.ts';
import { createUser } from '../helpers/db.ts';
import { deliveredSoFar, JWT_SECRET, recordingTransport, useRealtimeFixture } from '../realtime/helpers.ts';
import { createCustomRole } from './matrix.ts';

const f = await useRealtimeFixture();

interface RtCaller {
	name: string;
	supabase: SupabaseClient;
	frames: string[];
}
let owner: RtCaller & { sub: string };
let others: RtCaller[];
let admin: RtCaller;
let drop: () => Promise<void>;

async function connect(name: string, token: string | null): Promise<RtCaller> {
	const recording = recordingTransport();
	const supabase = createClient(f.standin.url, f.standin.anonKey, {
		realtime: { transport: recording.transport as never, reconnectAfterMs: () => 100 },
		auth: { persistSession: false, autoRefreshToken: false },
		...(token ? { accessToken: async () => token } : {}),
	});
	await supabase.realtime.setAuth(token ?? undefined);
	return { name, supabase, frames: recording.frames };
}

beforeAll(async () => {
	const custom = await createCustomRole(f.db.sql);
	drop = custom.drop;
	const user = async (name: string, options?: Parameters<typeof f.standin.mintUserToken>[1]) => {
		const { sub } = await createUser(f.db.sql);
		return { ...(await connect(name, await f.standin.mintUserToken(sub, options))), sub };
	};
	const now = Math.floor(Date.now() / 1000);
	const noSub = await signToken(JWT_SECRET, { role: 'authenticated', aud: 'authenticated', iat: now, exp: now + 3600 });
	owner = await user('user A (owner)');
	others = [
		await user('user B'),
		await connect('anon', null),
		await connect('a JWT without sub', noSub),
		await user(`custom role ${custom.role}`, { role: custom.role }),
	];
	admin = await user('an admin', { claims: { app_metadata: { provider: 'email', role: 'admin' } } });
});
afterAll(async () => {
	for (const c of [owner, ...others, admin]) await c?.supabase.removeAllChannels();
	await drop?.();
});

function join(channel: RealtimeChannel): Promise<string> {
	return new Promise((resolve) =>
		channel.subscribe((status) => {
			if (status !== 'CLOSED') resolve(status);
		}),
	);
}

/** Joins `topic` privately and answers the status, leaving the channel afterwards. */
async function privateJoin(caller: RtCaller, topic: string): Promise<string> {
	const channel = caller.supabase.channel(topic, { config: { private: true } });
	const status = await join(channel);
	await caller.supabase.removeChannel(channel);
	return status;
}

describe('Realtime: the five callers and the job topics', () => {
	it("only A joins jobs:<A> privately; B, anon, a JWT without sub and a custom role are refused every topic of A's job and of an ownerless one", async () => {
		const mine = await f.worker.enqueue(`rt.${randomUUID().slice(0, 8)}`, { ownerId: owner.sub });
		const ownerless = await f.worker.enqueue(`rt.${randomUUID().slice(0, 8)}`);
		for (const caller of others) {
			for (const topic of [`jobs:${owner.sub}`, `job:${mine.id}`, `job:${ownerless.id}`])
				expect(await privateJoin(caller, topic), `${caller.name} joining ${topic}`).toBe('CHANNEL_ERROR');
		}
		expect(await privateJoin(owner, `job:${ownerless.id}`)).toBe('CHANNEL_ERROR');
		expect(await privateJoin(owner, `jobs:${owner.sub}`)).toBe('SUBSCRIBED');
		// The custom role's user joins their own list topic: refused above for being someone else, not for the role.
		const custom = others[3] as RtCaller & { sub: string };
		expect(await privateJoin(custom, `jobs:${custom.sub}`)).toBe('SUBSCRIBED');
		expect(await privateJoin(admin, `job:${mine.id}`)).toBe('SUBSCRIBED');
		expect(await privateJoin(admin, `jobs:${owner.sub}`)).toBe('SUBSCRIBED');
	});

	it("no frame of A's job or of an ownerless job reaches anyone but A, whatever they join; A hears A's", async () => {
		const kind = `rt.secret.${randomUUID().slice(0, 8)}`;
		const mine = await f.worker.enqueue(kind, { ownerId: owner.sub });
		const ownerless = await f.worker.enqueue(kind);
		const ownList = owner.supabase.channel(`jobs:${owner.sub}`, { config: { private: true } });
		const heard: string[] = [];
		ownList.on('broadcast', { event: 'job' }, (m) => heard.push((m.payload as { status: string }).status));
		expect(await join(ownList)).toBe('SUBSCRIBED');
		for (const caller of others) {
			// Public channels of the same topics: joined without authorization, and silent.
			for (const topic of [`jobs:${owner.sub}`, `job:${mine.id}`, `job:${ownerless.id}`])
				expect(await join(caller.supabase.channel(topic))).toBe('SUBSCRIBED');
		}
		for (const job of [mine, ownerless]) {
			const claimed = (await f.worker.claim(job.id))!;
			await f.worker.tick(job.id, { progress: 50, stage: 'table', attempt: claimed.attempts });
			await f.worker.succeed(job.id, { attempt: claimed.attempts });
		}
		await deliveredSoFar(f, owner.supabase);
		for (const caller of others) await deliveredSoFar(f, caller.supabase);
		expect(heard).toContain('done');
		for (const caller of others) {
			expect(caller.frames.length, caller.name).toBeGreaterThan(0);
			expect(
				caller.frames.filter((frame) => frame.includes(kind)),
				caller.name,
			).toEqual([]);
		}
		// A hears A's job on jobs:<A>, never the ownerless one's.
		expect(owner.frames.some((frame) => frame.includes(mine.id) && frame.includes(kind))).toBe(true);
		expect(owner.frames.filter((frame) => frame.includes(ownerless.id) && frame.includes(kind))).toEqual([]);
		for (const caller of [owner, ...others]) await caller.supabase.removeAllChannels();
	});
});
