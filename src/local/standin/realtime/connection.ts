/**
 * One Realtime websocket: the Phoenix socket protocol (heartbeat on topic
 * `phoenix`, phx_join / phx_leave / phx_close, "unmatched topic" replies,
 * duplicate joins close the older channel) and Realtime's channel events
 * (broadcast, presence, access_token), after supabase/realtime
 * lib/realtime_web/channels/realtime_channel.ex. Frames of one socket are
 * handled in order, as Phoenix's socket process does.
 */
import type { WebSocket } from 'ws';
import { verifyForRealtime } from '../jwt.ts';
import { canWriteBroadcast, readPolicies } from './authorize.ts';
import {
	bindingId,
	confirmInterval,
	isMissingPartition,
	JOIN_REFUSALS,
	tokenJoinReason,
	unauthorizedMessage,
	type Channel,
	type PostgresBinding,
} from './channel.ts';
import {
	decodeFrame,
	encodeMessage,
	encodeUserBroadcast,
	type InboundMessage,
	type UserBroadcast,
	type Vsn,
} from './serializer.ts';
import type { RealtimeHub } from './hub.ts';

export class Connection {
	readonly channels = new Map<string, Channel>();
	/** Counted among the tenant's users once a channel joined (UsersCounter.add), until the socket closes. */
	joinedOnce = false;
	private queue: Promise<void> = Promise.resolve();

	constructor(
		readonly ws: WebSocket,
		readonly vsn: Vsn,
		private readonly apiKey: string,
		private readonly headers: Record<string, string>,
		private readonly hub: RealtimeHub,
	) {
		ws.on('message', (data, isBinary) => {
			const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
			this.queue = this.queue.then(() => this.onFrame(buf, isBinary)).catch((e: unknown) => hub.log(e));
		});
		ws.on('close', () => this.dispose());
	}

	send(frame: string | Buffer): void {
		if (this.ws.readyState === this.ws.OPEN) this.ws.send(frame);
	}

	private push(topic: string, joinRef: string | null, ref: string | null, event: string, payload: unknown): void {
		this.send(encodeMessage({ joinRef, ref, topic, event, payload }, this.vsn));
	}

	private reply(m: InboundMessage, status: 'ok' | 'error', response: unknown): void {
		this.push(m.topic, m.joinRef, m.ref, 'phx_reply', { status, response });
	}

	dispose(): void {
		for (const c of this.channels.values()) {
			if (c.confirmTimer) clearTimeout(c.confirmTimer);
			if (c.readyTimer) clearTimeout(c.readyTimer);
		}
		this.channels.clear();
		this.hub.remove(this);
	}

	private async onFrame(data: Buffer, isBinary: boolean): Promise<void> {
		const m = decodeFrame(data, isBinary, this.vsn);
		if (m.topic === 'phoenix' && m.event === 'heartbeat') return this.reply(m, 'ok', {});
		if (m.event === 'phx_join') return await this.join(m);
		const channel = this.channels.get(m.topic);
		// Phoenix answers anything for a topic this socket has not joined with "unmatched topic".
		if (!channel || (m.joinRef !== null && channel.joinRef !== m.joinRef))
			return this.reply(m, 'error', { reason: 'unmatched topic' });
		switch (m.event) {
			case 'phx_leave':
				this.reply(m, 'ok', {});
				return this.close(channel);
			case 'access_token':
				return await this.refreshToken(channel, m.payload);
			case 'broadcast':
				return await this.clientBroadcast(channel, m);
			case 'presence':
				// Presence tracking is not part of the stand-in; accept as Realtime does.
				return this.reply(m, 'ok', {});
			default:
				return;
		}
	}

	/** phx_close for a channel (Phoenix `on_exit_message`, ref = join_ref). */
	close(channel: Channel): void {
		if (channel.confirmTimer) clearTimeout(channel.confirmTimer);
		if (channel.readyTimer) clearTimeout(channel.readyTimer);
		this.channels.delete(channel.topic);
		this.push(channel.topic, channel.joinRef, channel.joinRef, 'phx_close', {});
	}

	/** `shutdown_response/2`: a system error message, then the channel stops (phx_close). */
	shutdown(channel: Channel, message: string): void {
		this.push(channel.topic, channel.joinRef, null, 'system', {
			extension: 'system',
			status: 'error',
			message,
			channel: channel.subTopic,
		});
		this.close(channel);
	}

	/**
	 * The project's quotas, in upstream's order (`limit_joins`, `limit_channels`):
	 * the refusal reason, or null. Too many joins also drops the socket.
	 */
	private overQuota(): string | null {
		const { hub } = this;
		if (hub.joins.triggered) {
			hub.stats.refused.joins++;
			setImmediate(() => this.ws.close());
			return JOIN_REFUSALS.tooManyJoins;
		}
		hub.joins.add();
		if (this.channels.size >= hub.limits.maxChannelsPerClient) {
			hub.stats.refused.channels++;
			return JOIN_REFUSALS.tooManyChannels;
		}
		return null;
	}

	/** Reads a private channel's policies; the refusal reason when the user may read nothing. */
	private async authorize(channel: Channel): Promise<string | null> {
		try {
			channel.policies = await readPolicies(
				this.hub.admin,
				{ topic: channel.subTopic, claims: channel.claims, headers: this.headers },
				channel.presenceEnabled,
			);
		} catch (e) {
			this.hub.log(e);
			if (isMissingPartition(e)) {
				this.hub.stats.refused.missingPartition++;
				return JOIN_REFUSALS.missingPartition;
			}
			channel.policies = { broadcast: false, presence: channel.presenceEnabled ? false : null };
		}
		if (!channel.policies.broadcast && !channel.policies.presence)
			return `Unauthorized: ${unauthorizedMessage(channel.subTopic)}`;
		return null;
	}

	private async join(m: InboundMessage): Promise<void> {
		const existing = this.channels.get(m.topic);
		if (existing) this.close(existing);
		if (!m.topic.startsWith('realtime:')) return this.reply(m, 'error', { reason: 'unmatched topic' });
		const subTopic = m.topic.slice('realtime:'.length);
		if (subTopic === '') return this.reply(m, 'error', { reason: 'TopicNameRequired: You must provide a topic name' });
		const payload = (m.payload && typeof m.payload === 'object' ? m.payload : {}) as Record<string, unknown>;
		const config = (payload.config && typeof payload.config === 'object' ? payload.config : {}) as Record<
			string,
			unknown
		>;
		const broadcast = (config.broadcast ?? {}) as Record<string, unknown>;
		const presence = (config.presence ?? {}) as Record<string, unknown>;
		const quota = this.overQuota();
		if (quota) return this.reply(m, 'error', { reason: quota });
		const given = payload.access_token ?? payload.user_token;
		const accessToken = typeof given === 'string' && !given.startsWith('sb_') ? given : this.apiKey;
		const verified = await verifyForRealtime(this.hub.jwtSecret, accessToken, this.hub.mayBecome);
		if (!verified.ok) return this.reply(m, 'error', { reason: tokenJoinReason(verified.error) });
		const channel: Channel = {
			topic: m.topic,
			subTopic,
			joinRef: m.joinRef ?? m.ref,
			isPrivate: config.private === true,
			accessToken,
			claims: verified.claims,
			policies: null,
			canWrite: null,
			selfBroadcast: broadcast.self === true,
			ackBroadcast: broadcast.ack === true,
			presenceEnabled: presence.enabled === true,
			postgresChanges: [],
			confirmTimer: null,
			readyTimer: null,
		};
		// `Connect.lookup_or_start_connection`: an idle tenant connects now, its replication later.
		await this.hub.tenant.ensureConnected();
		const refused = channel.isPrivate ? await this.authorize(channel) : null;
		if (refused) return this.reply(m, 'error', { reason: refused });
		const bindings = Array.isArray(config.postgres_changes) ? (config.postgres_changes as unknown[]) : [];
		channel.postgresChanges = bindings
			.filter((b): b is Record<string, unknown> => b !== null && typeof b === 'object')
			.map((params): PostgresBinding => ({ params, id: bindingId(params) }));
		this.channels.set(m.topic, channel);
		this.joinedOnce = true;
		this.scheduleConfirm(channel);
		this.reply(m, 'ok', { postgres_changes: channel.postgresChanges.map((b) => ({ ...b.params, id: b.id })) });
		if (broadcast.replication_ready === true || broadcast.replication_ready === 'true')
			this.notifyReplicationReady(channel, Date.now() + this.hub.limits.replicationReadyTimeoutMs);
		if (channel.postgresChanges.length > 0) await this.subscribeChanges(channel);
	}

	private async subscribeChanges(channel: Channel): Promise<void> {
		try {
			await this.hub.changes.subscribe(channel.postgresChanges);
			this.push(channel.topic, channel.joinRef, null, 'system', {
				extension: 'postgres_changes',
				status: 'ok',
				message: 'Subscribed to PostgreSQL',
				channel: channel.subTopic,
			});
		} catch (e) {
			this.push(channel.topic, channel.joinRef, null, 'system', {
				extension: 'postgres_changes',
				status: 'error',
				message: e instanceof Error ? e.message : String(e),
				channel: channel.subTopic,
			});
		}
	}

	/**
	 * `handle_info(:notify_replication_ready, ...)`: once the tenant's replication
	 * is ready, a system message; checked every 500 ms; past the deadline the
	 * channel is shut down.
	 */
	private notifyReplicationReady(channel: Channel, deadline: number): void {
		channel.readyTimer = null;
		if (this.channels.get(channel.topic) !== channel) return;
		if (this.hub.tenant.state === 'ready') {
			this.push(channel.topic, channel.joinRef, null, 'system', {
				extension: 'system',
				status: 'ok',
				message: 'Replication connection established',
				channel: channel.subTopic,
			});
		} else if (Date.now() >= deadline) {
			this.shutdown(channel, 'Replication connection was not established in time');
		} else {
			channel.readyTimer = setTimeout(() => this.notifyReplicationReady(channel, deadline), 500);
			channel.readyTimer.unref();
		}
	}

	/** Re-checks the token when it expires, or every 5 minutes (`handle_info(:confirm_token, ...)`). */
	private scheduleConfirm(channel: Channel): void {
		if (channel.confirmTimer) clearTimeout(channel.confirmTimer);
		channel.confirmTimer = setTimeout(
			() => {
				this.queue = this.queue
					.then(async () => {
						if (this.channels.get(channel.topic) !== channel) return;
						const verified = await verifyForRealtime(this.hub.jwtSecret, channel.accessToken, this.hub.mayBecome);
						if (!verified.ok) return this.shutdown(channel, verified.error.message);
						this.scheduleConfirm(channel);
					})
					.catch((e: unknown) => this.hub.log(e));
			},
			confirmInterval(channel.claims) + 50,
		);
		channel.confirmTimer.unref();
	}

	/** `handle_in("access_token", ...)`: re-verify and re-authorize; failure shuts the channel down. */
	private async refreshToken(channel: Channel, payload: unknown): Promise<void> {
		const token = (payload as { access_token?: unknown } | null)?.access_token;
		if (typeof token !== 'string' || token.startsWith('sb_') || token === channel.accessToken) return;
		const verified = await verifyForRealtime(this.hub.jwtSecret, token, this.hub.mayBecome);
		if (!verified.ok) return this.shutdown(channel, verified.error.message);
		const previous = channel.policies;
		channel.accessToken = token;
		channel.claims = verified.claims;
		channel.canWrite = null;
		if (channel.isPrivate) {
			try {
				channel.policies = await readPolicies(
					this.hub.admin,
					{ topic: channel.subTopic, claims: verified.claims, headers: this.headers },
					channel.presenceEnabled,
				);
			} catch (e) {
				this.hub.log(e);
				if (isMissingPartition(e))
					return this.shutdown(channel, 'Realtime was unable to connect to the project database');
				channel.policies = { broadcast: false, presence: channel.presenceEnabled ? false : null };
			}
			if (!channel.policies.broadcast && !channel.policies.presence)
				return this.shutdown(channel, unauthorizedMessage(channel.subTopic));
			if (previous?.broadcast && !channel.policies.broadcast) {
				return this.shutdown(
					channel,
					`You no longer have permission to read from this Channel topic: ${channel.subTopic}`,
				);
			}
		}
		this.scheduleConfirm(channel);
	}

	/** BroadcastHandler.handle: private channels need the write policy; `self` and `ack` as configured. */
	private async clientBroadcast(channel: Channel, m: InboundMessage): Promise<void> {
		if (channel.isPrivate) {
			if (channel.canWrite === null) {
				try {
					channel.canWrite = await canWriteBroadcast(this.hub.admin, {
						topic: channel.subTopic,
						claims: channel.claims,
						headers: this.headers,
					});
				} catch (e) {
					this.hub.log(e);
					return;
				}
			}
			if (!channel.canWrite) return;
		}
		this.hub.received();
		this.hub.fanOut(channel, m.userBroadcast ?? null, m.payload);
		if (channel.ackBroadcast) this.reply(m, 'ok', {});
	}

	/** Delivers a user broadcast (binary kind 4 for vsn 2.0.0) on `channel`. */
	deliverUserBroadcast(channel: Channel, b: UserBroadcast): void {
		const frame = encodeUserBroadcast({ ...b, topic: channel.topic }, this.vsn);
		if (frame !== null) this.send(frame);
	}

	/** Delivers a JSON message (broadcast or postgres_changes) on `channel`. */
	deliverJson(channel: Channel, event: string, payload: unknown): void {
		this.push(channel.topic, null, null, event, payload);
	}
}
