/**
 * A throwaway database holding what an installation of the package holds: the
 * compat bootstrap and supabase/migrations, without the demo's own SQL (src/demo/sql).
 * What the generated types describe. Local tooling.
 */
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { applyCompat, applyMigrations, withDatabase } from '../postgres/migrate.ts';

/**
 * Creates the database on the server at `serverUrl` (a superuser's), hands its
 * URL to `fn`, and drops it afterwards, whatever `fn` did.
 *
 * @example
 * const text = await withProductDatabase(server.url, (url) => databaseTypesFile(url));
 */
export async function withProductDatabase<T>(serverUrl: string, fn: (url: string) => Promise<T>): Promise<T> {
	const name = `sj_types_${randomUUID().slice(0, 8)}_${process.pid}`;
	const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
	try {
		await admin.unsafe(`create database ${name}`);
		try {
			const url = withDatabase(serverUrl, name);
			await applyCompat(url);
			await applyMigrations(url);
			return await fn(url);
		} finally {
			await admin.unsafe(`drop database if exists ${name} with (force)`);
		}
	} finally {
		await admin.end();
	}
}
