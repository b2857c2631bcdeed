-- Reclaim: readmitting running jobs whose worker went silent (missed its
-- declared heartbeats, or settings.stale_after of silence): back to queued, or
-- failed once max_attempts is spent. Run by the supabase-jobs-reclaim schedule
-- (12e_schedules) and by job_reclaim_stale / job_reclaim_silent.

create or replace function supabase_jobs.reclaim_jobs(label text, stale_after interval)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  if stale_after is not null and stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  return query
  with stale as (
    select s.id, s.attempts from supabase_jobs.job as s
     where s.job_table = label and s.status = 'running'
       and ((s.heartbeat_ms is not null
             and coalesce(s.heartbeat_at, s.started_at) < now() - pg_catalog.make_interval(secs => s.heartbeat_ms * supabase_jobs.missed_beats() / 1000.0))
         or (stale_after is not null and coalesce(s.heartbeat_at, s.started_at) < now() - stale_after)))
  , reclaimed as (
  update supabase_jobs.job as t
     set status = (case when t.attempts >= t.max_attempts then 'failed' else 'queued' end)::public.job_status,
         error = case when t.attempts >= t.max_attempts then supabase_jobs.user_message('worker_lost', t.locale, t.attempts) else t.error end,
         error_code = case when t.attempts >= t.max_attempts then 'worker_lost' else t.error_code end
    from stale
   where t.job_table = label and t.id = stale.id and t.status = 'running' and t.attempts = stale.attempts
     and ((t.heartbeat_ms is not null
           and coalesce(t.heartbeat_at, t.started_at) < now() - pg_catalog.make_interval(secs => t.heartbeat_ms * supabase_jobs.missed_beats() / 1000.0))
       or (stale_after is not null and coalesce(t.heartbeat_at, t.started_at) < now() - stale_after))
  returning t as j)
  -- No set-returning call per row (docs/architecture.md, "Row type descriptors"): the payload blanked by a scalar call.
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(reclaimed.j, '{"payload": null}'::jsonb) as j from reclaimed offset 0) as w;
end
$$;

create or replace function supabase_jobs.reclaim_all(stale_after interval)
returns table (job_table text, id uuid, status public.job_status)
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass;
  label text;
begin
  if stale_after is not null and stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  for tbl in select t.table_name from supabase_jobs.job_tables t order by t.table_name::text loop
    label := supabase_jobs.table_label(tbl);
    return query select label, r.id, r.status from supabase_jobs.reclaim_table(label, stale_after) r;
  end loop;
end
$$;
comment on function supabase_jobs.reclaim_all is
  'The supabase-jobs-reclaim schedule: supabase_jobs.reclaim_table on every registered job table. One row per job readmitted (queued) or closed (failed).';

create or replace function supabase_jobs.reclaim_table(label text, stale_after interval)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query
    select * from supabase_jobs.reclaim_jobs(label, stale_after)
    union all
    select * from supabase_jobs.expire_jobs(label)
    union all
    select * from supabase_jobs.expire_questions(label);
end
$$;
comment on function supabase_jobs.reclaim_table is
  'One reclaim pass over one job table, the one both the reclaim schedule (reclaim_all) and public.job_reclaim_silent run: readmits jobs whose worker missed its declared heartbeat, and (only when stale_after is not null) jobs silent that long; closes queued jobs past expires_at as failed (expired) and waiting jobs whose question went unanswered past its deadline (question_unanswered).';

create or replace function public.job_reclaim_stale(stale_after interval, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if stale_after is null then
    raise exception using errcode = '22004',
      message = 'stale_after is required: reclaim_stale will not guess how long a silent worker is dead (job_reclaim_silent applies the heartbeats workers declared)',
      detail = 'field=stale_after';
  end if;
  if stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  return query select * from supabase_jobs.reclaim_jobs(label, stale_after);
end
$$;
comment on function public.job_reclaim_stale is
  'Readmits running jobs silent for stale_after (last heartbeat, else started_at), and those that broke their declared heartbeat: back to queued, or failed with a sentence for the user once max_attempts is spent. Refuses without stale_after (22004).';

create or replace function public.job_reclaim_silent(job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query select * from supabase_jobs.reclaim_table(supabase_jobs.job_table_label(job_table),
    (select s.stale_after from supabase_jobs.settings s where s.id));
end
$$;
comment on function public.job_reclaim_silent is
  'What the reclaim schedule does, on one job table (supabase_jobs.reclaim_table with settings.stale_after): readmits running jobs whose worker missed supabase_jobs.missed_beats() of the heartbeats it declared at claim (heartbeat_ms), and jobs silent for settings.stale_after when that is set: back to queued, or failed with a sentence once max_attempts is spent; and closes queued jobs past expires_at as failed (expired). With settings.stale_after null (the default) a job claimed without a declared heartbeat is never touched: nothing is guessed.';

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.reclaim_jobs, supabase_jobs.reclaim_all, supabase_jobs.reclaim_table,
  public.job_reclaim_stale, public.job_reclaim_silent
  from public, anon, authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.reclaim_jobs, supabase_jobs.reclaim_all, supabase_jobs.reclaim_table,
  public.job_reclaim_stale, public.job_reclaim_silent
  to service_role;
