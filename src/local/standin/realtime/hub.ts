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
import type { Channel } from './channel.ts';
import type { Connection } from './connection.ts';
import { bindingMatches, PostgresChanges } from './postgres-changes.ts';
import type { UserBroadcast } from './serializer.ts';

export const BROADCAST_CHANNEL = 'supabase_jobs_standin_broadcast';
export const CHANGES_CHANNEL = 'supabase_jobs_standin_changes';

export class RealtimeHub {
	readonly connections = new Set<Connection>();
	readonly changes: PostgresChanges;
	private queue: Promise<void> = Promise.resolve();
	private unlisten: (() => Promise<void>)[] = [];

	constructor(
		readonly admin: Sql,
		readonly jwtSecret: string,
		readonly log: (e: unknown) => void,
	) {
		this.changes = new PostgresChanges(admin);
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
		const enqueue = (work: () => Promise<void>) => {
			this.queue = this.queue.then(work).catch((e: unknown) => this.log(e));
		};
		const b = await this.admin.listen(BROADCAST_CHANNEL, (id) => enqueue(() => this.deliverMessage(id)));
		const c = await this.admin.listen(CHANGES_CHANNEL, (id) => enqueue(() => this.deliverChange(id)));
		this.unlisten = [b.unlisten, c.unlisten];
	}

	async stop(): Promise<void> {
		await Promise.all(this.unlisten.map((u) => u().catch(() => {})));
		await this.queue;
	}

	private async deliverMessage(id: string): Promise<void> {
		const [row] = await this.admin.unsafe<
			{ id: string; topic: string; event: string | null; payload: string | null; private: boolean | null }[]
		>(
			`select id::text as id, topic, event, payload::text as payload, private from realtime.messages where id = $1 and extension = 'broadcast' limit 1`,
			[id],
		);
		if (!row || row.event === null || row.payload === null) return;
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
