-- supabase-jobs — a job's updated_at only moves forward, in the order its changes commit.
--
-- Purpose: the guard stamped updated_at with now(), the start of the writing
-- transaction. A transaction that began before another but reached the row
-- after it (a user's cancel that opened, set its claims, then waited for the
-- worker's tick to release the row) wrote an updated_at older than the one
-- already there. Watchers order states by updated_at and keep the newest, so
-- they threw the cancelled row away as stale and showed "running" for ever.
-- Found by the chaos run (test/chaos/load.test.ts) in CI.
--
-- Invariant: every write that stamps a job's updated_at (the guard on a
-- change of status, job_tick) sets it strictly later than the value it
-- replaces: now(), as before, unless the row already holds now() or later,
-- then one microsecond past it. The row is locked while it is written, so
-- the old value is the last committed one: updated_at grows in commit order,
-- and Realtime messages carry the same value, so "newest updated_at wins"
-- is commit order. In the common case the value is unchanged (now(), equal
-- to finished_at or started_at written by the same statement).
--
-- The guard runs on status changes (and on queued or ended rows); the only
-- other writer of updated_at is job_tick, restated below with the same rule.
--
-- Breaks nothing: same trigger, same checks, same signatures and grants; only
-- the value of updated_at on update changes (created_at, started_at,
-- finished_at and heartbeat_at keep now()).

-- The guard of 20261202090000_worker_eta.sql, never stamping updated_at at or before the old value.
create or replace function supabase_jobs.guard_job_update()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  restricted boolean := pg_catalog.row_security_active(tg_relid);
begin
  if supabase_jobs.is_terminal(old.status) then
    if (pg_catalog.to_jsonb(new) - 'is_active' - 'updated_at') is distinct from (pg_catalog.to_jsonb(old) - 'is_active' - 'updated_at') then
      raise exception using errcode = 'SJ001',
        message = pg_catalog.format('job %s is %s, a terminal state: it cannot change', old.id, old.status),
        hint = 'Enqueue a new job to run the work again.';
    end if;
    new.updated_at := greatest(now(), old.updated_at + interval '1 microsecond');
    return new;
  end if;

  if restricted then
    -- A user cancels their job, or moves the start of one still queued; nothing else.
    if not ((new.status = 'cancelled'
             and (pg_catalog.to_jsonb(new) - 'status' - 'error' - 'updated_at') is not distinct from (pg_catalog.to_jsonb(old) - 'status' - 'error' - 'updated_at'))
         or (old.status = 'queued' and new.status = 'queued'
             and (pg_catalog.to_jsonb(new) - 'available_at' - 'updated_at') is not distinct from (pg_catalog.to_jsonb(old) - 'available_at' - 'updated_at'))) then
      raise exception using errcode = '42501',
        message = 'a user can only cancel their own jobs or reschedule them while queued; every other change is the worker''s';
    end if;
  end if;

  if new.status is distinct from old.status then
    if not supabase_jobs.can_transition(old.status, new.status) then
      raise exception using errcode = 'SJ001',
        message = pg_catalog.format('illegal transition for job %s: %s -> %s', old.id, old.status, new.status),
        hint = 'See docs/state-machine.md for the transitions and the job_* function that makes each.';
    end if;
    -- The estimate belongs to the attempt that wrote it.
    new.expected_end_at := null;
    case new.status
      when 'running' then
        new.started_at := now();
        new.heartbeat_at := now();
        new.progress := 0;
        new.stage := null;
      when 'queued' then
        new.started_at := null;
        new.heartbeat_at := null;
        new.progress := 0;
        new.stage := null;
      when 'done' then
        new.finished_at := now();
        new.payload := null;
        new.progress := 100;
        new.error := null;
        new.error_code := null;
      when 'failed' then
        new.finished_at := now();
        new.payload := null;
        new.error_code := coalesce(new.error_code, 'failed');
      when 'cancelled' then
        new.finished_at := now();
        new.payload := null;
        new.error_code := 'cancelled';
        new.error := coalesce(nullif(btrim(supabase_jobs.sentence(new.error)), ''), supabase_jobs.user_message('cancelled', old.locale));
      else
        null;
    end case;
  elsif old.status = 'queued' and not restricted then
    -- A queued row has nothing a worker may touch but its schedule.
    if (pg_catalog.to_jsonb(new) - 'available_at' - 'updated_at' - 'is_active') is distinct from (pg_catalog.to_jsonb(old) - 'available_at' - 'updated_at' - 'is_active') then
      raise exception using errcode = 'SJ001', message = pg_catalog.format('job %s is queued: claim it before writing progress or results', old.id);
    end if;
  end if;
  new.updated_at := greatest(now(), old.updated_at + interval '1 microsecond');
  return new;
end
$$;

-- ---------------------------------------------------------------------------
-- job_tick of 20261202090000_worker_eta.sql, stamping updated_at by the same rule.
create or replace function public.job_tick(id uuid, progress real default null, stage text default null, attempt integer default null,
                                job_table text default 'jobs', eta_seconds real default null)
returns public.job_status
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  updated public.job_status;
  current_status public.job_status;
  current_attempts int;
begin
  perform supabase_jobs.check_call(id, attempt);
  if progress is not null and (progress = 'NaN'::real or progress < 0 or progress > 100) then
    perform supabase_jobs.invalid('progress', pg_catalog.format('progress is a percentage between 0 and 100; got %s', progress));
  end if;
  if stage is not null and char_length(stage) > supabase_jobs.stage_max() then
    perform supabase_jobs.invalid('stage', pg_catalog.format('stage is at most %s characters', supabase_jobs.stage_max()));
  end if;
  -- A year either way: anything further is a unit mistake, not an estimate.
  if eta_seconds is not null and (eta_seconds = 'NaN'::real or abs(eta_seconds) > 31536000) then
    perform supabase_jobs.invalid('eta_seconds', pg_catalog.format('eta_seconds is a number of seconds within a year; got %s', eta_seconds));
  end if;
  -- Progress never decreases within an attempt: greatest() keeps the bar
  -- honest even when two ticks arrive out of order.
  update supabase_jobs.job as t
     set progress = greatest(t.progress, coalesce(job_tick.progress, t.progress)),
         stage = coalesce(job_tick.stage, t.stage), heartbeat_at = now(), updated_at = greatest(now(), t.updated_at + interval '1 microsecond'),
         expected_end_at = case when eta_seconds is null then t.expected_end_at
                                else now() + pg_catalog.make_interval(secs => eta_seconds) end
   where t.job_table = label and t.id = job_tick.id and t.status = 'running'
     and (attempt is null or t.attempts = attempt)
  returning t.status into updated;
  if updated is not null then
    return updated;
  end if;
  select j.status, j.attempts into current_status, current_attempts
    from supabase_jobs.job j where j.job_table = label and j.id = job_tick.id;
  if current_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  elsif current_status = 'running' and attempt is not null and current_attempts <> attempt then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'tick');
  elsif current_status = 'queued' and attempt is not null then
    -- Reclaimed after this worker went quiet: it is no longer this worker's job.
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'tick');
  end if;
  return current_status;
end
$$;
