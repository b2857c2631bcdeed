/**
 * The jobs (and records) the security matrix acts on, made by the superuser in
 * the state a case needs, and a snapshot of everything a call could change
 * about one, to compare before and after a refused call.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../helpers/db.ts';
import type { Case, Target } from './matrix.ts';

/** A fresh job (or record) of `owner` (null: ownerless, as the service role enqueues) in the case's state. */
export async function jobIn(sql: Sql, c: Case, owner: string | null): Promise<Target> {
	const kind = `sec.${c.fn}.${randomUUID().slice(0, 8)}`;
	if (c.scope === 'record') {
		const id = randomUUID();
		await sql`insert into public.sec_records (id, owner_id, status) values (${id}, ${owner}, 'queued')`;
		return { id, kind, owner };
	}
	const [{ id }] = await sql`select id from job_enqueue(${kind}, owner_id => ${owner})`;
	if (c.state !== 'queued') await sql`select job_claim(${id})`;
	if (c.state === 'waiting') await sql`select job_ask(${id}, 'ask-1', 'Sure?', '{"type": "boolean"}')`;
	if (c.state === 'failed') await sql`select job_fail(${id}, 'Falhou.')`;
	if (c.state === 'parent') await sql`select job_enqueue_child(${id}, ${kind + '.part'})`;
	if (c.state === 'done') {
		await sql`select job_succeed(${id})`;
		await sql`insert into supabase_jobs.phase_timings (id, job_table, kind, owner_id, finished_at, timings)
		          values (${randomUUID()}, 'jobs', ${kind}, ${owner}, now(), '{"read": 1000}')`;
	}
	return { id, kind, owner };
}

/** Everything about a target a call could change: its row, its retries, questions, children, kind limits, records. */
export async function snapshot(sql: Sql, t: Target): Promise<unknown> {
	const [row] = await sql`
		select (select to_jsonb(j) from supabase_jobs.job j where j.id = ${t.id}::text::uuid) as job,
		       (select jsonb_agg(to_jsonb(j) order by j.id) from supabase_jobs.job j
		         where j.kind like ${t.kind} || '%' or j.retry_of::text = ${t.id} or j.parent_id::text = ${t.id}) as related,
		       (select jsonb_agg(to_jsonb(q)) from supabase_jobs.job_question q where q.job_id::text = ${t.id}) as questions,
		       (select jsonb_agg(to_jsonb(l)) from supabase_jobs.kind_limits l where l.kind = ${t.kind}) as limits,
		       (select jsonb_agg(to_jsonb(p)) from supabase_jobs.phase_timings p where p.kind = ${t.kind}) as timings,
		       (select to_jsonb(r) from public.sec_records r where r.id = ${t.id}) as record`;
	return row;
}
