/**
 * A database of its own for each test file, cloned from the template built in
 * global setup, plus helpers that set role and JWT claims exactly as PostgREST
 * >= 12 does (role and request.jwt.claims, transaction-local).
 */
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { withDatabase } from '../../src/local/postgres/migrate.ts';

export type Sql = postgres.Sql;

export interface TestDatabase {
	/** Superuser (owner) connection string to this file's database. */
	url: string;
	name: string;
	/** A pooled superuser client; closed after the file. */
	sql: Sql;
	/** Opens another client (its own connections), closed after the file. */
	connect(options?: postgres.Options<Record<string, never>>): Sql;
}

let counter = 0;

/** Creates this file's database from the template; drops it after the file. */
export async function useTestDatabase(): Promise<TestDatabase> {
	const adminUrl = inject('adminUrl');
	const templateDb = inject('templateDb');
	const name = `sj_t${counter++}_${randomUUID().slice(0, 8)}_${templateDb.split('_').pop()}`;
	const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
	// CREATE DATABASE ... TEMPLATE fails while another session is connected to the template.
	await admin.unsafe(`create database ${name} template ${templateDb}`);
	const url = withDatabase(adminUrl, name);
	const clients: Sql[] = [];
	const connect = (options: postgres.Options<Record<string, never>> = {}) => {
		const c = postgres(url, { onnotice: () => {}, max: 4, ...options });
		clients.push(c);
		return c;
	};
	const sql = connect({ max: 8 });
	afterAll(async () => {
		await Promise.all(clients.map((c) => c.end({ timeout: 5 })));
		await admin.unsafe(`drop database if exists ${name} with (force)`);
		await admin.end();
	});
	return { url, name, sql, connect };
}

export type Role = 'anon' | 'authenticated' | 'service_role';

export interface Caller {
	role: Role;
	/** The user's id (sub claim) for authenticated callers. */
	sub?: string;
	/** Their JWT says app_metadata.role = 'admin'. */
	admin?: boolean;
}

/** Claims as a Supabase JWT carries them. */
export function claimsFor(caller: Caller): Record<string, unknown> {
	const now = Math.floor(Date.now() / 1000);
	const admin = caller.admin ? { app_metadata: { role: 'admin' } } : {};
	return caller.sub
		? { sub: caller.sub, role: caller.role, aud: 'authenticated', exp: now + 3600, iat: now, ...admin }
		: { role: caller.role, exp: now + 3600, iat: now };
}

/**
 * Runs `fn` in one transaction as PostgREST would for a request from `caller`:
 * set_config('role'), set_config('request.jwt.claims'), all transaction-local.
 */
export async function as<T>(sql: Sql, caller: Caller, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
	return (await sql.begin(async (tx) => {
		await tx`select set_config('role', ${caller.role}, true), set_config('request.jwt.claims', ${JSON.stringify(claimsFor(caller))}, true), set_config('request.method', 'POST', true)`;
		return await fn(tx);
	})) as T;
}

/** Inserts a user into auth.users and returns a caller for them. */
export async function createUser(sql: Sql, email?: string): Promise<Caller & { sub: string }> {
	const id = randomUUID();
	await sql`insert into auth.users (id, email, role, aud) values (${id}, ${email ?? `${id}@example.test`}, 'authenticated', 'authenticated')`;
	return { role: 'authenticated', sub: id };
}

export const serviceRole: Caller = { role: 'service_role' };
export const anon: Caller = { role: 'anon' };
