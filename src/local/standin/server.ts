/**
 * The local stand-in for Supabase's HTTP services on ONE port, over a real
 * PostgreSQL: /rest/v1 (PostgREST subset), /realtime/v1/websocket (Phoenix /
 * Realtime protocol), /auth/v1 (anonymous sign-in, auth.ts), /functions/v1/<name> (proxy). Development and test
 * tooling only: product code never imports it and never knows it is local.
 *
 * @example
 * const standin = await createStandin({ databaseUrl, jwtSecret: 'super-secret-jwt-token-with-at-least-32-characters' });
 * const supabase = createClient(standin.url, standin.anonKey, { realtime: { transport: WebSocket } });
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabases, type Databases, type QueryEvent, type QueryKind } from './db.ts';
import { standinAuth, type StandinAuth } from './auth.ts';
import { proxyFunction, type FunctionTarget } from './functions-proxy.ts';
import { mintApiKey, mintUserToken, type UserTokenOptions } from './jwt.ts';
import { createRealtimeEndpoint } from './realtime/endpoint.ts';
import { RealtimeHub } from './realtime/hub.ts';
import { defaultConfigPath, readProjectConfig } from './project-config.ts';
import { emptyStats, resolveLimits, type RealtimeLimits, type RealtimeStats } from './realtime/limits.ts';
import { RoleSettings } from './rest/role-settings.ts';
import { handleRest, type RestConfig } from './rest/router.ts';
import { SchemaCache } from './rest/schema.ts';

const here = dirname(fileURLToPath(import.meta.url));

export interface StandinOptions {
	/** Superuser connection string of the database (the stand-in also logs in as `authenticator`). */
	databaseUrl: string;
	/** The HS256 secret every key and user token is signed with (>= 32 characters, like Supabase's). */
	jwtSecret: string;
	/** 0 or absent: a free port, kept across stop()/start(). */
	port?: number;
	host?: string;
	/** Edge functions: name -> target base URL (or `{url, verifyJwt}`; verify_jwt defaults to on). */
	functions?: Record<string, FunctionTarget>;
	/** Exposed schemas (PostgREST `db-schemas`); default ['public']. */
	exposedSchemas?: string[];
	/** Override for the authenticator login (default: databaseUrl with authenticator/authenticator). */
	authenticatorUrl?: string;
	/**
	 * The project's supabase/config.toml, read as the Supabase CLI reads it for
	 * `[api] max_rows` and `[auth] enable_anonymous_sign_ins` (project-config.ts).
	 * Default: `supabase/config.toml` under the working directory; null, or a
	 * missing file: the CLI's defaults (1000 rows, anonymous sign-ins off).
	 */
	configPath?: string | null;
	/** Overrides `[api] max_rows` (null: no cap). */
	maxRows?: number | null;
	/** Overrides `[auth] enable_anonymous_sign_ins`. */
	anonymousSignIns?: boolean;
	/** Sees every statement the stand-in sends. */
	onQuery?: (event: QueryEvent) => void;
	/** Where internal errors and Realtime's log lines go (default: console.error when SUPABASE_JOBS_STANDIN_DEBUG is set). */
	log?: (error: unknown) => void;
	/** Realtime's quotas and timings (hosted Free plan values by default; realtime/limits.ts). */
	realtime?: Partial<RealtimeLimits>;
}

/** Realtime's counters and the hooks tests use to put the tenant in a state hosted reaches only with time. */
export interface StandinRealtime {
	/** The limits in force. */
	readonly limits: RealtimeLimits;
	/** What was counted since creation or the last reset (kept across stop()/start()). */
	stats(): RealtimeStats;
	resetStats(): void;
	/** The janitor's pass now: partitions older than the retention dropped, yesterday to today + 3 created. */
	runJanitor(): Promise<void>;
	/** The tenant as after ~11 minutes without users: replication stopped; the next join connects it again. */
	goIdle(): void;
	/** How many of the idle checks (one each idleCheckMs) have run; 0 while stopped. */
	idleChecksRun(): number;
}

export interface Standin {
	/** Base URL for createClient, e.g. http://127.0.0.1:54321 */
	url: string;
	port: number;
	anonKey: string;
	serviceRoleKey: string;
	jwtSecret: string;
	/** A GoTrue-shaped access token for user `sub` (role authenticated). */
	mintUserToken(sub: string, options?: UserTokenOptions): Promise<string>;
	/** Statements sent to PostgreSQL so far (all, or by connection kind). */
	queryCount(kind?: QueryKind): number;
	/** Drops the schema cache (PostgREST: NOTIFY pgrst, 'reload schema'). */
	reloadSchema(): void;
	/** Reads the roles' settings again (PostgREST: NOTIFY pgrst, 'reload config'); resolves once read. */
	reloadConfig(): Promise<void>;
	/** The `[api] max_rows` in force (null: no cap). */
	readonly maxRows: number | null;
	/** Stops serving (closes sockets and connections); start() serves again on the same port. */
	stop(): Promise<void>;
	start(): Promise<void>;
	/** stop(), for good. */
	close(): Promise<void>;
	realtime: StandinRealtime;
}

interface Running {
	server: Server;
	dbs: Databases;
	hub: RealtimeHub;
	endpoint: ReturnType<typeof createRealtimeEndpoint>;
	cache: SchemaCache;
	roleSettings: RoleSettings;
	unlistenPgrst: () => Promise<void>;
	auth: StandinAuth;
}

async function readBody(req: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks).toString('utf8');
}

const CORS = {
	'Access-Control-Allow-Origin': '*',
	'Access-Control-Allow-Headers':
		'authorization, x-client-info, apikey, content-type, accept-profile, content-profile, prefer, range, x-supabase-api-version',
	'Access-Control-Allow-Methods': 'GET, HEAD, POST, PATCH, PUT, DELETE, OPTIONS',
	'Access-Control-Expose-Headers': 'Content-Range, Content-Profile, Preference-Applied',
};

/** The API gateway (Kong key-auth) accepts only the project's keys: true when it answered 401. */
function refuseKey(apiKeys: ReadonlySet<string>, req: IncomingMessage, res: ServerResponse, url: URL): boolean {
	const key = (req.headers.apikey as string | undefined) ?? url.searchParams.get('apikey');
	if (key && apiKeys.has(key)) return false;
	res
		.writeHead(401, { 'Content-Type': 'application/json' })
		.end(
			JSON.stringify(
				key
					? { message: 'Invalid API key', hint: 'Double check your Supabase `anon` or `service_role` API key.' }
					: { message: 'No API key found in request', hint: 'No `apikey` request header or url param was found.' },
			),
		);
	return true;
}

/** What every request is routed with: the host, the project's keys, the exposed schemas, the row cap, the options. */
interface Gateway {
	host: string;
	apiKeys: ReadonlySet<string>;
	exposed: string[];
	/** PostgREST `db-max-rows`: from the options, else supabase/config.toml; null: no cap. */
	maxRows: number | null;
	options: StandinOptions;
}

/** Serves on `port` at `host` (0: a free one); resolves with the port served on. */
function listenOn(server: Server, port: number, host: string): Promise<number> {
	return new Promise<number>((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, host, () => {
			server.off('error', reject);
			const address = server.address();
			resolve(address && typeof address === 'object' ? address.port : port);
		});
	});
}

/** Sends requests to `handle` (a failure answers 500) and upgrades on the Realtime path to the WebSocket endpoint. */
function serveOn(gate: Gateway, r: Running, log: (error: unknown) => void): void {
	const { server, endpoint } = r;
	server.on('request', (req, res) => {
		handle(gate, r, req, res).catch((e: unknown) => {
			log(e);
			if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify({ message: e instanceof Error ? e.message : String(e) }));
		});
	});
	server.on('upgrade', (req, socket, head) => {
		const url = new URL(req.url ?? '/', `http://${gate.host}`);
		if (url.pathname !== '/realtime/v1/websocket' && url.pathname !== '/realtime/v1/websocket/') {
			socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
			return;
		}
		endpoint.upgrade(req, socket, head, url).catch((e: unknown) => {
			log(e);
			socket.destroy();
		});
	});
}

/** What the stand-in's gateway does with one request: auth, rest and functions behind the key check, CORS on every answer. */
async function handle(gate: Gateway, r: Running, req: IncomingMessage, res: ServerResponse): Promise<void> {
	const { host, options } = gate;
	const url = new URL(req.url ?? '/', `http://${host}`);
	const method = req.method ?? 'GET';
	if (method === 'OPTIONS') {
		res.writeHead(200, CORS).end();
		return;
	}
	for (const [k, v] of Object.entries(CORS)) res.setHeader(k, v);
	const keyRefused = (): boolean => refuseKey(gate.apiKeys, req, res, url);
	if (url.pathname.startsWith('/auth/v1/')) {
		if (keyRefused()) return;
		const out = await r.auth.handle(
			method,
			url.pathname.slice('/auth/v1/'.length).replace(/\/+$/, ''),
			url.searchParams,
			req.headers,
			await readBody(req),
		);
		res.writeHead(out.status, out.headers).end(out.body || undefined);
		return;
	}
	if (url.pathname.startsWith('/rest/v1')) {
		if (keyRefused()) return;
		const query = new URLSearchParams(url.search);
		query.delete('apikey');
		const config: RestConfig = {
			sql: r.dbs.rest,
			cache: r.cache,
			jwtSecret: options.jwtSecret,
			exposedSchemas: gate.exposed,
			extraSearchPath: ['public', 'extensions'],
			anonRole: 'anon',
			roleSettings: r.roleSettings,
			maxRows: gate.maxRows,
		};
		const subPath = url.pathname.slice('/rest/v1'.length).replace(/^\/+/, '');
		const out = await handleRest(config, method, subPath, query, req.headers, await readBody(req));
		res.writeHead(out.status, out.headers).end(out.body ?? undefined);
		return;
	}
	if (url.pathname === '/standin/v1/realtime/stats' && req.method === 'GET') {
		// Stand-in only (no such route on hosted): the counters, for a bench in another process.
		if (keyRefused()) return;
		res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(r.hub.snapshot()));
		return;
	}
	if (url.pathname.startsWith('/functions/v1/')) {
		await proxyFunction(
			options.functions ?? {},
			options.jwtSecret,
			req,
			res,
			url.pathname.slice('/functions/v1/'.length),
			url.search,
		);
		return;
	}
	res
		.writeHead(404, { 'Content-Type': 'application/json' })
		.end(JSON.stringify({ message: 'no Route matched with those values' }));
}

/** Where internal errors go by default: console.error when SUPABASE_JOBS_STANDIN_DEBUG is set. */
function debugLog(e: unknown): void {
	if (process.env.SUPABASE_JOBS_STANDIN_DEBUG) console.error('[standin]', e);
}

/** Stops serving: the Realtime endpoint, the server and its sockets, the hub, the schema listener, the connections. */
async function closeRunning(r: Running): Promise<void> {
	r.endpoint.close();
	await new Promise<void>((resolve) => {
		r.server.close(() => resolve());
		r.server.closeAllConnections();
	});
	await r.hub.stop();
	await r.unlistenPgrst().catch(() => {});
	await r.dbs.end();
}

/**
 * The stand-in's connections with its SQL applied, the schema cache and the roles' settings loaded, both read again on
 * NOTIFY pgrst ('reload schema', 'reload config').
 */
async function openStandinDatabase(options: StandinOptions, exposed: string[], onQuery: (e: QueryEvent) => void) {
	const dbs = openDatabases({
		databaseUrl: options.databaseUrl,
		authenticatorUrl: options.authenticatorUrl,
		onQuery,
	});
	const sqlText = await readFile(join(here, 'standin.sql'), 'utf8');
	await dbs.admin.begin(async (tx) => {
		// Several stand-ins may share a database; CREATE OR REPLACE races otherwise.
		await tx.unsafe(`select pg_advisory_xact_lock(hashtext('supabase_jobs_standin'))`);
		await tx.unsafe(sqlText);
	});
	const cache = new SchemaCache(dbs.rest, exposed);
	const roleSettings = new RoleSettings(dbs.rest);
	await roleSettings.load();
	const pgrst = await dbs.admin.listen('pgrst', (payload) => {
		if (payload === 'reload schema' || payload === '') cache.reload();
		if (payload === 'reload config') roleSettings.reload();
	});
	return { dbs, cache, roleSettings, unlistenPgrst: pgrst.unlisten };
}

/** The Realtime counters and hooks of a stand-in whose running state `current` gives (null while stopped). */
function standinRealtime(
	limits: RealtimeLimits,
	stats: ReturnType<typeof emptyStats>,
	current: () => Running | null,
): StandinRealtime {
	return {
		limits,
		stats: () => current()?.hub.snapshot() ?? { ...structuredClone(stats), messagesPerSecond: 0, replication: 'idle' },
		resetStats: () => void Object.assign(stats, emptyStats()),
		runJanitor: async () => {
			const r = current();
			if (!r) throw new Error('the stand-in is stopped');
			await r.hub.tenant.runJanitor();
		},
		goIdle: () => current()?.hub.tenant.disconnect(),
		idleChecksRun: () => current()?.hub.tenant.checksRun ?? 0,
	};
}

export async function createStandin(options: StandinOptions): Promise<Standin> {
	const host = options.host ?? '127.0.0.1';
	const project = readProjectConfig(options.configPath === undefined ? defaultConfigPath() : options.configPath);
	const maxRows = options.maxRows === undefined ? project.maxRows : options.maxRows;
	const anonymousSignIns = options.anonymousSignIns ?? project.anonymousSignIns;
	const exposed = options.exposedSchemas ?? ['public'];
	const log = options.log ?? debugLog;
	const anonKey = await mintApiKey(options.jwtSecret, 'anon');
	const serviceRoleKey = await mintApiKey(options.jwtSecret, 'service_role');
	const limits = resolveLimits(options.realtime);
	const stats = emptyStats();
	const gate: Gateway = { host, apiKeys: new Set([anonKey, serviceRoleKey]), exposed, maxRows, options };
	const counts: Record<QueryKind, number> = { rest: 0, realtime: 0 };
	const onQuery = (e: QueryEvent) => {
		counts[e.kind]++;
		options.onQuery?.(e);
	};
	let port = options.port ?? 0;
	let running: Running | null = null;

	async function start(): Promise<void> {
		if (running) return;
		const { dbs, cache, roleSettings, unlistenPgrst } = await openStandinDatabase(options, exposed, onQuery);
		const hub = new RealtimeHub(dbs.admin, options.jwtSecret, log, limits, options.databaseUrl);
		hub.stats = stats;
		await hub.listen();
		const endpoint = createRealtimeEndpoint(hub);
		const server = createServer();
		// The gateway in front of Supabase's services (Kong, nginx) keeps an idle client
		// connection 60 s; Node's default is 5 s, and a client reusing a socket just as
		// it expires while it uploads a large body got ECONNRESET ("fetch failed").
		server.keepAliveTimeout = 60_000;
		const auth = standinAuth({
			sql: dbs.admin,
			jwtSecret: options.jwtSecret,
			issuer: () => `http://${host}:${port}/auth/v1`,
			anonymousSignIns,
		});
		const r: Running = { server, dbs, hub, endpoint, cache, roleSettings, unlistenPgrst, auth };
		serveOn(gate, r, log);
		port = await listenOn(server, port, host);
		running = r;
	}

	async function stop(): Promise<void> {
		const r = running;
		if (!r) return;
		running = null;
		await closeRunning(r);
	}

	await start();
	const standin: Standin = {
		get url() {
			return `http://${host}:${port}`;
		},
		get port() {
			return port;
		},
		anonKey,
		serviceRoleKey,
		jwtSecret: options.jwtSecret,
		mintUserToken: (sub, opts) =>
			mintUserToken(options.jwtSecret, sub, { issuer: `http://${host}:${port}/auth/v1`, ...opts }),
		queryCount: (kind) => (kind ? counts[kind] : counts.rest + counts.realtime),
		reloadSchema: () => running?.cache.reload(),
		reloadConfig: async () => {
			await running?.roleSettings.load();
		},
		maxRows,
		stop,
		start,
		close: stop,
		realtime: standinRealtime(limits, stats, () => running),
	};
	return standin;
}
