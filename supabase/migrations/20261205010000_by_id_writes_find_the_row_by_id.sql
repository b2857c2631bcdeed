-- supabase-jobs — a write to one job finds its row by id, whatever the statistics say.
--
-- Purpose (issue 10): the statements that write one job by id also test its
-- status (t.id = $1 and t.status = 'queued' / 'running'). That status test
-- makes the partial indexes on queued and on running jobs usable, and when a
-- table's statistics were taken with few jobs queued or running (a table that
-- filled after its last ANALYZE, or one holding mostly finished jobs), the
-- generic plan preferred them to the primary key: job_claim(id) then walked
-- the claim index, (job_table, priority, available_at, created_at, id) where
-- queued, over every queued job and every entry left by a claimed one, and
-- job_succeed / job_fail / job_retry / job_release / job_tick /
-- job_wait_for_children walked every running job of the table. Seen in the
-- bench: the per-job path with 1,000,000 finished rows ran at 0.60x the
-- empty table's rate; EXPLAIN (auto_explain) of job_claim's update in such a
-- table: an index scan of job_claim_idx with only job_table and
-- available_at as bounds, 0.2-0.4 ms for one row among 2,000 queued.
--   - The running index is now (job_table, id) where running: the same index
--     for the reclaimer and the running counts (job_table first), and a write
--     to a running job by id is one probe of it.
--   - job_claim(id), job_reschedule, job_hold_reasons (the screen's read of
--     why a few queued jobs wait) and the update of a limited claim
--     (job_claim_next on a table with concurrency limits, by the ids admit()
--     took) compare the status with
--     (select 'queued'::public.job_status): a value the planner cannot use to
--     prove the claim index's predicate, so their update probes the primary
--     key (a status compared in a subquery is read once per statement).
--
-- Invariants: every function returns, raises and writes exactly as before;
-- only the access path changes. Claims in claim order (job_claim_next,
-- admit) still walk the claim index.
--
-- Breaks nothing. Rebuilding job_reclaim_idx scans every job table once and
-- holds writes to it meanwhile (0.19 s for a table of 1,000,000 finished jobs
-- here); CONCURRENTLY is not available on a partitioned table inside a
-- migration's transaction.

drop index supabase_jobs.job_reclaim_idx;
create index job_reclaim_idx on supabase_jobs.job (job_table, id) where status = 'running';

create or replace function public.job_claim(id uuid, job_table text default 'jobs', heartbeat_ms integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  if heartbeat_ms is not null then
    perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  end if;
  if exists (select 1 from supabase_jobs.kind_limits l where l.job_table = label) then
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.claim:' || label, 0));
    if not exists (select 1 from supabase_jobs.admissible(label, array[job_claim.id])) then
      return;
    end if;
  end if;
  -- The status in a subquery: by id through the primary key, never the claim index (see above).
  return query
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim.heartbeat_ms
   where t.job_table = label and t.id = job_claim.id and t.status = (select 'queued'::public.job_status)
     and t.available_at <= now() and t.attempts < t.max_attempts
     and (t.expires_at is null or t.expires_at > now())
  returning t.*;
end
$$;

create or replace function public.job_reschedule(id uuid, run_at timestamptz default null, delay interval default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  starts timestamptz := supabase_jobs.start_time(run_at, delay);
  result supabase_jobs.job;
  current_status public.job_status;
begin
  perform supabase_jobs.check_call(id);
  -- The status in a subquery: by id through the primary key, never the claim index.
  update supabase_jobs.job as t set available_at = starts
   where t.job_table = label and t.id = job_reschedule.id and t.status = (select 'queued'::public.job_status)
  returning t.* into result;
  if result.id is not null then
    result.payload := null;
    return result;
  end if;
  select j.status into current_status from supabase_jobs.job j where j.job_table = label and j.id = job_reschedule.id;
  if current_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  elsif current_status = 'cancelled' then
    raise exception using errcode = 'PT410', message = pg_catalog.format('job %s was cancelled; it cannot be rescheduled', id);
  end if;
  raise exception using errcode = 'PT409',
    message = pg_catalog.format('job %s is %s: only a queued job can be rescheduled', id, current_status);
end
$$;

-- The screen's "why is it waiting" read of a few queued jobs by id: the same
-- trap (it walked the claim index), the same way out.
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
     where j.job_table = label and j.id = any (ids) and j.status = (select 'queued'::public.job_status)
       and j.available_at <= now();
  else
    return query
    select j.id, j.kind, h.held_by, h.running, h.max_running
      from supabase_jobs.job j
      cross join lateral supabase_jobs.hold_of_job(j.id) h
     where j.job_table = label and j.id = any (ids) and j.status = (select 'queued'::public.job_status)
       and j.available_at <= now();
  end if;
end
$$;

-- The limited claim updates the ids admit() took: the same trap, the same way out.
create or replace function public.job_claim_next(kinds text[] default null, "limit" integer default 1, job_table text default 'jobs', heartbeat_ms integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  if heartbeat_ms is not null then
    perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  end if;
  if not exists (select 1 from supabase_jobs.kind_limits l where l.job_table = label) then
    -- The picked ids as an array: the update probes the primary key for each.
    -- (Joined to the pick, the generic plan, which cannot know "limit", chose a
    -- hash join over a sequential scan of the table below some 30,000 rows.)
    return query
    update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms
     where t.job_table = label
       and t.id = any (array(
         select n.id from supabase_jobs.job as n
          where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
            and (kinds is null or n.kind = any (kinds))
            and (n.expires_at is null or n.expires_at > now())
          order by n.priority desc, n.available_at, n.created_at, n.id
          limit "limit"
          for update skip locked))
    returning t.*;
    return;
  end if;
  -- Limited: one claimer of this table at a time; admit() takes the jobs that
  -- may start, locked, in claim order. The status in a subquery: each admitted
  -- id through the primary key, never the claim index (20261205010000).
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.claim:' || label, 0));
  return query
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms
    from supabase_jobs.admit(label, job_claim_next.kinds, "limit") as a(id)
   where t.job_table = label and t.id = a.id and t.status = (select 'queued'::public.job_status)
  returning t.*;
end
$$;
