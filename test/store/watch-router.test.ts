/**
 * What a thousand watches share: one router per Realtime topic (one transport
 * listener, messages handed to the watches of the job they name), the inbox
 * each watch waits on, and one userId() answer for the watches started
 * together. A hand-driven Realtime capability stands in for the transport.
 */
import { describe, expect, it } from 'vitest';
import { supabaseRealtime, type SupabaseRealtimeClient } from '../../src/lib/adapters/supabase-realtime.ts';
import type { JobRealtimeCapability, JobTopicListener, JobTopicStatus, RawRow } from '../../src/lib/store/adapter.ts';
import { Inbox } from '../../src/lib/store/live/inbox.ts';
import { topicRouter, type TopicFollower } from '../../src/lib/store/live/topic-router.ts';

/** A transport whose topics the test drives: what it was asked to join, and who listens. */
function handTransport() {
	const listeners = new Map<string, JobTopicListener[]>();
	const closed: string[] = [];
	let joinedAlready = false;
	const realtime: JobRealtimeCapability = {
		subscribe(topic, listener) {
			listeners.set(topic, [...(listeners.get(topic) ?? []), listener]);
			return {
				joined: joinedAlready,
				close() {
					closed.push(topic);
					listeners.set(
						topic,
						(listeners.get(topic) ?? []).filter((l) => l !== listener),
					);
				},
			};
		},
		userId: () => Promise.resolve('u'),
	};
	return {
		realtime,
		listeners,
		closed,
		markJoined(on: boolean) {
			joinedAlready = on;
		},
		send(topic: string, row: RawRow) {
			for (const l of listeners.get(topic) ?? []) l.message(row);
		},
		status(topic: string, status: JobTopicStatus) {
			for (const l of listeners.get(topic) ?? []) l.status(status);
		},
	};
}

function follower(id: string) {
	const got: string[] = [];
	const f: TopicFollower = {
		id,
		onMessage: (row) => got.push(`message ${String(row.status)}`),
		onStatus: (status) => got.push(status),
	};
	return { f, got };
}

describe('one router per Realtime topic', () => {
	it('subscribes once for every follower, hands a message only to the followers of the job it names, and leaves with the last', () => {
		const t = handTransport();
		const router = topicRouter(t.realtime, 'jobs:u');
		const a = follower('a');
		const b = follower('b');
		const a2 = follower('a');
		router.add(a.f);
		expect(topicRouter(t.realtime, 'jobs:u')).toBe(router);
		topicRouter(t.realtime, 'jobs:u').add(b.f);
		router.add(a2.f);
		expect(t.listeners.get('jobs:u')).toHaveLength(1);

		t.send('jobs:u', { id: 'a', status: 'running' });
		t.send('jobs:u', { id: 'c', status: 'running' });
		expect(a.got).toEqual(['message running']);
		expect(a2.got).toEqual(['message running']);
		expect(b.got).toEqual([]);

		router.remove(a.f);
		t.send('jobs:u', { id: 'a', status: 'done' });
		expect(a.got).toEqual(['message running']);
		expect(a2.got).toEqual(['message running', 'message done']);

		router.remove(a2.f);
		expect(t.closed).toEqual([]);
		router.remove(b.f);
		expect(t.closed).toEqual(['jobs:u']);
		expect(topicRouter(t.realtime, 'jobs:u')).not.toBe(router);
	});

	it('tells every follower each status; one added to a live topic is live at once and needs no read', () => {
		const t = handTransport();
		const router = topicRouter(t.realtime, 'jobs:u');
		const early = follower('a');
		expect(router.add(early.f)).toBe(false);
		t.status('jobs:u', 'live');
		const late = follower('b');
		expect(router.add(late.f)).toBe(true);
		t.status('jobs:u', 'down');
		expect(early.got).toEqual(['live', 'down']);
		expect(late.got).toEqual(['live', 'down']);
		const whileDown = follower('c');
		expect(router.add(whileDown.f)).toBe(false);
		expect(whileDown.got).toEqual([]);
	});

	it('a topic another listener already joined counts as joined for the first follower', () => {
		const t = handTransport();
		t.markJoined(true);
		expect(topicRouter(t.realtime, 'jobs:v').add(follower('a').f)).toBe(true);
	});

	it('on refusal every follower is told, the topic is left, and the next follower joins afresh', () => {
		const t = handTransport();
		const router = topicRouter(t.realtime, 'job:x');
		const a = follower('a');
		router.add(a.f);
		t.status('job:x', 'refused');
		expect(a.got).toEqual(['refused']);
		expect(t.closed).toEqual(['job:x']);
		router.remove(a.f);
		expect(t.closed).toEqual(['job:x']);
		expect(topicRouter(t.realtime, 'job:x')).not.toBe(router);
		expect(t.listeners.get('job:x')).toHaveLength(1);
	});
});

describe('the inbox a watch waits on', () => {
	it('hands queued events in order, then waits for the next push', async () => {
		const inbox = new Inbox<number>();
		inbox.push(1);
		inbox.push(2);
		expect(await inbox.next(Infinity, undefined)).toBe(1);
		expect(await inbox.next(Infinity, undefined)).toBe(2);
		const waiting = inbox.next(Infinity, undefined);
		inbox.push(3);
		expect(await waiting).toBe(3);
	});

	it('takes the events that match, keeping the others in order', async () => {
		const inbox = new Inbox<number>();
		for (const n of [1, 2, 3, 4]) inbox.push(n);
		expect(inbox.take((n) => n % 2 === 0)).toEqual([2, 4]);
		expect(await inbox.next(Infinity, undefined)).toBe(1);
		expect(await inbox.next(Infinity, undefined)).toBe(3);
		expect(inbox.take(() => true)).toEqual([]);
	});

	it('ends a wait with elapsed after its time, or aborted when its signal aborts, and then stops listening to it', async () => {
		const inbox = new Inbox<number>();
		expect(await inbox.next(5, undefined)).toBe('elapsed');
		const controller = new AbortController();
		let added = 0;
		let removed = 0;
		const signal = controller.signal;
		const add = signal.addEventListener.bind(signal);
		const remove = signal.removeEventListener.bind(signal);
		signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add;
		signal.removeEventListener = ((...args: Parameters<typeof remove>) => (
			removed++,
			remove(...args)
		)) as typeof remove;
		const waiting = inbox.next(Infinity, signal);
		controller.abort();
		expect(await waiting).toBe('aborted');
		expect([added, removed]).toEqual([1, 1]);
		expect(await inbox.next(Infinity, signal)).toBe('aborted');
		// A push after the abort is queued for a later wait, not lost.
		inbox.push(7);
		expect(await inbox.next(Infinity, undefined)).toBe(7);
	});
});

describe('the signed-in user of a supabase-js client', () => {
	it('watches asking together share one setAuth and one decode; a later ask refreshes the token', async () => {
		const claims = (sub: string) => `x.${Buffer.from(JSON.stringify({ sub })).toString('base64url')}.y`;
		let setAuths = 0;
		let token = claims('alice');
		const client = {
			realtime: {
				accessTokenValue: null as string | null,
				async setAuth() {
					setAuths++;
					await Promise.resolve();
					this.accessTokenValue = token;
				},
			},
			channel: () => {
				throw new Error('not used');
			},
			removeChannel: () => Promise.resolve(),
		} satisfies SupabaseRealtimeClient;
		const realtime = supabaseRealtime(client);
		const answers = await Promise.all(Array.from({ length: 50 }, () => realtime.userId()));
		expect(new Set(answers)).toEqual(new Set(['alice']));
		expect(setAuths).toBe(1);
		token = claims('bob');
		expect(await realtime.userId()).toBe('bob');
		expect(setAuths).toBe(2);
	});
});
