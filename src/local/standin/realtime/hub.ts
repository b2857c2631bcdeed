/**
 * Every open Realtime socket, and delivery to the channels joined on them:
 * - Broadcast from Database: realtime.messages rows (extension 'broadcast')
 *   arrive by NOTIFY (standin.sql) and go to channels of that topic whose
 *   private flag equals the row's, and for private ones only where the read
 *   policy allowed broadcast (MessageDispatcher `broadcast_read?` check), as a
 *   user broadcast with metadata `{id}` (replication_connection.ex).
 * - client broadcasts between sockets (BroadcastHandler `send_message`);
 * - postgres_changes (postgres-changes.ts).
 * Deliveries are handled one at a time so subscribers see commit order.
 */
import type { Sql } from '../db.ts';
import { authenticatorMayBecome, type RoleCheck } from '../jwt.ts';
import type { Channel } from './channel.ts';
import type { Connection } from './connection.ts';
import { bindingMatches, PostgresChanges } from './postgres-changes.ts';
import type { UserBroadcast } from './serializer.ts';

export const BROADCAST_CHANNEL = 'supabase_jobs_standin_broadcast';
export const CHANGES_CHANNEL = 'supabase_jobs_standin_changes';
/** How often the stand-in looks for broadcasts whose NOTIFY was lost. */
const SWEEP_MS = 500;
/** How far back before the newest delivered broadcast a sweep looks (transactions commit out of start order). */
const SWEEP_MARGIN_MS = 5000;

export class RealtimeHub {
	readonly connections = new Set<Connection>();
	readonly changes: PostgresChanges;
	private queue: Promise<void> = Promise.resolve();
	private unlisten: (() => Promise<void>)[] = [];
	private sweeper: ReturnType<typeof setInterval> | undefined;
	/** Broadcast ids notified and not read yet. */
	private notified: string[] = [];
	/** Broadcasts already delivered (the newest 20,000), so a sweep never sends one twice. */
	private readonly delivered = new Set<string>();
	/** inserted_at of the newest broadcast delivered (ISO, no zone, as the column). */
	private newest: string | null = null;

	/** Which roles outside anon, authenticated and service_role a token may name (jwt.ts). */
	readonly mayBecome: RoleCheck;

	constructor(
		readonly admin: Sql,
		readonly jwtSecret: string,
		readonly log: (e: unknown) => void,
	) {
		this.changes = new PostgresChanges(admin);
		this.mayBecome = authenticatorMayBecome(admin);
	}

	add(c: Connection): void {
		this.connections.add(c);
	}

	remove(c: Connection): void {
		this.connections.delete(c);
	}

	private *channels(subTopic: string): Generator<[Connection, Channel]> {
		for (const conn of this.connections)
			for (const ch of conn.channels.values()) if (ch.subTopic === subTopic) yield [conn, ch];
	}

	async listen(): Promise<void> {
		const b = await this.admin.listen(BROADCAST_CHANNEL, (id) => {
			// Notifications that arrive while a delivery runs are read together, in one query.
			this.notified.push(id);
			if (this.notified.length === 1) this.enqueue(() => this.deliverMessages(this.notified.splice(0)));
		});
		const c = await this.admin.listen(CHANGES_CHANNEL, (id) => this.enqueue(() => this.deliverChange(id)));
		this.unlisten = [b.unlisten, c.unlisten];
		this.sweeper = setInterval(() => this.enqueue(() => this.sweep()), SWEEP_MS);
	}

	async stop(): Promise<void> {
		clearInterval(this.sweeper);
		await Promise.all(this.unlisten.map((u) => u().catch(() => {})));
		await this.queue;
	}

	private enqueue(work: () => Promise<void>): void {
		this.queue = this.queue.then(work).catch((e: unknown) => this.log(e));
	}

	/**
	 * Delivers the broadcasts whose NOTIFY never came. Supabase Realtime reads
	 * realtime.messages from the WAL and resumes after a database restart;
	 * a NOTIFY sent while the LISTEN connection was down is gone for good (and
	 * postgres.js gives up re-listening when its first try finds the server
	 * still down), so the stand-in reads what arrived since the newest message
	 * it delivered (with a margin: inserted_at is the transaction's start).
	 */
	private async sweep(): Promise<void> {
		const since = this.newest ?? new Date(Date.now() - SWEEP_MARGIN_MS).toISOString();
		const rows = await this.admin.unsafe<{ id: string }[]>(
			`select id::text as id from realtime.messages
			 where extension = 'broadcast' and inserted_at >= $1::timestamp - make_interval(secs => $2)
			 order by inserted_at, id limit 1000`,
			[since, SWEEP_MARGIN_MS / 1000],
		);
		await this.deliverMessages(rows.map((r) => r.id));
	}

	private markDelivered(id: string, insertedAt: string): void {
		this.delivered.add(id);
		if (this.delivered.size > 20_000) {
			const oldest = this.delivered.values().next().value;
			if (oldest !== undefined) this.delivered.delete(oldest);
		}
		if (this.newest === null || insertedAt > this.newest) this.newest = insertedAt;
	}

	/** Delivers the broadcasts `ids` not delivered yet, in the order given (NOTIFY order is commit order). */
	private async deliverMessages(ids: string[]): Promise<void> {
		const wanted = ids.filter((id) => !this.delivered.has(id));
		if (wanted.length === 0) return;
		const rows = await this.admin.unsafe<
			{
				id: string;
				topic: string;
				event: string | null;
				payload: string | null;
				private: boolean | null;
				inserted_at: string;
			}[]
		>(
			`select id::text as id, topic, event, payload::text as payload, private,
			        to_char(inserted_at, 'YYYY-MM-DD"T"HH24:MI:SS.US') as inserted_at
			 from realtime.messages
			 where id in (select pg_catalog.jsonb_array_elements_text($1::jsonb)::uuid) and extension = 'broadcast'`,
			[JSON.stringify(wanted)],
		);
		const byId = new Map(rows.map((r) => [r.id, r]));
		for (const id of wanted) {
			const row = byId.get(id);
			if (!row || this.delivered.has(id)) continue;
			this.markDelivered(row.id, row.inserted_at);
			if (row.event === null || row.payload === null) continue;
			const isPrivate = row.private === true;
			const b: UserBroadcast = {
				topic: row.topic,
				userEvent: row.event,
				encoding: 'json',
				payload: Buffer.from(row.payload, 'utf8'),
				metadata: { id: row.id },
			};
			for (const [conn, ch] of this.channels(row.topic)) {
				if (ch.isPrivate !== isPrivate) continue;
				if (isPrivate && ch.policies?.broadcast !== true) continue;
				conn.deliverUserBroadcast(ch, b);
			}
		}
	}

	/** A broadcast a client sent on `from`: to the topic's other channels (and itself with `self`). */
	fanOut(from: Channel, userBroadcast: UserBroadcast | null, payload: unknown): void {
		for (const [conn, ch] of this.channels(from.subTopic)) {
			if (ch === from && !from.selfBroadcast) continue;
			if (ch.isPrivate !== from.isPrivate) continue;
			if (ch.isPrivate && ch.policies?.broadcast !== true) continue;
			if (userBroadcast) conn.deliverUserBroadcast(ch, { ...userBroadcast, metadata: null });
			else conn.deliverJson(ch, 'broadcast', payload);
		}
	}

	private async deliverChange(id: string): Promise<void> {
		const change = await this.changes.read(id);
		if (!change) return;
		const meta = await this.changes.tableMeta(change.schema, change.table);
		for (const conn of this.connections) {
			for (const ch of conn.channels.values()) {
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
			}
		}
	}
}
