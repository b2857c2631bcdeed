/**
 * Hosted Realtime's limits and timings, at the hosted (Free plan) values by
 * default, each overridable through `createStandin({ realtime: {...} })`.
 * Sources (supabase/realtime unless named):
 * - quotas: config/runtime.exs TENANT_MAX_EVENTS_PER_SECOND (100),
 *   TENANT_MAX_CHANNELS_PER_CLIENT (100), TENANT_MAX_JOINS_PER_SECOND (100);
 *   the 256 KB payload is the Free plan's (supabase.com/docs/guides/realtime/limits;
 *   lib/realtime/api/tenant.ex defaults `max_payload_size_in_kb` to 3000 for self-hosting);
 * - the rate counters: lib/realtime/tenants.ex `events_per_second_rate` /
 *   `joins_per_second_rate` (tick 5 s, 12 buckets, limit on the average) and
 *   lib/realtime/rate_counter/rate_counter.ex (triggered when avg >= limit,
 *   released when avg < limit);
 * - the tenant: lib/realtime/tenants/connect.ex (users checked every 60 s, stopped
 *   after 11 samples of none), lib/realtime/tenants/janitor.ex + config/runtime.exs
 *   JANITOR_SCHEDULE_TIMER_IN_MS (4 h), lib/realtime/messages.ex (72 h),
 *   config/config.exs `replication_ready_timeout` (1 min).
 */

export interface RealtimeLimits {
	/** Messages per second per project (every delivery to every subscriber counts). */
	maxEventsPerSecond: number;
	/** Largest Broadcast payload, in KB (1000 bytes, plus upstream's 500 bytes of padding). */
	maxPayloadSizeKb: number;
	/** Channels one websocket may have joined at once. */
	maxChannelsPerClient: number;
	/** Channel joins per second per project. */
	maxJoinsPerSecond: number;
	/** The rate counters' tick; the average is over the last `rateBuckets` ticks. */
	rateTickMs: number;
	rateBuckets: number;
	/** How long after the tenant connects its replication of realtime.messages is ready. */
	replicationStartDelayMs: number;
	/** A channel asking `replication_ready` is shut down when replication is not ready by then. */
	replicationReadyTimeoutMs: number;
	/** How often the tenant counts its connected users. */
	idleCheckMs: number;
	/** The tenant stops after this many checks in a row found no user. */
	idleChecks: number;
	/** How often the janitor drops old partitions and makes the coming days'. */
	janitorIntervalMs: number;
	/** Partitions whose day ended more than this long ago are dropped. */
	retentionHours: number;
	/** Start with the tenant stopped (as after idling): the first join connects it. */
	startIdle: boolean;
}

/**
 * Replication start: upstream starts it asynchronously after the tenant
 * connects (connect.ex `async_start_replication_connection`): a connection,
 * the slot and publication checks, then CREATE_REPLICATION_SLOT ... TEMPORARY,
 * which waits for the transactions running at that moment to end. No figure
 * is configured upstream; its only bound is `replication_ready_timeout` (1 min).
 * The default here, 1.5 s, is the order a few round trips and a slot creation
 * on a quiet database take.
 */
export const DEFAULT_LIMITS: RealtimeLimits = {
	maxEventsPerSecond: 100,
	maxPayloadSizeKb: 256,
	maxChannelsPerClient: 100,
	maxJoinsPerSecond: 100,
	rateTickMs: 5_000,
	rateBuckets: 12,
	replicationStartDelayMs: 1_500,
	replicationReadyTimeoutMs: 60_000,
	idleCheckMs: 60_000,
	idleChecks: 11,
	janitorIntervalMs: 4 * 60 * 60 * 1000,
	retentionHours: 72,
	startIdle: false,
};

/** `limits` with every field checked: a clear error naming the field, nothing started. */
export function resolveLimits(given: Partial<RealtimeLimits> = {}): RealtimeLimits {
	const limits = { ...DEFAULT_LIMITS, ...given };
	for (const [key, value] of Object.entries(limits) as [keyof RealtimeLimits, unknown][]) {
		if (key === 'startIdle') {
			if (typeof value !== 'boolean') throw new TypeError(`realtime.${key} must be a boolean`);
		} else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
			throw new TypeError(`realtime.${key} must be a finite number >= 0`);
		}
	}
	if (limits.rateTickMs === 0 || limits.rateBuckets < 1)
		throw new TypeError('realtime.rateTickMs must be > 0 and realtime.rateBuckets >= 1');
	return limits;
}

/** Whether a payload of `bytes` bytes is over the limit (`Tenants.validate_payload_size`). */
export function payloadTooLarge(limits: RealtimeLimits, bytes: number): boolean {
	// :erlang.external_size of a binary is its size plus 6 bytes of header.
	return bytes + 6 > limits.maxPayloadSizeKb * 1000 + 500;
}

/**
 * Realtime.RateCounter: counts between ticks, keeps the last `buckets` counts
 * and triggers when their per-second average reaches the limit.
 */
export class RateCounter {
	private count = 0;
	private bucket: number[] = [];
	avg = 0;
	triggered = false;
	private readonly timer: ReturnType<typeof setInterval>;

	constructor(
		private readonly limit: () => number,
		private readonly tickMs: number,
		private readonly buckets: number,
		private readonly onTrigger: () => void,
	) {
		this.timer = setInterval(() => this.tick(), tickMs);
		this.timer.unref();
	}

	add(n = 1): void {
		this.count += n;
	}

	tick(): void {
		this.bucket = [this.count, ...this.bucket].slice(0, this.buckets);
		this.count = 0;
		const sum = this.bucket.reduce((a, b) => a + b, 0);
		this.avg = sum / this.bucket.length / (this.tickMs / 1000);
		if (this.triggered) {
			if (this.avg < this.limit()) this.triggered = false;
		} else if (this.avg >= this.limit()) {
			this.triggered = true;
			this.onTrigger();
		}
	}

	stop(): void {
		clearInterval(this.timer);
	}
}

/** What the stand-in's Realtime counted since start (or the last reset): `standin.realtime.stats()`. */
export interface RealtimeStats {
	/** Messages as hosted Realtime counts them (the quota): each database broadcast once as it is read, each client message once, and each delivery to each subscriber. */
	messages: number;
	/** Frames delivered to subscribers (broadcast and postgres_changes), one per channel. */
	deliveries: number;
	/** The message rate counter's average, messages per second (upstream's measurement). */
	messagesPerSecond: number;
	/** Database broadcasts never sent: over the rate, over the payload limit, committed before replication was ready, or missing a field. */
	dropped: { rate: number; payloadSize: number; beforeReplication: number; invalid: number };
	/** Channels shut down with "Too many messages per second". */
	closedForRate: number;
	/** Joins refused: too many channels on the socket, too many joins per second, no partition for now. */
	refused: { channels: number; joins: number; missingPartition: number };
	/** The tenant's replication of realtime.messages. */
	replication: 'idle' | 'starting' | 'ready';
}

export function emptyStats(): Omit<RealtimeStats, 'messagesPerSecond' | 'replication'> {
	return {
		messages: 0,
		deliveries: 0,
		dropped: { rate: 0, payloadSize: 0, beforeReplication: 0, invalid: 0 },
		closedForRate: 0,
		refused: { channels: 0, joins: 0, missingPartition: 0 },
	};
}
