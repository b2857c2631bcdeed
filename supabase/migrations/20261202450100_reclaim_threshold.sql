-- supabase-jobs — reclaim_jobs refuses a threshold that is not positive, like its callers.
--
-- Purpose: supabase_jobs.reclaim_jobs(label, stale_after) is executable by
-- service_role (job_reclaim_stale, job_reclaim_silent and reclaim_all run as
-- the caller and go through it). Called directly with stale_after = '-1 day'
-- it put every running job of the table back in the queue at once: the
-- checks lived only in its callers. Found by the bad-input sweep
-- (test/chaos/bad-input.test.ts), which calls every supabase_jobs function.
--
-- Invariant: a stale_after that is not null and not positive raises 22023
-- (DETAIL field=stale_after) and reclaims nothing, whoever calls.
--
-- Breaks nothing: same signature, grants, volatility and search_path; the
-- callers already refused such thresholds before calling.

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
  -- No set-returning call per row (see 20261201010000): the payload blanked by a scalar call.
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(reclaimed.j, '{"payload": null}'::jsonb) as j from reclaimed offset 0) as w;
end
$$;
