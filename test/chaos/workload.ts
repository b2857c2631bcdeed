/**
 * The simulated users of the chaos run: each signs in with a JWT of their own
 * (minted as GoTrue would), talks to the stand-in through supabase-js only,
 * enqueues their share of the jobs at a steady pace (with an idempotency key,
 * retried while the database or the stand-in is down), cancels some of them
 * at a random moment, watches a sample through `store.watch` (Realtime), and
 * listens on their own list topic. Each also tries to listen on another
 * user's topics: anything that arrives there is a leak.
 */
import { randomUUID } from 'node:crypto';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import WebSocket from 'ws';
import { JobStore, isTerminalStatus, supabaseAdapter, type Job, type JobStatusValue } from '../../src/lib/index.ts';
import type { JobTopicStatus } from '../../src/lib/adapter.ts';
import { CHAOS_KINDS } from './kinds.ts';

export interface JobSpec {
	key: string;
	user: number;
	kind: (typeof CHAOS_KINDS)[number];
	params: Record<string, number>;
	payload: string | null;
	maxAttempts: number;
	/** Ms after the enqueue is acknowledged; null: never cancelled. */
	cancelAfterMs: number | null;
	watch: boolean;
	/** Ms after the run's start at which it is enqueued. */
	at: number;
}

/** A deterministic random source (mulberry32), so a failing run can be replayed with CHAOS_SEED. */
export function seededRandom(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

export function planJobs(options: {
	jobs: number;
	users: number;
	watchers: number;
	cancelShare: number;
	enqueueMs: number;
	/** Moments of the planned restarts, as fractions of the enqueue window. */
	restartsAt?: readonly number[];
	random: () => number;
}): JobSpec[] {
	const { jobs, users, random } = options;
	const watchEvery = options.watchers > 0 ? Math.max(1, Math.floor(jobs / options.watchers)) : Infinity;
	// Just before each planned restart, a few watched jobs long enough to span it.
	const spanning = new Set(
		(options.restartsAt ?? []).flatMap((f) => [1, 2, 3].map((k) => Math.max(0, Math.floor(f * jobs) - k * watchEvery))),
	);
	return Array.from({ length: jobs }, (_, i) => {
		if (spanning.has(i))
			return {
				key: randomUUID(),
				user: i % users,
				kind: 'chaos.steps',
				params: { steps: 40, stepMs: 300 },
				payload: null,
				maxAttempts: 3,
				cancelAfterMs: null,
				watch: true,
				at: (i / jobs) * options.enqueueMs,
			};
		const roll = random();
		const kind = roll < 0.5 ? 'chaos.quick' : roll < 0.8 ? 'chaos.steps' : 'chaos.flaky';
		const params: Record<string, number> =
			kind === 'chaos.quick'
				? { steps: 2, stepMs: 20 + Math.floor(random() * 60) }
				: kind === 'chaos.steps'
					? { steps: 6 + Math.floor(random() * 8), stepMs: 150 + Math.floor(random() * 150) }
					: // 1: succeeds at once; 2-3: after retries; 4: fails once its 3 attempts are spent.
						{ stepMs: 50 + Math.floor(random() * 100), failUntil: 1 + Math.floor(random() * 4) };
		const cancelled = random() < options.cancelShare;
		return {
			key: randomUUID(),
			user: i % users,
			kind,
			params,
			// Some jobs carry a payload, which must be gone once they are terminal.
			payload: i % 4 === 0 ? `chaos payload ${i} `.repeat(8) : null,
			maxAttempts: 3,
			// Half soon after enqueue (mostly still queued), half later (often running).
			cancelAfterMs: cancelled ? (random() < 0.5 ? random() * 300 : 500 + random() * 3500) : null,
			watch: i % watchEvery === 0 && i / watchEvery < options.watchers,
			at: (i / jobs) * options.enqueueMs,
		};
	});
}

export interface Frame {
	/** Epoch ms the callback ran. */
	at: number;
	status: JobStatusValue;
	progress: number;
	attempts: number;
	ownerId: string | null;
	updatedAt: number;
}

export interface Watcher {
	jobId: string;
	user: number;
	frames: Frame[];
	realtime: JobTopicStatus[];
	/** Epoch ms of each 'down' (the connection was lost: a restart). */
	startedAt: number;
	ended: Promise<void>;
	endedAt: number | null;
	error: unknown;
}

export interface SimUser {
	index: number;
	id: string;
	client: SupabaseClient;
	store: JobStore;
	/** Job ids this user's list topic told them about, with the owner each summary carried. */
	listed: { id: string; ownerId: string | null }[];
	/** Messages that arrived on another user's topics. */
	leaks: string[];
	spyStatuses: string[];
	stopList: () => void;
}

export interface Enqueued {
	spec: JobSpec;
	id: string;
	/** Epoch ms the enqueue was acknowledged. */
	ackAt: number;
	/** Requests it took (more than 1: retried through an outage). */
	tries: number;
}

export interface CancelAttempt {
	id: string;
	at: number;
	/** The row the cancel returned, or null when there was nothing left to stop. */
	outcome: 'cancelled' | 'nothing to stop';
	tries: number;
}

export async function signIn(
	project: { url: string; anonKey: string; userToken(sub: string): Promise<string> },
	index: number,
	id: string,
): Promise<SimUser> {
	const token = await project.userToken(id);
	const client = createClient(project.url, project.anonKey, {
		realtime: { transport: WebSocket as never, reconnectAfterMs: () => 200 },
		auth: { persistSession: false, autoRefreshToken: false },
		accessToken: () => Promise.resolve(token),
	});
	await client.realtime.setAuth();
	const store = new JobStore(supabaseAdapter(client));
	const user: SimUser = { index, id, client, store, listed: [], leaks: [], spyStatuses: [], stopList: () => {} };
	user.stopList = store.subscribeList({
		intervalMs: 5000,
		onChange: (job) => {
			if (job) user.listed.push({ id: job.id, ownerId: job.ownerId });
		},
	});
	return user;
}

/** Listens on `topic` (another user's) and records whatever arrives there. */
export function spyOn(user: SimUser, topic: string): void {
	const channel = user.client.channel(topic, { config: { private: true } });
	channel.on('broadcast', { event: '*' }, (message) => user.leaks.push(`${topic}: ${JSON.stringify(message)}`));
	channel.subscribe((status) => {
		user.spyStatuses.push(`${topic}: ${status}`);
		// Refused, as it must be: stop asking (supabase-js would retry the join forever).
		if (status === 'CHANNEL_ERROR') void user.client.removeChannel(channel);
	});
}

/** Retries `call` while the stack is down (connection refused, 5xx): what a client with an idempotency key may do. */
export async function persist<T>(
	call: () => Promise<T>,
	isFinal: (error: unknown) => boolean,
	onRetry: () => void,
	pauseMs: () => number,
): Promise<{ value: T; tries: number }> {
	for (let tries = 1; ; tries++) {
		try {
			return { value: await call(), tries };
		} catch (error) {
			if (isFinal(error) || tries >= 200) throw error;
			onRetry();
			// A client's backoff between tries, not a wait standing in for an event.
			await new Promise((resolve) => setTimeout(resolve, pauseMs()));
		}
	}
}

export function watch(user: SimUser, jobId: string): Watcher {
	const watcher: Watcher = {
		jobId,
		user: user.index,
		frames: [],
		realtime: [],
		startedAt: Date.now(),
		ended: Promise.resolve(),
		endedAt: null,
		error: null,
	};
	watcher.ended = (async () => {
		try {
			for await (const job of user.store.watch(jobId, {
				emitOn: ['status', 'progress', 'attempts'],
				intervalMs: 3000,
				onRealtime: (status) => watcher.realtime.push(status),
			})) {
				watcher.frames.push(frameOf(job));
			}
		} catch (error) {
			watcher.error = error;
		} finally {
			watcher.endedAt = Date.now();
		}
	})();
	return watcher;
}

function frameOf(job: Job): Frame {
	return {
		at: Date.now(),
		status: job.status,
		progress: job.progress,
		attempts: job.attempts,
		ownerId: job.ownerId,
		updatedAt: job.updatedAt.getTime(),
	};
}

export const terminal = (frames: Frame[]) => frames.length > 0 && isTerminalStatus(frames.at(-1)!.status);
