-- supabase-jobs — fewer and shorter row-trigger conditions on a job update.
--
-- Purpose (issue 10): PostgreSQL reads the WHEN clause of every row trigger an
-- UPDATE may fire back from its stored text and prepares it once per statement
-- (TriggerEnabled -> stringToNode), and copies the table's trigger descriptor,
-- WHEN text included, per statement (CopyTriggerDesc). The six UPDATE row
-- triggers of a job table carried 8 KB of WHEN text, and a claim or a close of
-- one job paid for all of it; now 3.6 KB:
--   - keep_parent_progress (BEFORE UPDATE, the longest WHEN) is folded into
--     guard_job_update, which fires on every status change and ran just before
--     it: a parent resumed after its children keeps the progress they earned,
--     on the same two steps;
--   - notify_resumed and notify_requeued ran one function; one trigger,
--     notify_requeued, now fires on running or waiting -> queued;
--   - after_child_changed fires on any update of a child (parent_id is not null)
--     and returns at once unless its status, progress or stage changed;
--     cancel_children fires on a cancelled row and returns unless it was not
--     cancelled before. The same conditions, tested in the function.
-- Measured: pgbench, the per-job path (job_claim(id) + job_succeed, 8 clients),
-- interleaved with the previous schema on one server, server CPU per job,
-- medians: 1.09 -> 1.045 ms and 1.40 -> 1.31 ms in two series of 5-6 runs
-- (about 5% less).
--
-- Invariants: every update behaves as before: the guard first (the only BEFORE
-- UPDATE row trigger now), the same progress kept, the same notifications, the
-- same parent and child updates, in the same order (AFTER row triggers fire by
-- name: after_child_changed, cancel_children, notify_requeued).
--
-- Breaks nothing for callers. Dropped: the triggers keep_parent_progress and
-- notify_resumed, and the function supabase_jobs.keep_parent_progress(). Every
-- job table (partition) follows its parent's row triggers.

-- ---------------------------------------------------------------------------
-- The guard, restated from 20261202090000_worker_eta.sql with the parent's
-- progress kept on its way back.
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
        -- A parent resumed after its children keeps the progress they earned
        -- (here and on waiting -> queued below; was the trigger keep_parent_progress).
        new.progress := case when old.status = 'queued' and new.resumed_at is not null then old.progress else 0 end;
        new.stage := null;
      when 'queued' then
        new.started_at := null;
        new.heartbeat_at := null;
        new.progress := case when old.status = 'waiting' then old.progress else 0 end;
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

drop trigger keep_parent_progress on supabase_jobs.job;
drop function supabase_jobs.keep_parent_progress();

-- ---------------------------------------------------------------------------
-- A requeued or resumed job is claimable again: listening workers hear it.
drop trigger notify_resumed on supabase_jobs.job;
drop trigger notify_requeued on supabase_jobs.job;
create trigger notify_requeued after update of status on supabase_jobs.job for each row
  when (new.status = 'queued' and old.status in ('running', 'waiting'))
  execute function supabase_jobs.notify_requeued_job();

-- ---------------------------------------------------------------------------
-- A child's change, restated from 20261202100100_parent_child_jobs.sql with the
-- WHEN's test of what changed moved inside.
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
  -- Only a change the parent shows: status, progress or stage (was the trigger's WHEN).
  if tg_op = 'UPDATE' and old.status is not distinct from new.status and old.progress is not distinct from new.progress
     and old.stage is not distinct from new.stage then
    return null;
  end if;
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

drop trigger after_child_changed on supabase_jobs.job;
create trigger after_child_changed after update on supabase_jobs.job for each row
  when (new.parent_id is not null)
  execute function supabase_jobs.after_child_changed();

-- ---------------------------------------------------------------------------
-- Cancelling a job cancels its children that have not ended (restated from
-- 20261202100100_parent_child_jobs.sql with the WHEN's old-status test inside).
create or replace function supabase_jobs.cancel_children()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- Only the step into cancelled (was the trigger's WHEN): hiding a cancelled row is no cancel.
  if old.status = 'cancelled' then
    return null;
  end if;
  update supabase_jobs.job as c set status = 'cancelled', error = new.error
   where c.job_table = new.job_table and c.parent_id = new.id and c.status in ('queued', 'running', 'waiting');
  return null;
end
$$;

drop trigger cancel_children on supabase_jobs.job;
create trigger cancel_children after update on supabase_jobs.job for each row
  when (new.status = 'cancelled')
  execute function supabase_jobs.cancel_children();
