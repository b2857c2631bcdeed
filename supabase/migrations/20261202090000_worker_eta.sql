-- supabase-jobs: the worker's estimate of the end, on the row with the progress.
--
-- Purpose: "how much longer?" is best answered by the worker, which knows its
-- PhasePlan (declared or fitted from history), the sizes and the phase it is
-- in. It now sends that estimate with each progress tick (eta_seconds), and
-- job_tick stores it as expected_end_at in the same UPDATE: no extra write, no
-- extra message (it rides on the Realtime message the progress already sends).
--
-- Invariants:
--   * expected_end_at is the database's time (now() + eta_seconds at the tick),
--     so a watcher compares it with updated_at, also the database's: a browser
--     with a wrong clock still counts right.
--   * A value before the tick's updated_at means the worker's current phase has
--     run past its measured time: the screen says "taking longer than usual".
--   * It belongs to the running attempt: any change of status clears it, so a
--     retry or a finished job never shows the previous attempt's estimate.
--   * A tick without eta_seconds keeps the stored estimate (heartbeats, old workers).
--   * Heartbeat-only ticks still send no message: a new estimate alone is not
--     a visible change; it travels with the next progress, stage or status.
--
-- Also, in the two functions this migration restates anyway (the guard and
-- job_tick): updated_at follows commit order. Both stamped now(), the start of
-- the writing transaction, so a user's cancel that began before the worker's
-- last tick but reached the row after it wrote an older updated_at than the
-- tick's, and watchers (which keep the newest state by updated_at) dropped the
-- cancelled row as stale (found by the chaos run, test/chaos/load.test.ts).
-- They now stamp greatest(now(), old updated_at + 1 microsecond): the row is
-- locked while it is written, so updated_at grows in commit order, and in the
-- common case it is still now(). Realtime messages carry the same value.
--
-- Breaks: job_tick gains a trailing eta_seconds argument (callers by name are
-- unaffected). The Realtime job messages gain expected_end_at (readers that
-- ignore unknown keys are unaffected). updated_at changes only when a later
-- transaction had already written the row.

alter table supabase_jobs.job add column expected_end_at timestamptz;
comment on column supabase_jobs.job.expected_end_at is
  'When the worker running this attempt expects it to end, from its phase plan (written by job_tick with the progress). Earlier than updated_at: the current phase is running past its measured time. Null: no estimate; cleared on every status change.';

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
-- The guard clears the estimate on any change of status, and never stamps
-- updated_at at or before the old value. Unchanged otherwise (restated from
-- 20261201030000_enqueue_options.sql).
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
-- The tick takes the worker's estimate (seconds from now; negative: the
-- current phase overran its measured time by that much).
drop function public.job_tick(uuid, real, text, integer, text);
create function public.job_tick(id uuid, progress real default null, stage text default null, attempt integer default null,
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
comment on function public.job_tick(uuid, real, text, integer, text, real) is
  'One round trip per tick: writes progress (never backwards), stage, heartbeat and the worker''s estimate of the end (eta_seconds from now -> expected_end_at) on a running job and returns its status; cancelled comes back so the worker stops.';
revoke all on function public.job_tick(uuid, real, text, integer, text, real) from public, anon, authenticated;
grant execute on function public.job_tick(uuid, real, text, integer, text, real) to service_role;

-- ---------------------------------------------------------------------------
-- Messages carry the estimate. Both message builders restated from
-- 20261201045000 / 20261201030000 with expected_end_at added; the shape stays
-- written the same way in both (test/realtime/security.test.ts compares them).
create or replace function supabase_jobs.after_jobs_updated()
returns trigger
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  begin
    insert into realtime.messages (payload, event, topic, private, extension)
    with changed as materialized (
      select pg_catalog.jsonb_build_object(
               'id', n.id, 'kind', n.kind, 'status', n.status, 'progress', n.progress, 'stage', n.stage,
               'error', n.error, 'error_code', n.error_code, 'result_id', n.result_id,
               'attempts', n.attempts, 'max_attempts', n.max_attempts,
               'created_at', n.created_at, 'updated_at', n.updated_at, 'started_at', n.started_at, 'finished_at', n.finished_at,
               'heartbeat_ms', n.heartbeat_ms, 'available_at', n.available_at, 'tags', n.tags,
               'expected_end_at', n.expected_end_at,
               'locale', n.locale, 'owner_id', n.owner_id, 'job_table', n.job_table) as message,
             n.id, n.owner_id, n.job_table,
             pg_catalog.count(*) over (partition by n.owner_id) as of_owner,
             (pg_catalog.row_number() over (partition by n.owner_id order by n.id) - 1) / 100 as chunk
        from new_rows n join old_rows o on o.id = n.id
       where n.status is distinct from o.status or n.progress is distinct from o.progress or n.stage is distinct from o.stage
          or n.available_at is distinct from o.available_at)
    select c.message, 'job', 'job:' || c.id, true, 'broadcast' from changed c
    union all
    select c.message, 'job', 'jobs:' || c.owner_id, true, 'broadcast' from changed c
     where c.owner_id is not null and c.of_owner = 1
    union all
    select pg_catalog.jsonb_build_object('job_table', pg_catalog.min(c.job_table), 'jobs', pg_catalog.jsonb_agg(c.message order by c.id)),
           'jobs', 'jobs:' || c.owner_id, true, 'broadcast'
      from changed c
     where c.owner_id is not null and c.of_owner > 1
     group by c.owner_id, c.chunk;
  exception when others then
    raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;
  return null;
end
$$;

create or replace function supabase_jobs.send_job_messages(ids uuid[], to_job_topic boolean)
returns void
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  insert into realtime.messages (payload, event, topic, private, extension)
  with changed as materialized (
    select pg_catalog.jsonb_build_object(
             'id', j.id, 'kind', j.kind, 'status', j.status, 'progress', j.progress, 'stage', j.stage,
             'error', j.error, 'error_code', j.error_code, 'result_id', j.result_id,
             'attempts', j.attempts, 'max_attempts', j.max_attempts,
             'created_at', j.created_at, 'updated_at', j.updated_at, 'started_at', j.started_at, 'finished_at', j.finished_at,
             'heartbeat_ms', j.heartbeat_ms, 'available_at', j.available_at, 'tags', j.tags,
             'expected_end_at', j.expected_end_at,
             'locale', j.locale, 'owner_id', j.owner_id, 'job_table', j.job_table) as message,
           j.id, j.owner_id, j.job_table,
           pg_catalog.count(*) over (partition by j.owner_id) as of_owner,
           (pg_catalog.row_number() over (partition by j.owner_id order by j.id) - 1) / 100 as chunk
      from supabase_jobs.job as j
     where j.id = any (ids))
  select c.message, 'job', 'job:' || c.id, true, 'broadcast' from changed c where to_job_topic
  union all
  select c.message, 'job', 'jobs:' || c.owner_id, true, 'broadcast' from changed c
   where c.owner_id is not null and c.of_owner = 1
  union all
  select pg_catalog.jsonb_build_object('job_table', pg_catalog.min(c.job_table), 'jobs', pg_catalog.jsonb_agg(c.message order by c.id)),
         'jobs', 'jobs:' || c.owner_id, true, 'broadcast'
    from changed c
   where c.owner_id is not null and c.of_owner > 1
   group by c.owner_id, c.chunk;
exception when others then
  raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
end
$$;
