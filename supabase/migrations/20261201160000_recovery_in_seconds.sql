-- supabase-jobs — recovery in seconds: the reclaimer runs every 5 seconds where
-- pg_cron allows it, and a requeue wakes a worker as an enqueue does.
--
-- Purpose: a job whose worker died was readmitted at the next whole minute
-- (the reclaim schedule ran '* * * * *') and then waited for the backstop
-- schedule (up to another minute) before a worker claimed it: about two
-- minutes for a silence the job's own declared beats (3 x 5 s by default)
-- detect in 15 s. Now:
--   * install_schedules schedules supabase-jobs-reclaim at '5 seconds' (pg_cron
--     1.5 and later accept 'N seconds', 1-59; Supabase ships 1.6) and, where
--     pg_cron refuses it (1.4 and earlier: "invalid schedule"), every minute,
--     with a notice saying so;
--   * notify_requeued_job, the row trigger on running/waiting -> queued
--     (reclaim, release, a resumed parent, a retry), also POSTs a wake-up
--     through pg_net, as the insert trigger does for an enqueue, when the job
--     is claimable now (a retry with a backoff is woken by the backstop).
--
-- Invariants: a dead worker's job is readmitted within missed_beats() declared
-- beats of its last sign of life plus one reclaim period (5 s, or 60 s on an
-- old pg_cron), and a worker is asked for it in the same commit. A requeue
-- never fails because of the wake-up (kick_body never raises). One wake-up per
-- requeued job: at most as many as the jobs that were running.
--
-- Breaks nothing for callers. Replaces supabase_jobs.install_schedules() and
-- supabase_jobs.notify_requeued_job() (now SECURITY DEFINER: it reads Vault
-- through kick_body whoever requeues) and the comment of
-- supabase_jobs.jobs_silent.reclaimable_at, and runs install_schedules once.

-- ---------------------------------------------------------------------------
create or replace function supabase_jobs.install_schedules()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  reclaim constant text := 'select count(*) from supabase_jobs.reclaim_all((select s.stale_after from supabase_jobs.settings s where s.id))';
begin
  if pg_catalog.to_regprocedure('cron.schedule(text, text, text)') is null then
    raise notice 'supabase_jobs: pg_cron is not enabled, so no schedules were installed. Enable it, then run: select supabase_jobs.install_schedules();';
    return 0;
  end if;
  perform cron.schedule('supabase-jobs-backstop', '* * * * *',
    'select supabase_jobs.backstop()');
  -- pg_cron 1.5 and later run a job every N seconds; older ones refuse the
  -- schedule with invalid_parameter_value, and the reclaimer runs every minute.
  begin
    perform cron.schedule('supabase-jobs-reclaim', '5 seconds', reclaim);
  exception when invalid_parameter_value then
    perform cron.schedule('supabase-jobs-reclaim', '* * * * *', reclaim);
    raise notice 'supabase_jobs: pg_cron % schedules in minutes only (seconds need 1.5 or later): the reclaimer runs every minute, so a dead worker''s job waits up to a minute more before it runs again.',
      coalesce((select e.extversion from pg_catalog.pg_extension e where e.extname = 'pg_cron'), '(unknown version)');
  end;
  perform cron.schedule('supabase-jobs-cleanup', '17 * * * *',
    'select * from supabase_jobs.cleanup()');
  return 3 + supabase_jobs.install_recurring();
end
$$;
comment on function supabase_jobs.install_schedules() is
  'Creates or replaces the pg_cron schedules supabase-jobs-backstop (every minute), supabase-jobs-reclaim (every 5 seconds on pg_cron 1.5 and later, else every minute, with a notice), supabase-jobs-cleanup (hourly at minute 17) and one supabase-jobs-schedule:<name> per recurring schedule. Returns how many; 0 with a notice when pg_cron is not enabled.';
revoke all on function supabase_jobs.install_schedules() from public, anon, authenticated;

-- ---------------------------------------------------------------------------
-- A requeued (or resumed) job is claimable again: NOTIFY for listening
-- workers, and a wake-up through pg_net when it can be claimed now, with the
-- body an enqueue of that one job sends (reason 'requeue').
create or replace function supabase_jobs.notify_requeued_job()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('supabase_jobs', pg_catalog.json_build_object(
    'job_table', new.job_table, 'kind', new.kind, 'job_id', new.id,
    'count', 1, 'available_at', new.available_at, 'reason', 'requeue')::text);
  if new.available_at <= pg_catalog.now() then
    perform supabase_jobs.kick_body(pg_catalog.jsonb_build_object(
      'job_table', new.job_table, 'kind', new.kind, 'kinds', pg_catalog.jsonb_build_array(new.kind),
      'job_id', new.id, 'count', 1, 'reason', 'requeue'));
  end if;
  return null;
end
$$;
comment on function supabase_jobs.notify_requeued_job() is
  'AFTER UPDATE row trigger (WHEN running or waiting -> queued) on supabase_jobs.job: NOTIFY supabase_jobs that a retried, released, reclaimed or resumed job is claimable again, and wake the worker through pg_net (supabase_jobs.kick_body) when it is claimable now.';
revoke all on function supabase_jobs.notify_requeued_job() from public, anon, authenticated;
grant execute on function supabase_jobs.notify_requeued_job() to service_role;

-- The operator view's column says the new cadence.
comment on column supabase_jobs.jobs_silent.reclaimable_at is
  'From when job_reclaim_silent (the reclaim schedule, every 5 seconds; every minute before pg_cron 1.5) readmits it: last beat + heartbeat_ms x missed_beats().';

select supabase_jobs.install_schedules();
