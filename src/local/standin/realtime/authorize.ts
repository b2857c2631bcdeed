/**
 * Private-channel authorization by RLS on realtime.messages, as Supabase
 * Realtime does it (lib/realtime/tenants/authorization.ex):
 * - read: in one transaction, insert one probe row per extension with the
 *   privileged connection, then `set_conn_config` (role, realtime.topic,
 *   request.jwt.claims, request.jwt.claim.sub/role, request.headers), select
 *   the probe ids back as the user, roll back. A probe the user can see means
 *   read is allowed for that extension.
 * - write: set the same config, insert one probe row per extension under a
 *   savepoint as the user; 42501 means no write; roll back.
 */
import { randomUUID } from 'node:crypto';
import type { Claims } from '../jwt.ts';
import type { Sql, Tx } from '../db.ts';

export interface AuthorizationContext {
	topic: string;
	claims: Claims;
	headers: Record<string, string>;
}

export interface ExtensionPolicies {
	broadcast: boolean;
	presence: boolean | null;
}

class Rollback extends Error {
	constructor(readonly value: unknown) {
		super('rollback');
	}
}

async function setConnConfig(tx: Tx, ctx: AuthorizationContext): Promise<void> {
	const role = String(ctx.claims.role);
	const sub = typeof ctx.claims.sub === 'string' ? ctx.claims.sub : null;
	await tx.unsafe(
		`select set_config('role', $1, true), set_config('realtime.topic', $2, true), set_config('request.jwt.claims', $3, true),
		        set_config('request.jwt.claim.sub', $4, true), set_config('request.jwt.claim.role', $5, true),
		        set_config('request.headers', $6, true)`,
		[role, ctx.topic, JSON.stringify(ctx.claims), sub as never, role, JSON.stringify(ctx.headers)],
	);
}

/** Runs `fn` in a transaction that is always rolled back, returning its value. */
async function rolledBack<T>(sql: Sql, fn: (tx: Tx) => Promise<T>): Promise<T> {
	try {
		await sql.begin(async (tx) => {
			throw new Rollback(await fn(tx));
		});
	} catch (e) {
		if (e instanceof Rollback) return e.value as T;
		throw e;
	}
	throw new Error('unreachable');
}

export async function readPolicies(
	sql: Sql,
	ctx: AuthorizationContext,
	presenceEnabled: boolean,
): Promise<ExtensionPolicies> {
	const extensions = presenceEnabled ? ['broadcast', 'presence'] : ['broadcast'];
	const ids = new Map(extensions.map((e) => [e, randomUUID()]));
	return await rolledBack(sql, async (tx) => {
		for (const [extension, id] of ids) {
			await tx.unsafe(`insert into realtime.messages (id, topic, extension) values ($1, $2, $3)`, [
				id,
				ctx.topic,
				extension,
			]);
		}
		await setConnConfig(tx, ctx);
		const rows = await tx.unsafe<{ id: string }[]>(
			`select id::text as id from realtime.messages where id = any($1::uuid[])`,
			[`{${[...ids.values()].join(',')}}`],
		);
		const seen = new Set(rows.map((r) => r.id));
		return {
			broadcast: seen.has(ids.get('broadcast')!),
			presence: presenceEnabled ? seen.has(ids.get('presence')!) : null,
		};
	});
}

export async function canWriteBroadcast(sql: Sql, ctx: AuthorizationContext): Promise<boolean> {
	return await rolledBack(sql, async (tx) => {
		await setConnConfig(tx, ctx);
		try {
			await tx.savepoint(async (sp) => {
				await sp.unsafe(`insert into realtime.messages (topic, extension) values ($1, 'broadcast')`, [ctx.topic]);
			});
			return true;
		} catch (e) {
			if ((e as { code?: string }).code === '42501') return false;
			throw e;
		}
	});
}
