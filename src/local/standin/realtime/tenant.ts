/**
 * The project as hosted Realtime sees it (a "tenant"), after supabase/realtime
 * lib/realtime/tenants/connect.ex:
 * - connecting it creates the realtime.messages partitions of yesterday to
 *   today + 3 (tenants.ex `create_messages_partitions`), then starts the
 *   replication of realtime.messages asynchronously (`async_start_replication_connection`);
 *   a join does not wait for it;
 * - replication streams from a TEMPORARY slot (replication_connection.ex): a row
 *   committed before the slot exists is never sent. Here the slot's start is a
 *   snapshot taken when replication becomes ready: a row whose transaction it
 *   sees as committed is dropped;
 * - with no connected user for `idleChecks` checks in a row (11 x 60 s) the tenant
 *   stops, and its replication with it; the next join connects it again;
 * - the janitor (janitor.ex, maintenance_task.ex) drops the partitions older
 *   than 72 h (messages.ex `delete_old_messages`) and creates the coming days'.
 */
import type { Sql } from '../db.ts';
import type { RealtimeLimits } from './limits.ts';

export type ReplicationState = 'idle' | 'starting' | 'ready';

interface Snapshot {
	xmin: bigint;
	xmax: bigint;
	xip: Set<bigint>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** `YYYY-MM-DD` of the UTC day `offset` days from `now`. */
function utcDay(now: Date, offset: number): string {
	return new Date(now.getTime() + offset * DAY_MS).toISOString().slice(0, 10);
}

export function partitionName(day: string): string {
	return `messages_${day.replaceAll('-', '_')}`;
}

export class RealtimeTenant {
	state: ReplicationState = 'idle';
	private snapshot: Snapshot | null = null;
	private connecting: Promise<void> | null = null;
	private startTimer: ReturnType<typeof setTimeout> | null = null;
	private idleTimer: ReturnType<typeof setInterval> | null = null;
	private janitorTimer: ReturnType<typeof setInterval> | null = null;
	private emptyChecks = 0;
	/** Called each time replication becomes ready (the hub flushes what it held meanwhile). */
	onReady: () => void = () => {};
	/** Whether the replication connection is up (replication.ts). */
	canReplicate: () => boolean = () => true;

	constructor(
		private readonly admin: Sql,
		private readonly limits: RealtimeLimits,
		private readonly log: (e: unknown) => void,
		/** Connected users: sockets with a joined channel (UsersCounter). */
		private readonly users: () => number,
	) {}

	/** At stand-in start: the janitor's schedule, and the tenant connected with replication ready unless `startIdle`. */
	async start(): Promise<void> {
		this.janitorTimer = setInterval(() => void this.runJanitor().catch(this.log), this.limits.janitorIntervalMs);
		this.janitorTimer.unref();
		if (!this.limits.startIdle) {
			await this.connect();
			await this.startReplication();
		}
	}

	stop(): void {
		if (this.janitorTimer) clearInterval(this.janitorTimer);
		this.disconnect();
	}

	/** At each join (`Connect.lookup_or_start_connection`): connects an idle tenant; replication follows later. */
	async ensureConnected(): Promise<void> {
		if (this.state !== 'idle') return;
		this.connecting ??= this.connect()
			.then(() => {
				this.startTimer = setTimeout(() => {
					this.startTimer = null;
					this.startReplication().catch(this.log);
				}, this.limits.replicationStartDelayMs);
				this.startTimer.unref();
			})
			.finally(() => (this.connecting = null));
		await this.connecting;
	}

	private async connect(): Promise<void> {
		await this.createPartitions();
		this.state = 'starting';
		this.emptyChecks = 0;
		this.idleTimer = setInterval(() => this.checkUsers(), this.limits.idleCheckMs);
		this.idleTimer.unref();
	}

	private async startReplication(): Promise<void> {
		// A replication connection that is down: replicationUp() completes the start.
		if (this.state !== 'starting' || this.startTimer || !this.canReplicate()) return;
		const [row] = await this.admin.unsafe<{ s: string }[]>(`select pg_catalog.pg_current_snapshot()::text as s`);
		const [xmin, xmax, xip] = row!.s.split(':');
		this.snapshot = {
			xmin: BigInt(xmin!),
			xmax: BigInt(xmax!),
			xip: new Set((xip ?? '').split(',').filter(Boolean).map(BigInt)),
		};
		this.state = 'ready';
		this.onReady();
	}

	/** Whether transaction `xid` committed before replication started (its rows are never sent). */
	committedBeforeReady(xid: bigint): boolean {
		const s = this.snapshot;
		if (!s) return true;
		return xid < s.xmin || (xid < s.xmax && !s.xip.has(xid));
	}

	/** The replication connection dropped: nothing is sent until it is back; rows committed meanwhile never are. */
	replicationDown(): void {
		if (this.state === 'ready') this.state = 'starting';
		this.snapshot = null;
	}

	replicationUp(): void {
		this.startReplication().catch(this.log);
	}

	/** How many user checks ran (tests wait on it rather than on a clock). */
	checksRun = 0;

	private checkUsers(): void {
		this.checksRun++;
		this.emptyChecks = this.users() === 0 ? this.emptyChecks + 1 : 0;
		if (this.emptyChecks >= this.limits.idleChecks) this.disconnect();
	}

	/** The tenant stops (as after idling): replication ends; the next join connects it again. */
	disconnect(): void {
		if (this.startTimer) clearTimeout(this.startTimer);
		if (this.idleTimer) clearInterval(this.idleTimer);
		this.startTimer = null;
		this.idleTimer = null;
		this.snapshot = null;
		this.state = 'idle';
	}

	/** Creates the partitions of yesterday to today + 3 where absent (tenants.ex `create_messages_partitions`). */
	async createPartitions(now = new Date()): Promise<void> {
		for (let offset = -1; offset <= 3; offset++) {
			const day = utcDay(now, offset);
			const next = utcDay(now, offset + 1);
			const name = partitionName(day);
			try {
				await this.admin.begin(async (tx) => {
					await tx.unsafe(`select pg_advisory_xact_lock(hashtext('supabase_jobs_standin_partitions'))`);
					await tx.unsafe(
						`create table if not exists realtime.${name} partition of realtime.messages for values from ('${day}') to ('${next}')`,
					);
					await tx.unsafe(`alter table realtime.${name} owner to supabase_realtime_admin`);
				});
			} catch (e) {
				// As upstream: logged (PartitionCreationFailed), the tenant connects anyway.
				this.log(e);
			}
		}
	}

	/** The janitor's pass: partitions older than the retention dropped, then the coming days' created. */
	async runJanitor(now = new Date()): Promise<void> {
		const limit = new Date(now.getTime() - this.limits.retentionHours * 60 * 60 * 1000).toISOString().slice(0, 10);
		const rows = await this.admin.unsafe<{ name: string }[]>(
			`select c.relname as name from pg_catalog.pg_inherits i
			 join pg_catalog.pg_class c on c.oid = i.inhrelid
			 where i.inhparent = 'realtime.messages'::regclass and c.relname ~ '^messages_[0-9]{4}_[0-9]{2}_[0-9]{2}$'`,
		);
		for (const { name } of rows) {
			const day = name.slice('messages_'.length).replaceAll('_', '-');
			if (day < limit) await this.admin.unsafe(`drop table if exists realtime.${name}`);
		}
		await this.createPartitions(now);
	}
}
