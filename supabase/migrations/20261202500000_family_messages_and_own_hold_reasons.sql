-- Parent and child jobs meet the worker's estimate and the hold reasons meet RLS.
--
-- Purpose:
--   * A child's message on its parent's topic (job:<parent>) carries
--     expected_end_at like every other job message (20261202200000_worker_eta.sql
--     added it to the two other message builders; the parent/child migration,
--     written alongside, did not have it). Restated from
--     20261202100100_parent_child_jobs.sql with that one key added.
--   * supabase_jobs.hold_of(label, kind, concurrency_key) counted running jobs for
--     any key a user named: a user could probe whether someone else's job with a
--     guessed key (say, that user's id) was running. Users now reach the counts
--     only through supabase_jobs.hold_of_job(id), which answers for a job the
--     caller owns (or for an admin); hold_of itself is the service role's.
-- Invariants: the message shape is the same in all three builders (test/realtime/
--   security.test.ts compares their keys); a user learns nothing about jobs of
--   others but the number running of a kind (the sentence "1 export already
--   running" is the feature) and of their own key.
-- Breaks: nothing for callers of job_hold_reasons (same signature, same rows);
--   direct calls of supabase_jobs.hold_of by authenticated are refused.

create or replace function supabase_jobs.after_child_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  ended boolean := new.status in ('done', 'failed', 'cancelled')
    and (tg_op = 'INSERT' or old.status not in ('done', 'failed', 'cancelled'));
  parent supabase_jobs.job;
  mean real;
begin
  begin
    insert into realtime.messages (payload, event, topic, private, extension)
    values (pg_catalog.jsonb_build_object(
              'id', new.id, 'kind', new.kind, 'status', new.status, 'progress', new.progress, 'stage', new.stage,
              'error', new.error, 'error_code', new.error_code, 'result_id', new.result_id,
              'attempts', new.attempts, 'max_attempts', new.max_attempts,
              'created_at', new.created_at, 'updated_at', new.updated_at, 'started_at', new.started_at, 'finished_at', new.finished_at,
              'heartbeat_ms', new.heartbeat_ms, 'available_at', new.available_at, 'tags', new.tags,
              'expected_end_at', new.expected_end_at,
              'locale', new.locale, 'owner_id', new.owner_id, 'job_table', new.job_table,
              'parent_id', new.parent_id, 'expected_seconds', new.expected_seconds),
            'job', 'job:' || new.parent_id, true, 'broadcast');
  exception when others then
    raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;

  if ended then
    -- Siblings ending at once (and the parent's own wait) take turns here; the
    -- count below then sees every one committed before.
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.family:' || new.parent_id::text, 0));
  end if;
  select p.* into parent from supabase_jobs.job p
   where p.job_table = new.job_table and p.id = new.parent_id and p.status in ('running', 'waiting')
   for update skip locked;
  if parent.id is null then
    return null;
  end if;
  mean := least(99, supabase_jobs.children_progress(new.job_table, new.parent_id));
  if ended and parent.status = 'waiting'
     and not exists (select 1 from supabase_jobs.job c
                      where c.job_table = new.job_table and c.parent_id = new.parent_id
                        and c.status not in ('done', 'failed', 'cancelled')) then
    update supabase_jobs.job as t
       set status = 'queued', attempts = t.attempts - 1, available_at = now(), resumed_at = now(),
           progress = greatest(t.progress, coalesce(mean, 0))
     where t.job_table = parent.job_table and t.id = parent.id;
  elsif mean > parent.progress then
    update supabase_jobs.job as t set progress = mean
     where t.job_table = parent.job_table and t.id = parent.id;
  end if;
  return null;
end
$$;

create function supabase_jobs.hold_of_job(job_id uuid)
returns table (held_by text, running integer, max_running integer)
language sql stable
security definer
set search_path = ''
as $$
  select h.held_by, h.running, h.max_running
    from supabase_jobs.job j
    cross join lateral supabase_jobs.hold_of(j.job_table, j.kind, j.concurrency_key) h
   where j.id = job_id
     and (j.owner_id = (select auth.uid()) or supabase_jobs.is_admin())
$$;
comment on function supabase_jobs.hold_of_job(uuid) is
  'What holds one queued job back (see hold_of), answered only for the caller''s own job or for an admin.';
revoke all on function supabase_jobs.hold_of_job(uuid) from public, anon, authenticated;
grant execute on function supabase_jobs.hold_of_job(uuid) to authenticated, service_role;
revoke execute on function supabase_jobs.hold_of(text, text, text) from authenticated;

-- Restated from 20261202100100_parent_child_jobs.sql: users go through hold_of_job.
create or replace function public.job_hold_reasons(ids uuid[], job_table text default 'jobs')
returns table (id uuid, kind text, held_by text, running integer, max_running integer)
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if ids is null or pg_catalog.cardinality(ids) > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('ids', pg_catalog.format('ids is an array of at most %s job ids', supabase_jobs.list_max()));
  end if;
  if pg_catalog.has_function_privilege('supabase_jobs.hold_of(text, text, text)', 'execute') then
    return query
    select j.id, j.kind, h.held_by, h.running, h.max_running
      from supabase_jobs.job j
      cross join lateral supabase_jobs.hold_of(label, j.kind, j.concurrency_key) h
     where j.job_table = label and j.id = any (ids) and j.status = 'queued' and j.available_at <= now();
  else
    return query
    select j.id, j.kind, h.held_by, h.running, h.max_running
      from supabase_jobs.job j
      cross join lateral supabase_jobs.hold_of_job(j.id) h
     where j.job_table = label and j.id = any (ids) and j.status = 'queued' and j.available_at <= now();
  end if;
end
$$;
