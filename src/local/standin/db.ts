/**
 * The stand-in's PostgreSQL connections.
 * - `rest`: logs in as `authenticator` (like PostgREST) and switches role per
 *   request with set_config, so grants and RLS apply exactly as in production.
 * - `admin`: the URL's own (superuser) login, used the way Supabase Realtime
 *   uses its privileged connection: authorization probes, reading
 *   realtime.messages, LISTEN.
 * Every statement is reported to `onQuery` so tests can count round trips.
 */
import postgres from 'postgres';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

export type QueryKind = 'rest' | 'realtime';

export interface QueryEvent {
	kind: QueryKind;
	text: string;
}

export interface Databases {
	rest: Sql;
	admin: Sql;
	end(): Promise<void>;
}

/** `url` with its credentials replaced. */
export function withCredentials(url: string, user: string, password: string): string {
	const u = new URL(url);
	u.username = encodeURIComponent(user);
	u.password = encodeURIComponent(password);
	return u.toString();
}

/**
 * postgres.js serializes a bound value by the type PostgreSQL infers for it
 * (JSON.stringify for json, Date round trips for timestamptz, hex for bytea).
 * The stand-in binds PostgREST's text forms, which PostgreSQL must parse
 * itself, so every serializer becomes the identity.
 */
function textOnly(sql: Sql): void {
	const serializers = sql.options.serializers as Record<string, (x: unknown) => string>;
	for (const key of Object.keys(serializers)) serializers[key] = (x) => String(x);
}

export function openDatabases(options: {
	databaseUrl: string;
	authenticatorUrl?: string;
	onQuery?: (event: QueryEvent) => void;
}): Databases {
	const debug = (kind: QueryKind) => (_connection: number, text: string) => options.onQuery?.({ kind, text });
	const common = {
		onnotice: () => {},
		// Every value the stand-in binds is already PostgreSQL text (as PostgREST sends
		// them); no array serializers may be registered behind our back.
		fetch_types: false,
		connection: { application_name: 'supabase-jobs-standin' },
	};
	const rest = postgres(
		options.authenticatorUrl ?? withCredentials(options.databaseUrl, 'authenticator', 'authenticator'),
		{
			...common,
			max: 8,
			debug: debug('rest'),
			// PostgREST uses prepared statements too, but role and settings change per
			// transaction; unnamed statements keep every request independent.
			prepare: false,
		},
	);
	const admin = postgres(options.databaseUrl, { ...common, max: 4, debug: debug('realtime'), prepare: false });
	textOnly(rest);
	textOnly(admin);
	return {
		rest,
		admin,
		async end() {
			await Promise.all([rest.end({ timeout: 2 }), admin.end({ timeout: 2 })]);
		},
	};
}
