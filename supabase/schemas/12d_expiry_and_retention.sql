-- Expiry and retention: queued jobs past expires_at close as failed
-- (expired); the hourly cleanup deletes finished jobs past
-- settings.finished_retention and old cron history, keeping the phase timings
-- of deleted done jobs (phase_timings) for PhasePlan.fromHistory.

create table supabase_jobs.phase_timings (
  id          uuid primary key,
  job_table   text not null,
  kind        text not null,
  owner_id    uuid references auth.users (id) on delete cascade,
  finished_at timestamptz not null,
  timings     jsonb not null,
  constraint phase_timings_object check (jsonb_typeof(timings) = 'object')
);
comment on table supabase_jobs.phase_timings is
  'Phase timings of done jobs that retention deleted, so PhasePlan.fromHistory (public.job_phase_history) still fits plans from them. Written by supabase_jobs.cleanup(); the newest 1000 per job table and kind are kept.';
comment on column supabase_jobs.phase_timings.id is
  'The deleted job''s id.';
comment on column supabase_jobs.phase_timings.job_table is
  'The job table it belonged to.';
comment on column supabase_jobs.phase_timings.kind is
  'The kind of work.';
comment on column supabase_jobs.phase_timings.owner_id is
  'The user who enqueued it: they read their own, as they read their jobs.';
comment on column supabase_jobs.phase_timings.finished_at is
  'When it finished done.';
comment on column supabase_jobs.phase_timings.timings is
  'Seconds (and input size) per phase, as the job recorded them.';
create index phase_timings_kind_idx on supabase_jobs.phase_timings (job_table, kind, finished_at desc, id desc);
create index phase_timings_owner_idx on supabase_jobs.phase_timings (owner_id);

create or replace function supabase_jobs.expire_jobs(label text)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query
  with expired as (
    update supabase_jobs.job as t
       set status = 'failed', error = supabase_jobs.user_message('expired', t.locale), error_code = 'expired'
     where t.job_table = label and t.status = 'queued' and t.expires_at <= now()
    returning t as j)
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(expired.j, '{"payload": null}'::jsonb) as j from expired offset 0) as w;
end
$$;

create or replace function supabase_jobs.cleanup()
returns table (what text, deleted bigint)
language plpgsql
set search_path = ''
as $$
declare
  settings supabase_jobs.settings;
  deadline timestamptz;
  cutoff timestamptz;
  n bigint;
  total bigint;
  t record;
begin
  select * into settings from supabase_jobs.settings s where s.id;
  if pg_catalog.to_regclass('cron.job_run_details') is not null then
    execute 'delete from cron.job_run_details d where coalesce(d.end_time, d.start_time) < now() - $1'
      using settings.cron_history_retention;
    get diagnostics n = row_count;
    what := 'cron.job_run_details';
    deleted := n;
    return next;
  end if;
  if settings.finished_retention is null then
    return;
  end if;
  deadline := pg_catalog.clock_timestamp() + settings.cleanup_time_budget;
  cutoff := now() - settings.finished_retention;
  for t in select r.label from supabase_jobs.job_tables r order by r.label loop
    total := 0;
    loop
      -- One batch: the oldest finished rows past the cutoff (finished_at is
      -- set only on terminal rows), skipping any row another transaction
      -- holds; the timings of the done ones move to phase_timings.
      with batch as (
        select b.id from supabase_jobs.job as b
         where b.job_table = t.label and b.finished_at < cutoff
         order by b.finished_at
         limit settings.cleanup_batch_size
         for update skip locked
      ), gone as (
        delete from supabase_jobs.job as j using batch
         where j.job_table = t.label and j.id = batch.id
        returning j.id, j.job_table, j.kind, j.owner_id, j.finished_at, j.timings, j.status, j.is_active
      ), kept as (
        insert into supabase_jobs.phase_timings as p (id, job_table, kind, owner_id, finished_at, timings)
        select g.id, g.job_table, g.kind, g.owner_id, g.finished_at, g.timings from gone as g
         where g.status = 'done' and g.timings is not null and g.is_active
        on conflict (id) do nothing
      )
      select pg_catalog.count(*) into n from gone;
      total := total + n;
      -- At least one batch per table and run, so every table makes progress.
      exit when n < settings.cleanup_batch_size or pg_catalog.clock_timestamp() >= deadline;
    end loop;
    what := t.label;
    deleted := total;
    return next;
  end loop;
  -- Keep the newest list_max() timings per table and kind: no history call asks for more.
  delete from supabase_jobs.phase_timings as p
   using (select h.id from (
            select k.id, pg_catalog.row_number() over (partition by k.job_table, k.kind order by k.finished_at desc, k.id desc) as n
              from supabase_jobs.phase_timings as k) as h
           where h.n > supabase_jobs.list_max()) as old
   where p.id = old.id;
end
$$;
comment on function supabase_jobs.cleanup is
  'The supabase-jobs-cleanup schedule (hourly): deletes cron.job_run_details older than settings.cron_history_retention and, when settings.finished_retention is set, finished jobs older than that, in statements of settings.cleanup_batch_size rows (FOR UPDATE SKIP LOCKED) for at most settings.cleanup_time_budget; the timings of deleted done jobs are kept in supabase_jobs.phase_timings. One row per job table: how many it deleted.';

-- Security: users read the kept timings of their own jobs (as they read their
-- jobs); workers and the cleanup write them.
alter table supabase_jobs.phase_timings enable row level security;
create policy phase_timings_owner_reads on supabase_jobs.phase_timings for select to authenticated
  using (owner_id = (select auth.uid()));
create policy phase_timings_service_role on supabase_jobs.phase_timings for all to service_role using (true) with check (true);
revoke all on supabase_jobs.phase_timings from public, anon, authenticated;
grant select on supabase_jobs.phase_timings to authenticated;
grant select, insert, update, delete on supabase_jobs.phase_timings to service_role;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.expire_jobs, supabase_jobs.cleanup
  from public, anon, authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.expire_jobs, supabase_jobs.cleanup
  to service_role;
