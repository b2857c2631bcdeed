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
	subscribe(callback: (status: string, err?: Error) => void): unknown;
}

/**
 * The part of a supabase-js `SupabaseClient` the Realtime capability uses:
 * `realtime.setAuth()` (the documented step before joining a private
 * channel), `channel()` and `removeChannel()`.
 */
export interface SupabaseRealtimeClient {
	realtime: { setAuth(token?: string | null): Promise<void>; accessTokenValue?: string | null };
	channel(name: string, options: { config: { private: boolean } }): SupabaseChannelLike;
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

/** One joined topic and everyone listening to it. */
class SharedTopic {
	readonly listeners = new Set<JobTopicListener>();
	#status: JobTopicStatus | null = null;
	#everLive = false;
	#channel: SupabaseChannelLike | null = null;
	#disposed = false;
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
		try {
			// The documented order for private channels: the current JWT first.
			await this.client.realtime.setAuth();
		} catch (e) {
			this.#report('refused', e);
			this.dispose();
			return;
		}
		if (this.#disposed) return;
		const channel = this.client.channel(this.topic, { config: { private: true } });
		this.#channel = channel;
		channel.on('broadcast', { event: EVENT }, (message) => {
			if (this.#disposed) return;
			const row = message.payload;
			if (typeof row !== 'object' || row === null) return;
			for (const l of [...this.listeners]) l.message(row as RawRow);
		});
		// A statement that changed several of one owner's jobs sends them in one message.
		channel.on('broadcast', { event: BATCH_EVENT }, (message) => {
			if (this.#disposed) return;
			const rows = (message.payload as { jobs?: unknown } | null)?.jobs;
			if (!Array.isArray(rows)) return;
			for (const row of rows) {
				if (typeof row !== 'object' || row === null) continue;
				for (const l of [...this.listeners]) l.message(row as RawRow);
			}
		});
		channel.on('broadcast', { event: STREAM_EVENT }, (message) => {
			if (this.#disposed) return;
			const chunk = message.payload;
			if (typeof chunk !== 'object' || chunk === null) return;
			for (const l of [...this.listeners]) l.stream?.(chunk as RawRow);
		});
		try {
			channel.subscribe((status, err) => {
				if (this.#disposed) return;
				if (status === 'SUBSCRIBED') {
					this.#everLive = true;
					this.#report('live');
				} else if (!this.#everLive || status === 'CLOSED') {
					// Refused, timed out before ever joining, or closed by the server
					// (e.g. a refreshed token that no longer authorizes the topic).
					this.#report('refused', err ?? status);
					this.dispose();
				} else {
					// CHANNEL_ERROR / TIMED_OUT after a join: realtime-js rejoins by itself.
					this.#report('down', err ?? status);
				}
			});
		} catch (e) {
			// The socket could not even be made (no WebSocket: Node 20 with serverRealtime):
			// refused, so the store polls instead.
			this.#report('refused', e);
			this.dispose();
		}
	}

	#report(status: JobTopicStatus, reason?: unknown): void {
		this.#status = status;
		for (const l of [...this.listeners]) l.status(status, reason);
	}

	dispose(): void {
		if (this.#disposed) return;
		this.#disposed = true;
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
