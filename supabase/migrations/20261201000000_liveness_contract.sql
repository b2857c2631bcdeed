-- Liveness contract: a worker declares at claim how often it will beat, and
-- only that declaration (or an explicit stale_after) ever makes a running job
-- stale. 0.1.0 scheduled reclaim with a guessed 5 minutes, which requeued jobs
-- worked the seed's bare way (claim -> work -> succeed, no ticks) while they
-- were still running, and left a dead worker's job frozen on screen for minutes.
--
-- Invariants:
--   * job.heartbeat_ms is the interval the claiming worker promised to write
--     heartbeat_at at (null: it promised nothing). Set by every claim, for the
--     attempt that claim starts.
--   * A running job with heartbeat_ms is silent once supabase_jobs.missed_beats()
--     beats in a row did not arrive; job_reclaim_silent readmits exactly those.
--   * A running job without heartbeat_ms is never reclaimed except by
--     job_reclaim_stale(stale_after) with an explicit, non-null stale_after.
--   * settings.stale_after is null by default: the reclaim schedule applies only
--     the declared contracts until an operator sets it.
--
-- Breaks: job_claim and job_claim_next gain a trailing heartbeat_ms argument
-- (callers by name are unaffected; positional callers with job_table are).
-- An installation that relied on the 5-minute default stale_after must set it
-- explicitly: update supabase_jobs.settings set stale_after = '5 minutes';

alter table supabase_jobs.job add column heartbeat_ms integer;

-- The range, once: limit functions as the partitioned layer writes them; the
-- CHECK is written from them, the claims call check_heartbeat_ms().
create function supabase_jobs.heartbeat_ms_min() returns int language plpgsql immutable parallel safe set search_path = '' as $$ begin return 10; end $$;
create function supabase_jobs.heartbeat_ms_max() returns int language plpgsql immutable parallel safe set search_path = '' as $$ begin return 3600000; end $$;
revoke all on function supabase_jobs.heartbeat_ms_min(), supabase_jobs.heartbeat_ms_max() from public;
grant execute on function supabase_jobs.heartbeat_ms_min(), supabase_jobs.heartbeat_ms_max() to authenticated, service_role;
do $$
begin
  execute pg_catalog.format('alter table supabase_jobs.job add constraint job_heartbeat_ms_range check (heartbeat_ms is null or heartbeat_ms between %s and %s)',
    supabase_jobs.heartbeat_ms_min(), supabase_jobs.heartbeat_ms_max());
end
$$;

create function supabase_jobs.check_heartbeat_ms(heartbeat_ms integer)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if heartbeat_ms is not null and heartbeat_ms not between supabase_jobs.heartbeat_ms_min() and supabase_jobs.heartbeat_ms_max() then
    perform supabase_jobs.invalid('heartbeat_ms', pg_catalog.format('heartbeat_ms is between %s and %s milliseconds; got %s',
      supabase_jobs.heartbeat_ms_min(), supabase_jobs.heartbeat_ms_max(), heartbeat_ms));
  end if;
end
$$;
revoke all on function supabase_jobs.check_heartbeat_ms(integer) from public;
grant execute on function supabase_jobs.check_heartbeat_ms(integer) to service_role;
comment on column supabase_jobs.job.heartbeat_ms is
  'The heartbeat interval (ms) the worker running this attempt declared at claim; silent after supabase_jobs.missed_beats() missed beats, then reclaimed. Null: nothing declared, reclaimed only by an explicit stale_after.';
comment on column supabase_jobs.job.heartbeat_at is
  'Last tick from the worker. A running job is silent when it is older than heartbeat_ms x missed_beats(), or than an explicit stale_after.';

-- How many beats in a row a worker may miss before its job counts as lost.
create function supabase_jobs.missed_beats()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 3; end $$;
comment on function supabase_jobs.missed_beats() is
  'Beats in a row a worker may miss before its running job is reclaimed (job_reclaim_silent).';
revoke all on function supabase_jobs.missed_beats() from public;
grant execute on function supabase_jobs.missed_beats() to authenticated, service_role;

-- Repair comments on the existing partitions (Studio shows a partition's own).
do $$
declare
  t regclass;
begin
  for t in select j.table_name from supabase_jobs.job_tables j loop
    perform supabase_jobs.attach_partition(t);
  end loop;
end
$$;

-- ---------------------------------------------------------------------------
-- Claims declare the heartbeat.
drop function public.job_claim(uuid, text);
create function public.job_claim(id uuid, job_table text default 'jobs', heartbeat_ms integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  return query
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim.heartbeat_ms
   where t.job_table = label and t.id = job_claim.id and t.status = 'queued'
     and t.available_at <= now() and t.attempts < t.max_attempts
  returning t.*;
end
$$;
comment on function public.job_claim(uuid, text, integer) is
  'queued -> running for one job, returning the row with its payload; no row when the job is not yours to run (claimed by another worker, unknown, not yet available). heartbeat_ms: how often this worker promises to beat (job_tick); without it the job is reclaimed only by an explicit stale_after.';

drop function public.job_claim_next(text[], integer, text);
create function public.job_claim_next(kinds text[] default null, "limit" integer default 1, job_table text default 'jobs', heartbeat_ms integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  return query
  with next as (
    select n.id from supabase_jobs.job as n
     where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
       and (kinds is null or n.kind = any (kinds))
     order by n.available_at, n.created_at, n.id
     limit "limit"
     for update skip locked)
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms
    from next where t.job_table = label and t.id = next.id
  returning t.*;
end
$$;
comment on function public.job_claim_next(text[], integer, text, integer) is
  'Claims up to limit queued jobs of the given kinds (all kinds when null), oldest first, skipping rows other workers hold (FOR UPDATE SKIP LOCKED). heartbeat_ms as in job_claim.';

-- ---------------------------------------------------------------------------
-- Reclaim: one statement for both rules. A job is stale when its declared
-- contract is broken (missed_beats() beats missed), or, only when the caller
-- names a stale_after, when it has been silent that long. The write re-checks
-- status, attempts and the heartbeat on the row it finally locks.
create function supabase_jobs.reclaim_jobs(label text, stale_after interval)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
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
  -- No set-returning call per row (see 20261201010000): the payload blanked by a scalar call.
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(reclaimed.j, '{"payload": null}'::jsonb) as j from reclaimed offset 0) as w;
end
$$;
revoke all on function supabase_jobs.reclaim_jobs(text, interval) from public, anon, authenticated;
grant execute on function supabase_jobs.reclaim_jobs(text, interval) to service_role;

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
comment on function public.job_reclaim_stale(interval, text) is
  'Readmits running jobs silent for stale_after (last heartbeat, else started_at), and those that broke their declared heartbeat: back to queued, or failed with a sentence for the user once max_attempts is spent. Refuses without stale_after (22004).';

create function public.job_reclaim_silent(job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query select * from supabase_jobs.reclaim_jobs(supabase_jobs.job_table_label(job_table), null);
end
$$;
comment on function public.job_reclaim_silent(text) is
  'Readmits running jobs whose worker missed supabase_jobs.missed_beats() of the heartbeats it declared at claim (heartbeat_ms): back to queued, or failed with a sentence once max_attempts is spent. Never touches a job claimed without a declared heartbeat: nothing is guessed.';
revoke all on function public.job_reclaim_silent(text) from public, anon, authenticated;
grant execute on function public.job_reclaim_silent(text) to service_role;

-- Grants and plans of the two redefined claims, as the function list of the
-- partitioned layer sets them.
revoke all on function public.job_claim(uuid, text, integer) from public, anon, authenticated;
grant execute on function public.job_claim(uuid, text, integer) to service_role;
alter function public.job_claim(uuid, text, integer) set plan_cache_mode = force_generic_plan;
revoke all on function public.job_claim_next(text[], integer, text, integer) from public, anon, authenticated;
grant execute on function public.job_claim_next(text[], integer, text, integer) to service_role;
alter function public.job_claim_next(text[], integer, text, integer) set plan_cache_mode = force_generic_plan;

-- ---------------------------------------------------------------------------
-- The schedule applies the declared contracts; stale_after only when set.
alter table supabase_jobs.settings alter column stale_after drop not null;
alter table supabase_jobs.settings alter column stale_after set default null;
update supabase_jobs.settings set stale_after = null where stale_after = interval '5 minutes';
comment on column supabase_jobs.settings.stale_after is
  'Null (the default): the supabase-jobs-reclaim schedule readmits only jobs whose worker missed its declared heartbeat. Set it to also readmit jobs claimed without one after this much silence.';

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
    return query
      select label, r.id, r.status from supabase_jobs.reclaim_jobs(label, stale_after) r;
  end loop;
end
$$;
comment on function supabase_jobs.reclaim_all(interval) is
  'The supabase-jobs-reclaim schedule, on every registered job table: readmits jobs whose worker missed its declared heartbeat, and (only when stale_after is not null) jobs silent that long. One row per job readmitted (queued) or closed (failed).';

-- (The job messages carry heartbeat_ms from 20261201030000_enqueue_options.sql
-- on, which writes their shape once more with the columns it adds.)

