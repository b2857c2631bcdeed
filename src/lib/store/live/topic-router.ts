/**
 * One listener per Realtime topic for every watch on it: a user's thousand
 * watches share `jobs:<uid>`, and a message goes straight to the watches of
 * the job it names (a Map by job id) instead of past each of them. The
 * router subscribes with the first follower and leaves with the last.
 */
import type {
	JobRealtimeCapability,
	JobTopicListener,
	JobTopicStatus,
	JobTopicSubscription,
	RawRow,
} from '../adapter.ts';

/**
 * A watch on a topic: told of its job's messages and of every status of the topic.
 *
 * @internal
 */
export interface TopicFollower {
	/** The job whose messages it gets. */
	readonly id: string;
	/** Called synchronously by the transport with the topic it came on: queue, do not await. */
	onMessage(row: RawRow, topic: string): void;
	onStatus(status: JobTopicStatus, reason?: unknown): void;
}

/** The routers of one Realtime capability (one adapter), by topic. */
const routersOf = new WeakMap<JobRealtimeCapability, Map<string, TopicRouter>>();

/**
 * One topic's listener and the followers it routes to.
 *
 * @internal
 */
export class TopicRouter implements JobTopicListener {
	/** Followers by job id: usually one, an array when several watch one job. */
	readonly #byId = new Map<string, TopicFollower | TopicFollower[]>();
	#size = 0;
	#status: JobTopicStatus | null = null;
	#subscription: JobTopicSubscription | null = null;
	/** Left (last follower gone, or refused): a new follower needs a new router. */
	#closed = false;

	constructor(
		readonly routers: Map<string, TopicRouter>,
		readonly topic: string,
		realtime: JobRealtimeCapability,
	) {
		const subscription = realtime.subscribe(topic, this);
		if (this.#closed) subscription.close();
		else this.#subscription = subscription;
	}

	get closed(): boolean {
		return this.#closed;
	}

	/** Adds a follower; true when the topic is already joined (a read made now misses nothing). */
	add(follower: TopicFollower): boolean {
		const had = this.#byId.get(follower.id);
		if (had === undefined) this.#byId.set(follower.id, follower);
		else if (Array.isArray(had)) had.push(follower);
		else this.#byId.set(follower.id, [had, follower]);
		this.#size++;
		// Refused as it was made (a transport that answers at once): nothing will come.
		if (this.#closed) {
			follower.onStatus('refused');
			return false;
		}
		if (this.#status === 'live') {
			// A late follower of a live topic is live at once (it needs no read to catch up).
			follower.onStatus('live');
			return true;
		}
		return this.#status === null && this.#subscription?.joined === true;
	}

	remove(follower: TopicFollower): void {
		const had = this.#byId.get(follower.id);
		if (had === undefined) return;
		if (had === follower) this.#byId.delete(follower.id);
		else if (Array.isArray(had) && had.includes(follower)) {
			const rest = had.filter((f) => f !== follower);
			this.#byId.set(follower.id, rest.length === 1 ? rest[0]! : rest);
		} else return;
		if (--this.#size === 0) this.#close();
	}

	message(row: RawRow): void {
		const to = typeof row.id === 'string' ? this.#byId.get(row.id) : undefined;
		if (to === undefined) return;
		if (Array.isArray(to)) for (const f of [...to]) f.onMessage(row, this.topic);
		else to.onMessage(row, this.topic);
	}

	status(status: JobTopicStatus, reason?: unknown): void {
		this.#status = status;
		const everyone: TopicFollower[] = [];
		for (const to of this.#byId.values()) {
			if (Array.isArray(to)) everyone.push(...to);
			else everyone.push(to);
		}
		for (const f of everyone) f.onStatus(status, reason);
		// Nothing more comes on a refused topic: the next follower joins afresh.
		if (status === 'refused') this.#close();
	}

	#close(): void {
		if (this.#closed) return;
		this.#closed = true;
		if (this.routers.get(this.topic) === this) this.routers.delete(this.topic);
		this.#subscription?.close();
		this.#subscription = null;
	}
}

/**
 * The router of `topic` on this Realtime capability, subscribed on first use.
 * `add` a follower (it returns whether the topic was already joined: a read
 * made now misses nothing; the follower still gets `live`), `remove` it when
 * done: the last one out leaves the topic.
 *
 * @internal
 * @example
 * ```ts
 * const router = topicRouter(realtime, `jobs:${uid}`);
 * const joined = router.add(watch);
 * // later
 * router.remove(watch);
 * ```
 */
export function topicRouter(realtime: JobRealtimeCapability, topic: string): TopicRouter {
	let routers = routersOf.get(realtime);
	if (!routers) routersOf.set(realtime, (routers = new Map()));
	let router = routers.get(topic);
	if (!router) {
		router = new TopicRouter(routers, topic, realtime);
		if (!router.closed) routers.set(topic, router);
	}
	return router;
}
