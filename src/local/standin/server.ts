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
	/** Sees every statement the stand-in sends. */
	onQuery?: (event: QueryEvent) => void;
	/** Where internal errors go (default: console.error when SUPABASE_JOBS_STANDIN_DEBUG is set). */
	log?: (error: unknown) => void;
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
	/** Stops serving (closes sockets and connections); start() serves again on the same port. */
	stop(): Promise<void>;
	start(): Promise<void>;
	/** stop(), for good. */
	close(): Promise<void>;
}

interface Running {
	server: Server;
	dbs: Databases;
	hub: RealtimeHub;
	endpoint: ReturnType<typeof createRealtimeEndpoint>;
	cache: SchemaCache;
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

/** What every request is routed with: the host, the project's keys, the exposed schemas, the options. */
interface Gateway {
	host: string;
	apiKeys: ReadonlySet<string>;
	exposed: string[];
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
		};
		const subPath = url.pathname.slice('/rest/v1'.length).replace(/^\/+/, '');
		const out = await handleRest(config, method, subPath, query, req.headers, await readBody(req));
		res.writeHead(out.status, out.headers).end(out.body ?? undefined);
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

export async function createStandin(options: StandinOptions): Promise<Standin> {
	const host = options.host ?? '127.0.0.1';
	const exposed = options.exposedSchemas ?? ['public'];
	const log = options.log ?? debugLog;
	const anonKey = await mintApiKey(options.jwtSecret, 'anon');
	const serviceRoleKey = await mintApiKey(options.jwtSecret, 'service_role');
	const gate: Gateway = { host, apiKeys: new Set([anonKey, serviceRoleKey]), exposed, options };
	const counts: Record<QueryKind, number> = { rest: 0, realtime: 0 };
	const onQuery = (e: QueryEvent) => {
		counts[e.kind]++;
		options.onQuery?.(e);
	};
	let port = options.port ?? 0;
	let running: Running | null = null;

	async function start(): Promise<void> {
		if (running) return;
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
		const pgrst = await dbs.admin.listen('pgrst', (payload) => {
			if (payload === 'reload schema' || payload === '') cache.reload();
		});
		const hub = new RealtimeHub(dbs.admin, options.jwtSecret, log);
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
		});
		const r: Running = { server, dbs, hub, endpoint, cache, unlistenPgrst: pgrst.unlisten, auth };
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
		stop,
		start,
		close: stop,
	};
	return standin;
}
