/**
 * Helpers for the kick tests: the two Vault secrets the kick reads, and the
 * requests pg_net (here the stand-in) holds in its queue.
 */
import type { Sql } from '../helpers/db.ts';

export const WORKER_SECRET = 'test-worker-secret-0123456789';

/** Stores the worker URL and secret in Vault, replacing earlier ones. */
export async function setWorkerSecrets(sql: Sql, url: string, secret = WORKER_SECRET): Promise<void> {
	await sql`delete from vault.secrets where name in ('supabase_jobs_worker_url', 'supabase_jobs_worker_secret')`;
	await sql`select vault.create_secret(${url}, 'supabase_jobs_worker_url', 'supabase-jobs worker endpoint')`;
	await sql`select vault.create_secret(${secret}, 'supabase_jobs_worker_secret', 'supabase-jobs worker bearer secret')`;
}

export async function removeWorkerSecrets(sql: Sql): Promise<void> {
	await sql`delete from vault.secrets where name in ('supabase_jobs_worker_url', 'supabase_jobs_worker_secret')`;
}

export interface QueuedRequest {
	id: string;
	method: string;
	url: string;
	headers: Record<string, string>;
	body: Record<string, unknown>;
	timeout_milliseconds: number;
}

/** The requests waiting in net.http_request_queue, oldest first (as committed, seen from `sql`). */
export async function queuedRequests(sql: Sql): Promise<QueuedRequest[]> {
	return await sql<QueuedRequest[]>`
		select id::text as id, method, url, headers, convert_from(body, 'UTF8')::jsonb as body, timeout_milliseconds
		from net.http_request_queue order by id`;
}

export async function clearRequestQueue(sql: Sql): Promise<void> {
	await sql`delete from net.http_request_queue`;
	await sql`delete from net._http_response`;
}
