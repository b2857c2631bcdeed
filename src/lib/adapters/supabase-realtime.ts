/**
 * The Realtime half of the supabase-js transport: private Broadcast topics
 * (`jobs:<owner_id>`, `job:<id>`) fed by the database's send_job_messages
 * (supabase/schemas/09_realtime.sql).
 *
 * realtime-js hands back the SAME channel object for the same topic
 * (`client.channel(topic)` finds the existing one), and a second
 * `subscribe()` on a joined channel never calls its callback. So two watchers
 * of one job cannot each own a channel: topics are shared per client here,
 * reference-counted, and left when the last listener closes.
 */
import type {
	JobRealtimeCapability,
	JobTopicListener,
	JobTopicStatus,
	JobTopicSubscription,
	RawRow,
} from '../store/adapter.ts';

/** The event name the broadcast trigger sends. */
const EVENT = 'job';
/** The event of a list message carrying several jobs: `{ job_table, jobs: [...] }`. */
const BATCH_EVENT = 'jobs';
/** The event of a chunk of a job's streamed output (job_stream_append). */
const STREAM_EVENT = 'job_stream';

/**
 * The part of a realtime-js `RealtimeChannel` this module uses.
 */
export interface SupabaseChannelLike {
	on(
		type: 'broadcast',
		filter: { event: string },
		callback: (message: { type: 'broadcast'; event: string; [key: string]: unknown }) => void,
	): unknown;
	on(type: 'system', filter: Record<string, never>, callback: (payload: unknown) => void): unknown;
	subscribe(callback: (status: string, err?: Error) => void): unknown;
}

/**
 * The part of a supabase-js `SupabaseClient` the Realtime capability uses:
 * `realtime.setAuth()` (the documented step before joining a private
 * channel), `channel()` and `removeChannel()`.
 */
export interface SupabaseRealtimeClient {
	realtime: { setAuth(token?: string | null): Promise<void>; accessTokenValue?: string | null };
	channel(
		name: string,
		options: { config: { private: boolean; broadcast?: { replication_ready?: boolean } } },
	): SupabaseChannelLike;
	removeChannel(channel: SupabaseChannelLike): Promise<unknown>;
}

/** The `sub` claim of a JWT, read (not verified: the server authorizes every join); null for non-JWT keys. */
function subjectOf(token: string | null | undefined): string | null {
	const part = token?.split('.')[1];
	if (!part) return null;
	try {
		const json = atob(
			part
				.replaceAll('-', '+')
				.replaceAll('_', '/')
				.padEnd(Math.ceil(part.length / 4) * 4, '='),
		);
		const claims = JSON.parse(json) as { sub?: unknown; role?: unknown };
		return typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : null;
	} catch {
		return null;
	}
}

/**
 * How long after a join a topic waits for Realtime's "replication ready"
 * system message before calling itself live anyway (a server that does not
 * send it). Hosted Realtime sends it right after the join reply when the
 * project's replication is running, and only once it is ready after an idle
 * spell: until then a committed change is never sent, so `live` waits for it.
 */
export const REPLICATION_READY_GRACE_MS = 3_000;

/** The first wait before joining again a topic whose join was refused for a reason that passes; doubled each time. */
export const REJOIN_FIRST_MS = 1_000;
/** The longest wait between two joins of a refused topic. */
export const REJOIN_MAX_MS = 30_000;

/**
 * A refusal that joining again will not change: the topic's policy says no
 * (`Unauthorized: ...`, `You no longer have permission ...`). Everything
 * else passes: no partition for today yet (`MissingPartition`), a quota
 * (`ClientJoinRateLimitReached`, `ChannelRateLimitReached`, `Too many messages
 * per second`), replication not ready in time, a join that timed out.
 */
function refusalIsFinal(reason: unknown): boolean {
	const text = reason instanceof Error ? reason.message : String(reason);
	return /Unauthorized|no longer have permission/i.test(text);
}

/** The wait before join number `failures + 1` of a refused topic: doubling from REJOIN_FIRST_MS up to REJOIN_MAX_MS, with jitter. */
export function rejoinDelayMs(failures: number, random: () => number = Math.random): number {
	const base = Math.min(REJOIN_MAX_MS, REJOIN_FIRST_MS * 2 ** Math.max(0, failures - 1));
	return Math.round(base * (0.75 + random() * 0.5));
}

/** One joined topic and everyone listening to it. */
class SharedTopic {
	readonly listeners = new Set<JobTopicListener>();
	#status: JobTopicStatus | null = null;
	#everLive = false;
	#channel: SupabaseChannelLike | null = null;
	#disposed = false;
	/** Joins refused in a row (reset once live). */
	#failures = 0;
	/** The server's last system error on this channel (why it closed it). */
	#closedFor: string | null = null;
	/** This channel was told replication is ready. */
	#ready = false;
	/** Joined, waiting for replication to be ready (or the grace to end). */
	#joined = false;
	#timer: ReturnType<typeof setTimeout> | undefined = undefined;
	/** Settles once the channel is left (a new join of the topic waits for it). */
	left: Promise<void> = Promise.resolve();

	constructor(
		readonly client: SupabaseRealtimeClient,
		readonly topic: string,
		readonly forget: (t: SharedTopic) => void,
	) {}

	get live(): boolean {
		return this.#status === 'live' && !this.#disposed;
	}

	add(listener: JobTopicListener): void {
		this.listeners.add(listener);
		// A late listener of a live topic is live at once (it re-reads, like everyone on `live`).
		if (this.#status === 'live') queueMicrotask(() => this.listeners.has(listener) && listener.status('live'));
	}

	remove(listener: JobTopicListener): void {
		this.listeners.delete(listener);
		if (this.listeners.size === 0) this.dispose();
	}

	async open(previous: Promise<void>): Promise<void> {
		await previous;
		if (this.#disposed) return;
		try {
			// The documented order for private channels: the current JWT first.
			await this.client.realtime.setAuth();
		} catch (e) {
			this.#report('refused', e);
			this.dispose();
			return;
		}
		if (this.#disposed) return;
		const channel = this.client.channel(this.topic, {
			config: { private: true, broadcast: { replication_ready: true } },
		});
		this.#channel = channel;
		this.#closedFor = null;
		this.#ready = false;
		this.#joined = false;
		this.#listen(channel);
		try {
			channel.subscribe((status, err) => this.#onSubscribe(channel, status, err));
		} catch (e) {
			// The socket could not even be made (no WebSocket: Node 20 with serverRealtime):
			// refused, so the store polls instead.
			this.#report('refused', e);
			this.dispose();
		}
	}

	#listen(channel: SupabaseChannelLike): void {
		channel.on('broadcast', { event: EVENT }, (message) => {
			if (this.#channel !== channel) return;
			const row = message.payload;
			if (typeof row !== 'object' || row === null) return;
			for (const l of [...this.listeners]) l.message(row as RawRow);
		});
		// A statement that changed several of one owner's jobs sends them in one message.
		channel.on('broadcast', { event: BATCH_EVENT }, (message) => {
			if (this.#channel !== channel) return;
			const rows = (message.payload as { jobs?: unknown } | null)?.jobs;
			if (!Array.isArray(rows)) return;
			for (const row of rows) {
				if (typeof row !== 'object' || row === null) continue;
				for (const l of [...this.listeners]) l.message(row as RawRow);
			}
		});
		channel.on('broadcast', { event: STREAM_EVENT }, (message) => {
			if (this.#channel !== channel) return;
			const chunk = message.payload;
			if (typeof chunk !== 'object' || chunk === null) return;
			for (const l of [...this.listeners]) l.stream?.(chunk as RawRow);
		});
		// Replication ready (asked with config.broadcast.replication_ready): from now on every commit is sent.
		channel.on('system', {}, (payload: unknown) => {
			if (this.#channel !== channel) return;
			const p = (payload ?? {}) as { extension?: unknown; status?: unknown; message?: unknown };
			if (p.extension !== 'system') return;
			if (p.status === 'ok') {
				const first = !this.#ready;
				this.#ready = true;
				// Joined and waiting: live now. Already live (the grace ran out first): live again, so listeners re-read.
				if (this.#joined && (this.#status !== 'live' || first)) this.#live();
			} else if (p.status === 'error') {
				this.#closedFor = typeof p.message === 'string' ? p.message : 'error';
			}
		});
	}

	#onSubscribe(channel: SupabaseChannelLike, status: string, err?: Error): void {
		if (this.#disposed || this.#channel !== channel) return;
		if (status === 'SUBSCRIBED') {
			// Live once replication is ready (the system message), or after the grace when none comes.
			this.#joined = true;
			clearTimeout(this.#timer);
			if (this.#ready) this.#live();
			else this.#timer = setTimeout(() => this.#live(), REPLICATION_READY_GRACE_MS);
			return;
		}
		this.#joined = false;
		const reason = this.#closedFor ?? err ?? status;
		if (this.#everLive && status !== 'CLOSED') {
			// CHANNEL_ERROR / TIMED_OUT after a join: realtime-js rejoins by itself (and is told of replication again).
			this.#ready = false;
			this.#report('down', reason);
		} else if (refusalIsFinal(reason)) {
			// Refused by the topic's policy, or closed by the server for it
			// (e.g. a refreshed token that no longer authorizes the topic).
			this.#report('refused', reason);
			this.dispose();
		} else {
			// Refused for a reason that passes (no partition yet, a quota, replication late), or shut
			// down for one after being live: down, and joined again after a growing wait.
			this.#retry(reason);
		}
	}

	#live(): void {
		clearTimeout(this.#timer);
		this.#timer = undefined;
		this.#everLive = true;
		this.#failures = 0;
		this.#report('live');
	}

	#retry(reason: unknown): void {
		clearTimeout(this.#timer);
		this.#everLive = false;
		this.#report('down', reason);
		const channel = this.#channel;
		this.#channel = null;
		const left = channel
			? this.client.removeChannel(channel).then(
					() => undefined,
					() => undefined,
				)
			: this.left;
		this.left = left;
		const wait = rejoinDelayMs(++this.#failures);
		this.#timer = setTimeout(() => {
			this.#timer = undefined;
			if (!this.#disposed) void this.open(left);
		}, wait);
	}

	#report(status: JobTopicStatus, reason?: unknown): void {
		this.#status = status;
		for (const l of [...this.listeners]) l.status(status, reason);
	}

	dispose(): void {
		if (this.#disposed) return;
		this.#disposed = true;
		clearTimeout(this.#timer);
		this.#timer = undefined;
		const channel = this.#channel;
		this.#channel = null;
		if (channel)
			this.left = this.client.removeChannel(channel).then(
				() => undefined,
				() => undefined,
			);
		this.forget(this);
	}
}

/** Shared topics per client, so every adapter over one client shares channels. */
const topicsByClient = new WeakMap<SupabaseRealtimeClient, Map<string, SharedTopic>>();
/** Channels still being left, per client and topic: a new join waits for the old leave. */
const leavingByClient = new WeakMap<SupabaseRealtimeClient, Map<string, Promise<void>>>();

/**
 * The {@link JobRealtimeCapability} over a supabase-js client: each topic is
 * a private Broadcast channel joined after `client.realtime.setAuth()`.
 * `supabaseAdapter` attaches it by default; use this directly only to build
 * your own adapter.
 *
 * @example
 * ```ts
 * const realtime = supabaseRealtime(supabase);
 * const sub = realtime.subscribe(`job:${id}`, {
 *   message: (row) => console.log(row.status, row.progress),
 *   status: (s) => console.log('realtime', s),
 * });
 * // later
 * sub.close();
 * ```
 */
export function supabaseRealtime(client: SupabaseRealtimeClient): JobRealtimeCapability {
	let topics = topicsByClient.get(client);
	if (!topics) topicsByClient.set(client, (topics = new Map()));
	let leaving = leavingByClient.get(client);
	if (!leaving) leavingByClient.set(client, (leaving = new Map()));
	const shared = topics;
	const left = leaving;
	/** The userId() in flight, shared by the calls made meanwhile. */
	let asking: Promise<string | null> | null = null;
	/** The last token decoded and its subject. */
	let subject: { token: string | null; sub: string | null } = { token: null, sub: null };

	return {
		subscribe(topic: string, listener: JobTopicListener): JobTopicSubscription {
			let entry = shared.get(topic);
			if (!entry) {
				const created = new SharedTopic(client, topic, (t) => {
					if (shared.get(topic) === t) shared.delete(topic);
					const done: Promise<void> = t.left.finally(() => {
						if (left.get(topic) === done) left.delete(topic);
					});
					left.set(topic, done);
				});
				shared.set(topic, created);
				entry = created;
				void created.open(left.get(topic) ?? Promise.resolve());
			}
			const joined = entry;
			const live = joined.live;
			joined.add(listener);
			let closed = false;
			return {
				joined: live,
				close() {
					if (closed) return;
					closed = true;
					joined.remove(listener);
				},
			};
		},
		userId(): Promise<string | null> {
			// Watches started together ask at once: they share one setAuth, and a token decoded once.
			if (asking) return asking;
			const answer = (async () => {
				await client.realtime.setAuth();
				const token = client.realtime.accessTokenValue ?? null;
				if (token !== subject.token) subject = { token, sub: subjectOf(token) };
				return subject.sub;
			})();
			asking = answer;
			const done = () => {
				if (asking === answer) asking = null;
			};
			answer.then(done, done);
			return answer;
		},
	};
}
