/**
 * The security matrix: every function of `public` a signed-in user or anon may
 * EXECUTE, each with the job (or record) it acts on and how to call it, and
 * the callers it is tried as: the owner (user A), another user (B), anon, a
 * JWT without `sub`, and a custom role inheriting authenticated, as PostgREST
 * would switch to it. Shared by the SQL and the REST halves of the matrix.
 */
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { claimsFor, createUser, type Sql } from '../helpers/db.ts';

/** One caller of the matrix: the role a request sets and the JWT claims it carries. */
export interface MatrixCaller {
	name: string;
	role: string;
	claims: Record<string, unknown>;
	sub?: string;
}

/** What a case's function is about, and so who may act. */
export type Scope =
	/** One job (by id, kind or ids): its owner acts; anyone else gets what a missing job gives. */
	| 'job'
	/** Admins and workers only: every user gets 42501 (an admin is tried separately). */
	| 'admin'
	/** An enqueue: a user enqueues for themselves only; for another user it is refused. */
	| 'enqueue'
	/** A stage map on a record table of the caller's (RLS): the record's owner acts; anyone else, a missing record. */
	| 'record';

/** The job a case acts on, made fresh for each target (an owner's job, an ownerless one). */
export type JobState = 'queued' | 'running' | 'waiting' | 'failed' | 'done' | 'parent';

/** A target as a call sees it: a job's (or record's) id and its job's unique kind. */
export interface Target {
	id: string;
	kind: string;
	owner: string | null;
}

export interface Case {
	fn: string;
	scope: Scope;
	state: JobState;
	/** Calls the function on the target; a missing target is a random id and kind. */
	call: (tx: postgres.TransactionSql, t: Target) => Promise<unknown>;
	/** The same call's arguments for supabase.rpc(fn, args). */
	rpc: (t: Target) => Record<string, unknown>;
	/** The owner's answer names the job (so the owner demonstrably reads it), not only succeeds. */
	ownerSees?: boolean;
}

export const RECORDS_SQL = `
  create table public.sec_records (id text primary key, owner_id uuid, status text, token uuid, error text);
  alter table public.sec_records enable row level security;
  create policy sec_records_owner on public.sec_records for all to authenticated
    using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()));
  grant select, update on public.sec_records to authenticated;`;

/** Every user-callable function, with its case. A function added without one fails the matrix. */
export const CASES: Case[] = [
	{
		fn: 'job_get',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'queued',
		ownerSees: true,
		call: (tx, t) => tx`select * from job_get(${t.id})`,
	},
	{
		fn: 'job_get_many',
		rpc: (t) => ({ ids: [t.id] }),
		scope: 'job',
		state: 'queued',
		ownerSees: true,
		call: (tx, t) => tx`select * from job_get_many(${[t.id]}::uuid[])`,
	},
	{
		fn: 'job_get_status',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'queued',
		call: (tx, t) => tx`select job_get_status(${t.id}) as s`,
	},
	{
		fn: 'job_cancel',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'queued',
		ownerSees: true,
		call: (tx, t) => tx`select * from job_cancel(${t.id})`,
	},
	{
		fn: 'job_children',
		rpc: (t) => ({ parent_id: t.id }),
		scope: 'job',
		state: 'parent',
		ownerSees: true,
		call: (tx, t) => tx`select parent_id from job_children(${t.id})`,
	},
	{
		fn: 'job_queue_position',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'queued',
		call: (tx, t) => tx`select job_queue_position(${t.id}) as p`,
	},
	{
		fn: 'job_hold_reasons',
		rpc: (t) => ({ ids: [t.id] }),
		scope: 'job',
		state: 'queued',
		call: (tx, t) => tx`select * from job_hold_reasons(${[t.id]}::uuid[])`,
	},
	{
		fn: 'job_list_recent',
		rpc: (t) => ({ kind: t.kind }),
		scope: 'job',
		state: 'queued',
		ownerSees: true,
		call: (tx, t) => tx`select id from job_list_recent(kind => ${t.kind})`,
	},
	{
		fn: 'job_reschedule',
		rpc: (t) => ({ id: t.id, delay: '1 hour' }),
		scope: 'job',
		state: 'queued',
		ownerSees: true,
		call: (tx, t) => tx`select * from job_reschedule(${t.id}, delay => '1 hour')`,
	},
	{
		fn: 'job_timeline',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'queued',
		call: (tx, t) => tx`select event from job_timeline(${t.id})`,
	},
	{
		fn: 'job_stream_read',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'running',
		call: (tx, t) => tx`select job_stream_read(${t.id}) as r`,
	},
	{
		fn: 'job_open_question',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'waiting',
		ownerSees: true,
		call: (tx, t) => tx`select job_id from job_open_question(${t.id})`,
	},
	{
		fn: 'job_answer',
		rpc: (t) => ({ id: t.id, answer: true }),
		scope: 'job',
		state: 'waiting',
		ownerSees: true,
		call: (tx, t) => tx`select * from job_answer(${t.id}, 'true'::jsonb)`,
	},
	{
		fn: 'job_try_again',
		rpc: (t) => ({ id: t.id }),
		scope: 'job',
		state: 'failed',
		ownerSees: true,
		call: (tx, t) => tx`select retry_of from job_try_again(${t.id})`,
	},
	{
		fn: 'job_phase_history',
		rpc: (t) => ({ kind: t.kind }),
		scope: 'job',
		state: 'done',
		ownerSees: true,
		call: (tx, t) => tx`select timings from job_phase_history(${t.kind})`,
	},
	{
		fn: 'job_replay',
		rpc: (t) => ({ kind: t.kind }),
		scope: 'admin',
		state: 'failed',
		call: (tx, t) => tx`select id from job_replay(${t.kind})`,
	},
	{
		fn: 'job_cancel_many',
		rpc: (t) => ({ kind: t.kind }),
		scope: 'admin',
		state: 'queued',
		call: (tx, t) => tx`select job_cancel_many(kind => ${t.kind}) as n`,
	},
	{
		fn: 'job_delete_finished',
		rpc: (t) => ({ ended_before: new Date(Date.now() + 60_000).toISOString(), kind: t.kind }),
		scope: 'admin',
		state: 'done',
		call: (tx, t) => tx`select job_delete_finished(now() + interval '1 minute', kind => ${t.kind}) as n`,
	},
	{
		fn: 'job_pause_kind',
		rpc: (t) => ({ kind: t.kind }),
		scope: 'admin',
		state: 'queued',
		call: (tx, t) => tx`select job_pause_kind(${t.kind}) as p`,
	},
	{
		fn: 'job_resume_kind',
		rpc: (t) => ({ kind: t.kind }),
		scope: 'admin',
		state: 'queued',
		call: (tx, t) => tx`select job_resume_kind(${t.kind}) as r`,
	},
	{
		fn: 'job_set_rate_limit',
		rpc: (t) => ({ kind: t.kind, starts: 1, per_ms: 1000 }),
		scope: 'admin',
		state: 'queued',
		call: (tx, t) => tx`select job_set_rate_limit(${t.kind}, 1, 1000)`,
	},
	{
		fn: 'job_admin_kinds',
		rpc: () => ({}),
		scope: 'admin',
		state: 'queued',
		call: (tx) => tx`select kind from job_admin_kinds()`,
	},
	{
		fn: 'jobs_admin_overview',
		rpc: () => ({}),
		scope: 'admin',
		state: 'queued',
		call: (tx) => tx`select jobs_admin_overview() as o`,
	},
	{
		fn: 'job_enqueue',
		rpc: (t) => ({ kind: t.kind, owner_id: t.owner }),
		scope: 'enqueue',
		state: 'queued',
		call: (tx, t) => tx`select id from job_enqueue(${t.kind}, owner_id => ${t.owner})`,
	},
	{
		fn: 'job_enqueue_once',
		rpc: (t) => ({ kind: t.kind, idempotency_key: randomUUID(), owner_id: t.owner }),
		scope: 'enqueue',
		state: 'queued',
		call: (tx, t) => tx`select job_enqueue_once(${t.kind}, ${randomUUID()}, owner_id => ${t.owner}) as j`,
	},
	{
		fn: 'job_enqueue_many',
		rpc: (t) => ({ kind: t.kind, items: [{ owner_id: t.owner }] }),
		scope: 'enqueue',
		state: 'queued',
		call: (tx, t) =>
			tx`select id from job_enqueue_many(${t.kind}, ${JSON.stringify([{ owner_id: t.owner }])}::text::jsonb)`,
	},
	{
		fn: 'stage_start',
		rpc: (t) => ({ record_table: 'sec_records', record_id: t.id, status_column: 'status', token_column: 'token' }),
		scope: 'record',
		state: 'queued',
		call: (tx, t) => tx`select stage_start('sec_records', ${t.id}, 'status', 'token') is not null as started`,
	},
	{
		fn: 'stage_finish',
		rpc: (t) => ({
			record_table: 'sec_records',
			record_id: t.id,
			status_column: 'status',
			token_column: 'token',
			token: randomUUID(),
			status: 'done',
			token_optional: true,
		}),
		scope: 'record',
		state: 'queued',
		call: (tx, t) =>
			tx`select stage_finish('sec_records', ${t.id}, 'status', 'token', ${randomUUID()}, 'done', token_optional => true) as f`,
	},
	{
		fn: 'stage_cancel',
		rpc: (t) => ({
			record_table: 'sec_records',
			record_id: t.id,
			stages: [{ stage: 's', status: 'status', token: 'token' }],
		}),
		scope: 'record',
		state: 'queued',
		call: (tx, t) =>
			tx`select stage_cancel('sec_records', ${t.id}, '[{"stage": "s", "status": "status", "token": "token"}]') as c`,
	},
];

/** The functions of `public` that authenticated or anon may execute, from the catalog. */
export async function userCallable(sql: Sql): Promise<string[]> {
	const rows = await sql<{ name: string }[]>`
		select distinct p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		left join pg_depend d on d.objid = p.oid and d.deptype = 'e'
		where n.nspname = 'public' and d.objid is null and p.prokind = 'f'
		  and (has_function_privilege('authenticated', p.oid, 'execute') or has_function_privilege('anon', p.oid, 'execute'))
		order by 1`;
	return rows.map((r) => r.name);
}

/** A custom role inheriting authenticated, which authenticator may switch to (as on a real project). */
export async function createCustomRole(sql: Sql): Promise<{ role: string; drop: () => Promise<void> }> {
	const role = `plan_pro_${randomUUID().slice(0, 8)}`;
	await sql.unsafe(`create role ${role} nologin; grant authenticated to ${role}; grant ${role} to authenticator`);
	return { role, drop: async () => void (await sql.unsafe(`drop role if exists ${role}`)) };
}

/** The five callers: A (the owner), B, anon, a JWT without sub, a custom role's user. */
export async function makeCallers(sql: Sql, customRole: string) {
	const a = await createUser(sql);
	const b = await createUser(sql);
	const c = await createUser(sql);
	const custom = { ...claimsFor(c), role: customRole };
	const callers = {
		owner: { name: 'user A (owner)', role: 'authenticated', claims: claimsFor(a), sub: a.sub },
		other: { name: 'user B', role: 'authenticated', claims: claimsFor(b), sub: b.sub },
		anon: { name: 'anon', role: 'anon', claims: claimsFor({ role: 'anon' }) },
		noSub: { name: 'a JWT without sub', role: 'authenticated', claims: claimsFor({ role: 'authenticated' }) },
		custom: { name: `custom role ${customRole}`, role: customRole, claims: custom, sub: c.sub },
	} satisfies Record<string, MatrixCaller>;
	const boss = await createUser(sql);
	const admin: MatrixCaller = {
		name: 'an admin',
		role: 'authenticated',
		claims: claimsFor({ ...boss, admin: true }),
		sub: boss.sub,
	};
	return { a, callers, admin };
}

/** Runs `fn` in one transaction as PostgREST would for `caller` (role and claims, transaction-local). */
export async function asCaller<T>(
	sql: Sql,
	caller: MatrixCaller,
	fn: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
	return (await sql.begin(async (tx) => {
		await tx`select set_config('role', ${caller.role}, true), set_config('request.jwt.claims', ${JSON.stringify(caller.claims)}, true), set_config('request.method', 'POST', true)`;
		return await fn(tx);
	})) as T;
}

/** What a call answered, with the target's id and kind blanked: an error's SQLSTATE, or its rows. */
export function outcome(result: { rows?: unknown; code?: string }, t: Target): string {
	if (result.code !== undefined) return `error ${result.code}`;
	return `rows ${JSON.stringify(result.rows).replaceAll(t.id, 'ID').replaceAll(t.kind, 'KIND')}`;
}

export async function settle(p: Promise<unknown>): Promise<{ rows?: unknown; code?: string }> {
	try {
		return { rows: await p };
	} catch (e) {
		return { code: (e as { code?: string }).code ?? String(e) };
	}
}

/** A random id and kind: what a call on a job that does not exist is given. */
export function missingTarget(owner: string | null): Target {
	return { id: randomUUID(), kind: `missing.${randomUUID().slice(0, 8)}`, owner };
}
