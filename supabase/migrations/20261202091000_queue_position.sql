-- supabase-jobs: where a queued job stands among its owner's own queued jobs.
--
-- Purpose: a small job that waits "Queued 0%" for minutes, with no position or
-- explanation, reads as broken. The screen can now say "2 of your jobs are
-- ahead of this one".
--
-- Invariants:
--   * job_queue_position(id) counts only queued jobs of the same job table and
--     the same owner that a claim takes before this one (claim order: higher
--     priority first, then earlier available_at, created_at, id). It never
--     counts, and so never reveals, anyone else's jobs: it runs as the caller
--     (SECURITY INVOKER, RLS applies) and filters on the job's own owner, so a
--     user learns nothing of other users' queues — nor does an admin or the
--     service role through it.
--   * Null when the job is not queued (running, ended): there is no position.
--   * PT404 when the caller cannot see the job (unknown, or not theirs).
--   * Reads only; writes nothing.
--
-- Breaks nothing: a new function.

create function public.job_queue_position(id uuid, job_table text default 'jobs')
returns integer
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  me record;
  ahead integer;
begin
  perform supabase_jobs.check_call(id, null);
  select j.status, j.priority, j.available_at, j.created_at, j.owner_id into me
    from supabase_jobs.job j where j.job_table = label and j.id = job_queue_position.id;
  if not found then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  if me.status <> 'queued' then
    return null;
  end if;
  select pg_catalog.count(*)::integer into ahead
    from supabase_jobs.job j
   where j.job_table = label and j.status = 'queued'
     and j.owner_id is not distinct from me.owner_id
     and (j.priority > me.priority
          or (j.priority = me.priority
              and (j.available_at, j.created_at, j.id) < (me.available_at, me.created_at, job_queue_position.id)));
  return ahead;
end
$$;
comment on function public.job_queue_position(uuid, text) is
  'How many of the same owner''s queued jobs (same job table) a claim takes before this queued job; null when it is not queued. Counts nobody else''s jobs. PT404 when the caller cannot see it.';
revoke all on function public.job_queue_position(uuid, text) from public, anon, authenticated;
grant execute on function public.job_queue_position(uuid, text) to authenticated, service_role;
