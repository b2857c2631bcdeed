/**
 * Every open Realtime socket, and delivery to the channels joined on them:
 * - Broadcast from Database: realtime.messages rows arrive by NOTIFY
 *   (standin.sql) while the tenant's replication is ready (tenant.ts: rows
 *   committed before it are never sent) and go to channels of that topic whose
 *   private flag equals the row's, and for private ones only where the read
 *   policy allowed broadcast (MessageDispatcher `broadcast_read?` check), as a
 *   user broadcast with metadata `{id}`. A row missing a field, over the
 *   payload limit or arriving while the message rate is over the quota is
 *   dropped with a log line (replication_connection.ex `handle_message`);
 * - client broadcasts between sockets (BroadcastHandler `send_message`);
 * - postgres_changes (postgres-changes.ts).
 * Every delivery to every channel counts toward the project's message rate
 * (MessageDispatcher sends `:update_rate_counter`); a channel that receives a
 * message while the rate is over the quota is shut down with "Too many
 * messages per second" (realtime_channel.ex). Deliveries are handled one at a
 * time so subscribers see commit order.
 */
import type { Sql } from '../db.ts';
import { authenticatorMayBecome, type RoleCheck } from '../jwt.ts';
import type { Channel } from './channel.ts';
import type { Connection } from './connection.ts';
import { emptyStats, payloadTooLarge, RateCounter, type RealtimeLimits, type RealtimeStats } from './limits.ts';
import { bindingMatches, PostgresChanges } from './postgres-changes.ts';
import { ReplicationListener } from './replication.ts';
import type { UserBroadcast } from './serializer.ts';
import { RealtimeTenant } from './tenant.ts';

interface Notified {
	id: string;
	xid: bigint;
}

interface MessageRow {
	id: string;
	topic: string;
	event: string | null;
	payload: string | null;
	private: boolean | null;
	inserted_at: string | null;
}

export class RealtimeHub {
	readonly connections = new Set<Connection>();
	readonly changes: PostgresChanges;
	readonly tenant: RealtimeTenant;
	/** Messages per second for the project (`Tenants.events_per_second_rate`). */
	readonly events: RateCounter;
	/** Joins per second for the project (`Tenants.joins_per_second_rate`). */
	readonly joins: RateCounter;
	stats = emptyStats();
	private queue: Promise<void> = Promise.resolve();
	private readonly replication: ReplicationListener;
	/** Broadcasts notified and not read yet. */
	private notified: Notified[] = [];
	/** Broadcasts notified while replication was starting: decided when it is ready. */
	private held: Notified[] = [];

	/** Which roles outside anon, authenticated and service_role a token may name (jwt.ts). */
	readonly mayBecome: RoleCheck;

	constructor(
		readonly admin: Sql,
		readonly jwtSecret: string,
		readonly log: (e: unknown) => void,
		readonly limits: RealtimeLimits,
		/** Where the replication connection logs in (the superuser URL). */
		databaseUrl: string,
	) {
		this.changes = new PostgresChanges(admin);
		this.mayBecome = authenticatorMayBecome(admin);
		const { rateTickMs, rateBuckets } = limits;
		this.events = new RateCounter(
			() => limits.maxEventsPerSecond,
			rateTickMs,
			rateBuckets,
			() => log('MessagePerSecondRateLimitReached: Too many messages per second'),
		);
		this.joins = new RateCounter(
			() => limits.maxJoinsPerSecond,
			rateTickMs,
			rateBuckets,
			() => log('ClientJoinRateLimitReached: Too many joins per second'),
		);
		this.tenant = new RealtimeTenant(admin, limits, log, () => {
			let users = 0;
			for (const c of this.connections) if (c.joinedOnce) users++;
			return users;
		});
		this.tenant.onReady = () => this.accept(this.held.splice(0));
		this.replication = new ReplicationListener(databaseUrl, {
			broadcast: (text) => this.notify(text),
			change: (id) => this.enqueue(() => this.deliverChange(id)),
			up: () => this.tenant.replicationUp(),
			down: () => {
				this.held = [];
				this.tenant.replicationDown();
			},
			log,
		});
		this.tenant.canReplicate = () => this.replication.up;
	}

	add(c: Connection): void {
		this.connections.add(c);
	}

	remove(c: Connection): void {
		this.connections.delete(c);
	}

	/** What was counted (the quota as hosted counts it, drops, closes, refusals). */
	snapshot(): RealtimeStats {
		return {
			...structuredClone(this.stats),
			messagesPerSecond: this.events.avg,
			replication: this.tenant.state,
		};
	}

	private *channels(subTopic: string): Generator<[Connection, Channel]> {
		for (const conn of this.connections)
			for (const ch of conn.channels.values()) if (ch.subTopic === subTopic) yield [conn, ch];
	}

	/** A realtime.messages row replication streamed (`<id>:<transaction id>`). */
	private notify(text: string): void {
		const [id, xid] = text.split(':');
		if (!id || !xid) return;
		const n = { id, xid: BigInt(xid) };
		if (this.tenant.state === 'idle') this.stats.dropped.beforeReplication++;
		else if (this.tenant.state === 'starting') this.held.push(n);
		else this.accept([n]);
	}

	async listen(): Promise<void> {
		await this.replication.start();
		await this.tenant.start();
	}

	async stop(): Promise<void> {
		this.tenant.stop();
		this.events.stop();
		this.joins.stop();
		await this.replication.stop();
		await this.queue;
	}

	private enqueue(work: () => Promise<void>): void {
		this.queue = this.queue.then(work).catch((e: unknown) => this.log(e));
	}

	/** Broadcasts replication streams: those committed after it became ready. */
	private accept(ns: Notified[]): void {
		for (const n of ns) {
			if (this.tenant.committedBeforeReady(n.xid)) {
				this.stats.dropped.beforeReplication++;
				continue;
			}
			// Notifications that arrive while a delivery runs are read together, in one query.
			this.notified.push(n);
			if (this.notified.length === 1) this.enqueue(() => this.deliverMessages(this.notified.splice(0)));
		}
	}

	/** Counts one delivery to `ch`; over the quota the channel is shut down (`handle_info(:update_rate_counter)`). */
	delivered(conn: Connection, ch: Channel): void {
		this.stats.messages++;
		this.stats.deliveries++;
		this.events.add();
		if (this.events.triggered && conn.channels.get(ch.topic) === ch) {
			this.stats.closedForRate++;
			conn.shutdown(ch, 'Too many messages per second');
		}
	}

	/** A message a client sent: counted once (BroadcastHandler `increment_rate_counter`). */
	received(): void {
		this.stats.messages++;
		this.events.add();
	}

	/** Why replication would not send `row` (ReplicationConnection `handle_message`), or null. */
	private refusal(row: MessageRow): string | null {
		if (row.inserted_at === null || row.event === null || row.private === null || row.payload === null) {
			this.stats.dropped.invalid++;
			return 'UnableToBroadcastChanges: a required field is missing';
		}
		if (payloadTooLarge(this.limits, Buffer.byteLength(row.payload, 'utf8'))) {
			this.stats.dropped.payloadSize++;
			return 'UnableToBroadcastChanges: :payload_size_exceeded';
		}
		if (this.events.triggered) {
			this.stats.dropped.rate++;
			return 'UnableToBroadcastChanges: :too_many_requests';
		}
		return null;
	}

	/** Delivers the broadcasts notified, in the order given (NOTIFY order is commit order). */
	private async deliverMessages(ns: Notified[]): Promise<void> {
		const rows = await this.admin.unsafe<MessageRow[]>(
			`select id::text as id, topic, event, payload::text as payload, private,
			        to_char(inserted_at, 'YYYY-MM-DD"T"HH24:MI:SS.US') as inserted_at
			 from realtime.messages
			 where id in (select pg_catalog.jsonb_array_elements_text($1::jsonb)::uuid)`,
			[JSON.stringify(ns.map((n) => n.id))],
		);
		const byId = new Map(rows.map((r) => [r.id, r]));
		for (const { id } of ns) {
			const row = byId.get(id);
			if (!row) continue;
			const refused = this.refusal(row);
			if (refused) {
				this.log(refused);
				continue;
			}
			this.stats.messages++;
			this.events.add();
			const b: UserBroadcast = {
				topic: row.topic,
				userEvent: row.event!,
				encoding: 'json',
				payload: Buffer.from(row.payload!, 'utf8'),
				metadata: { id: row.id },
			};
			for (const [conn, ch] of [...this.channels(row.topic)]) {
				if (ch.isPrivate !== row.private) continue;
				if (ch.isPrivate && ch.policies?.broadcast !== true) continue;
				conn.deliverUserBroadcast(ch, b);
				this.delivered(conn, ch);
			}
		}
	}

	/** A broadcast a client sent on `from`: to the topic's other channels (and itself with `self`). */
	fanOut(from: Channel, userBroadcast: UserBroadcast | null, payload: unknown): void {
		for (const [conn, ch] of [...this.channels(from.subTopic)]) {
			if (ch === from && !from.selfBroadcast) continue;
			if (ch.isPrivate !== from.isPrivate) continue;
			if (ch.isPrivate && ch.policies?.broadcast !== true) continue;
			if (userBroadcast) conn.deliverUserBroadcast(ch, { ...userBroadcast, metadata: null });
			else conn.deliverJson(ch, 'broadcast', payload);
			this.delivered(conn, ch);
		}
	}

	private async deliverChange(id: string): Promise<void> {
		const change = await this.changes.read(id);
		if (!change) return;
		const meta = await this.changes.tableMeta(change.schema, change.table);
		for (const conn of [...this.connections]) {
			for (const ch of [...conn.channels.values()]) {
				const ids = ch.postgresChanges.filter((b) => bindingMatches(b.params, change)).map((b) => b.id);
				if (ids.length === 0) continue;
				if (!(await this.changes.visibleTo(change, ch.claims))) continue;
				const data: Record<string, unknown> = {
					schema: change.schema,
					table: change.table,
					commit_timestamp: change.commit_timestamp,
					type: change.type,
					columns: meta.columns,
					errors: null,
				};
				if (change.type !== 'DELETE') data.record = change.record;
				if (change.type !== 'INSERT') data.old_record = change.old_record;
				conn.deliverJson(ch, 'postgres_changes', { ids, data });
				this.delivered(conn, ch);
			}
		}
	}
}
