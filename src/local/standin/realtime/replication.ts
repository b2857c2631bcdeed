/**
 * The stand-in's stand-in for Realtime's replication connection: one
 * dedicated PostgreSQL connection LISTENing to the NOTIFYs of standin.sql.
 * When it drops (a database restart) what is committed meanwhile is never
 * sent, as with upstream's TEMPORARY slot, and it connects again every
 * second until it is back (upstream's Connect restarts replication,
 * connect.ex `schedule_replication_retry`); `onUp` / `onDown` tell the tenant.
 */
import postgres from 'postgres';

export interface ReplicationHandlers {
	broadcast(payload: string): void;
	change(payload: string): void;
	up(): void;
	down(): void;
	log(e: unknown): void;
}

const RETRY_MS = 1_000;
const CHANNELS = { broadcast: 'supabase_jobs_standin_broadcast', change: 'supabase_jobs_standin_changes' } as const;

export class ReplicationListener {
	private sql: postgres.Sql | null = null;
	private retry: ReturnType<typeof setTimeout> | null = null;
	private stopped = false;
	up = false;

	constructor(
		private readonly url: string,
		private readonly on: ReplicationHandlers,
	) {}

	async start(): Promise<void> {
		await this.connect();
	}

	private async connect(): Promise<void> {
		if (this.stopped) return;
		const sql = postgres(this.url, {
			max: 1,
			idle_timeout: null as never,
			max_lifetime: null,
			fetch_types: false,
			onnotice: () => {},
			connection: { application_name: 'supabase-jobs-standin-replication' },
			onclose: () => {
				if (this.sql === sql) this.lost();
			},
			// postgres.js hands every NOTIFY of the connection to `onnotify` (the option its own listen() uses).
			...({
				onnotify: (channel: string, payload: string) => {
					if (channel === CHANNELS.broadcast) this.on.broadcast(payload);
					else if (channel === CHANNELS.change) this.on.change(payload);
				},
			} as object),
		});
		this.sql = sql;
		try {
			await sql.unsafe(`listen ${CHANNELS.broadcast}; listen ${CHANNELS.change}`);
		} catch (e) {
			this.on.log(e);
			this.lost();
			return;
		}
		this.up = true;
		this.on.up();
	}

	private lost(): void {
		const old = this.sql;
		this.sql = null;
		if (this.up) {
			this.up = false;
			this.on.down();
		}
		void old?.end({ timeout: 0 }).catch(() => {});
		if (this.stopped || this.retry) return;
		this.retry = setTimeout(() => {
			this.retry = null;
			this.connect().catch((e: unknown) => this.on.log(e));
		}, RETRY_MS);
		this.retry.unref();
	}

	async stop(): Promise<void> {
		this.stopped = true;
		if (this.retry) clearTimeout(this.retry);
		const sql = this.sql;
		this.sql = null;
		this.up = false;
		await sql?.end({ timeout: 2 }).catch(() => {});
	}
}
