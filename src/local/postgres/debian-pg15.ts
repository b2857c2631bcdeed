/**
 * Debian's PostgreSQL 15 with pg_cron preloaded, in a throwaway directory on a
 * free port: the one place the real pg_cron runs on our machines (no Docker;
 * pg_net and Vault are not packaged). Needs `apt-get install postgresql-15
 * postgresql-15-cron`. As root, initdb refuses to run, so the server runs as
 * the `postgres` OS user. Local tooling for tests only.
 */
import { execFile } from 'node:child_process';
import { access, appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, type LocalPostgres } from './embedded.ts';

const run = promisify(execFile);

export const DEBIAN_PG15_BIN = '/usr/lib/postgresql/15/bin';
const PG_CRON_FILES = ['/usr/lib/postgresql/15/lib/pg_cron.so', '/usr/share/postgresql/15/extension/pg_cron.control'];

/** Null when PostgreSQL 15 and pg_cron are installed; otherwise what is missing and how to install it. */
export async function missingDebianPg15Cron(): Promise<string | null> {
	const missing: string[] = [];
	for (const file of [join(DEBIAN_PG15_BIN, 'postgres'), join(DEBIAN_PG15_BIN, 'initdb'), ...PG_CRON_FILES]) {
		try {
			await access(file);
		} catch {
			missing.push(file);
		}
	}
	return missing.length === 0
		? null
		: `Debian PostgreSQL 15 with pg_cron is not installed (missing ${missing.join(', ')}). Install it with: apt-get install -y postgresql-15 postgresql-15-cron`;
}

/** The server, plus a stop and start of the same cluster (a database restart under load). */
export interface DebianPg15 extends LocalPostgres {
	/** `pg_ctl stop -m fast`: every connection is cut; the data directory stays. */
	stopServer(): Promise<void>;
	/** Starts the same cluster again on the same port; resolves once it accepts connections. */
	startServer(): Promise<void>;
}

export interface DebianPg15Options {
	/** The database pg_cron serves (cron.database_name). @default 'postgres' */
	cronDatabase?: string;
}

/**
 * Starts the server (superuser `postgres`, trust authentication on 127.0.0.1)
 * with shared_preload_libraries = 'pg_cron', cron.use_background_workers = on
 * (without it every run fails: pg_cron would connect over TCP with a password).
 *
 * @example
 * const pg = await startDebianPg15({ cronDatabase: 'postgres' });
 * // ... postgres(pg.url) ... create extension pg_cron
 * await pg.stop();
 */
export async function startDebianPg15(options: DebianPg15Options = {}): Promise<DebianPg15> {
	const missing = await missingDebianPg15Cron();
	if (missing) throw new Error(missing);
	const asRoot = process.getuid?.() === 0;
	const dir = await mkdtemp(join(tmpdir(), 'supabase-jobs-pg15-'));
	const data = join(dir, 'data');
	const log = join(dir, 'server.log');
	// As root, everything runs as the postgres OS user, which must own the directory.
	const asPostgres = async (command: string, args: string[]) =>
		asRoot ? await run('runuser', ['-u', 'postgres', '--', command, ...args]) : await run(command, args);
	if (asRoot) {
		const { stdout } = await run('id', ['-u', 'postgres']);
		const { stdout: gid } = await run('id', ['-g', 'postgres']);
		await chown(dir, Number(stdout.trim()), Number(gid.trim()));
	}
	const port = await freePort();
	await asPostgres(join(DEBIAN_PG15_BIN, 'initdb'), [
		'-D',
		data,
		'-U',
		'postgres',
		'--auth=trust',
		'--encoding=UTF8',
		'--locale=C',
	]);
	await appendFile(
		join(data, 'postgresql.conf'),
		[
			'',
			'# supabase-jobs test server (src/local/postgres/debian-pg15.ts)',
			`port = ${port}`,
			`listen_addresses = '127.0.0.1'`,
			`unix_socket_directories = '${dir}'`,
			`shared_preload_libraries = 'pg_cron'`,
			`cron.database_name = '${options.cronDatabase ?? 'postgres'}'`,
			'cron.use_background_workers = on',
			'max_worker_processes = 32',
			'max_connections = 100',
			'fsync = off',
			'synchronous_commit = off',
			'full_page_writes = off',
			'',
		].join('\n'),
	);
	const pgCtl = (...args: string[]) => asPostgres(join(DEBIAN_PG15_BIN, 'pg_ctl'), ['-D', data, ...args]);
	await pgCtl('-l', log, '-w', '-t', '60', 'start');
	let stopped = false;
	return {
		url: `postgres://postgres@127.0.0.1:${port}/postgres`,
		embedded: true,
		async stopServer() {
			await pgCtl('-m', 'fast', '-w', '-t', '60', 'stop');
		},
		async startServer() {
			await pgCtl('-l', log, '-w', '-t', '60', 'start');
		},
		async stop() {
			if (stopped) return;
			stopped = true;
			try {
				await pgCtl('-m', 'fast', '-w', '-t', '60', 'stop');
			} finally {
				await rm(dir, { recursive: true, force: true });
			}
		},
	};
}
