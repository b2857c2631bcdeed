/**
 * The chaos run's own stack, apart from the suite's shared server (it is
 * restarted mid-run): Debian's PostgreSQL 15 with the real pg_cron (the
 * reclaim and backstop schedules as installed in production), the compat
 * stand-ins for pg_net and Vault, and every service in a supervised process
 * of its own (test/chaos/fleet.ts): the stand-in (REST, Realtime, functions),
 * the pg_net dispatcher, the Node runners and the Deno function instances
 * behind the functions gateway.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import { startDebianPg15, type DebianPg15 } from '../../src/local/postgres/debian-pg15.ts';
import { freePort } from '../../src/local/postgres/embedded.ts';
import { prepareDatabase } from '../../src/local/postgres/migrate.ts';
import { mintApiKey, mintUserToken } from '../../src/local/standin/jwt.ts';
import { Fleet } from './fleet.ts';
import { startGateway } from './gateway.ts';
import { CHAOS_KINDS } from './kinds.ts';

export const JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';

export interface ChaosStack {
	pg: DebianPg15;
	/** Superuser client of the run's database (set-up and the checks). */
	sql: postgres.Sql;
	/** The stand-in's base URL (the project URL supabase-js is given). */
	url: string;
	anonKey: string;
	/** A user's access token, as GoTrue would issue it. */
	userToken(sub: string): Promise<string>;
	fleet: Fleet;
	stop(): Promise<void>;
}

export async function startChaosStack(options: {
	nodeRunners: number;
	denoInstances: number;
	concurrency: number;
	heartbeatMs: number;
	echo?: (line: string) => void;
}): Promise<ChaosStack> {
	const cleanups: (() => Promise<unknown>)[] = [];
	const stop = async () => {
		while (cleanups.length) await cleanups.pop()!().catch(() => {});
	};
	try {
		const pg = await startDebianPg15({ cronDatabase: 'postgres' });
		cleanups.push(() => pg.stop());
		await prepareDatabase(pg.url);
		const sql = postgres(pg.url, { max: 4, onnotice: () => {} });
		cleanups.push(() => sql.end({ timeout: 5 }));
		await sql`create extension pg_cron`;
		const [{ n }] = await sql`select supabase_jobs.install_schedules() as n`;
		if (n !== 4) throw new Error(`install_schedules installed ${String(n)} schedules, expected 4`);
		for (const kind of CHAOS_KINDS) await sql`select supabase_jobs.register_job_kind(${kind})`;
		await sql.unsafe(await readFile(new URL('./instrumentation.sql', import.meta.url), 'utf8'));

		const workerSecret = randomBytes(24).toString('base64url');
		const fleet = new Fleet({ ...options, databaseUrl: pg.url, workerSecret, jwtSecret: JWT_SECRET });
		cleanups.push(() => fleet.stopAll());
		const gateway = await startGateway(() => fleet.nextFunctionUrl());
		cleanups.push(() => gateway.close());
		const url = await fleet.startServices(await freePort(), gateway.url);
		await sql.begin(async (tx) => {
			await tx`select vault.create_secret(${`${url}/functions/v1/jobs-worker`}, 'supabase_jobs_worker_url', 'chaos run')`;
			await tx`select vault.create_secret(${workerSecret}, 'supabase_jobs_worker_secret', 'chaos run')`;
		});
		await fleet.startWorkers();
		return {
			pg,
			sql,
			url,
			anonKey: await mintApiKey(JWT_SECRET, 'anon'),
			userToken: (sub) => mintUserToken(JWT_SECRET, sub, { issuer: `${url}/auth/v1`, expiresIn: 4 * 3600 }),
			fleet,
			stop,
		};
	} catch (error) {
		await stop();
		throw error;
	}
}
