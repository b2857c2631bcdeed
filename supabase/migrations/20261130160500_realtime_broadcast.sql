-- supabase-jobs 0008 — Realtime: Broadcast from Database for every job table.
--
-- Purpose: a screen following a job (JobStore.watch over supabase-js) or a
-- "queued or running" strip (JobStore.subscribeList) learns about a change
-- the moment it commits, with no database query per tick. Every job table
-- gets two row triggers that call realtime.send(payload, 'job', topic, private => true):
--   * broadcast_inserted: AFTER INSERT (a new queued job);
--   * broadcast_changed:  AFTER UPDATE ... WHEN status, progress or stage changed.
--     The WHEN clause is evaluated without calling the function, so heartbeats
--     and schedule changes cost nothing and send nothing.
-- Each change goes to two private topics:
--   * 'job:<id>'        one job (the watch of a job page);
--   * 'jobs:<owner_id>' every job of one user (list views); not sent for jobs
--                       without an owner.
-- Message (event 'job', JSON object), only what a screen shows:
--   {id, kind, status, progress, stage, error, error_code, result_id, attempts,
--    max_attempts, created_at, updated_at, started_at, finished_at, locale,
--    owner_id, job_table}
--   job_table is "jobs" | "<schema>.<name>" (as the job_* functions take it),
--   so a list of one table can ignore the others on the shared owner topic.
--
-- Invariants:
--   * params and payload are NEVER broadcast (payload can be megabytes of a
--     user's document, params can hold anything): the message is built column
--     by column, never from to_jsonb(new);
--   * a rolled-back change broadcasts nothing (realtime.messages rows are
--     streamed after commit), and a failure to broadcast never aborts the
--     write (realtime.send turns its own errors into a WARNING);
--   * users' inserts and cancels fire the triggers without any right on
--     realtime.messages: the trigger function is SECURITY DEFINER (owner
--     postgres, which has BYPASSRLS on Supabase) in the non-exposed schema
--     supabase_jobs, search_path = '', EXECUTE revoked from public, anon and
--     authenticated (a trigger function's EXECUTE right is checked only when
--     the trigger is created);
--   * Realtime Authorization (RLS on realtime.messages, select to
--     authenticated, extension 'broadcast'): a user may join 'job:<id>' only
--     for a job they own, in any registered job table
--     (supabase_jobs.owns_job_topic), and 'jobs:<uid>' only for their own uid.
--     anon may join neither. No insert policy: nobody may broadcast on these
--     topics from a client, so nobody can forge a job's progress.
--     Note: RLS policies are permissive and OR-ed. A project policy on
--     realtime.messages that lets authenticated read every topic also opens
--     these ones; keep such policies limited to your own topic names.
--   * clients must subscribe with `private: true` (public channels never see
--     these messages) and re-read the row once SUBSCRIBED: changes committed
--     before the join are not replayed.
-- Breaking: no. Registers the attach_broadcast installer (the two broadcast
-- triggers), which add_attachment also runs over every registered job table.

-- ---------------------------------------------------------------------------
-- The trigger function: one message, to the job's topic and its owner's.
create function supabase_jobs.broadcast_job_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  message jsonb := pg_catalog.jsonb_build_object(
    'id', new.id,
    'kind', new.kind,
    'status', new.status,
    'progress', new.progress,
    'stage', new.stage,
    'error', new.error,
    'error_code', new.error_code,
    'result_id', new.result_id,
    'attempts', new.attempts,
    'max_attempts', new.max_attempts,
    'created_at', new.created_at,
    'updated_at', new.updated_at,
    'started_at', new.started_at,
    'finished_at', new.finished_at,
    'locale', new.locale,
    'owner_id', new.owner_id,
    -- The same label as supabase_jobs.table_label, from the trigger's own variables.
    'job_table', case when tg_table_schema = 'public' then tg_table_name::text else tg_table_schema || '.' || tg_table_name end);
begin
  perform realtime.send(message, 'job', 'job:' || new.id::text, private => true);
  if new.owner_id is not null then
    perform realtime.send(message, 'job', 'jobs:' || new.owner_id::text, private => true);
  end if;
  return null;
end
$$;
comment on function supabase_jobs.broadcast_job_change() is
  'AFTER INSERT / AFTER UPDATE (when status, progress or stage changed) row trigger on every job table: realtime.send of the screen columns (never params or payload) to the private topics job:<id> and jobs:<owner_id>.';
revoke all on function supabase_jobs.broadcast_job_change() from public, anon, authenticated;

-- ---------------------------------------------------------------------------
-- Realtime Authorization: may the caller read this topic?
create function supabase_jobs.owns_job_topic(topic text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  uid uuid := (select auth.uid());
  job_id uuid;
  tbl regclass;
  owned boolean;
begin
  if uid is null or topic is null then
    return false;
  end if;
  if topic = 'jobs:' || uid::text then
    return true;
  end if;
  if topic !~ '^job:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    return false;
  end if;
  job_id := pg_catalog.substr(topic, 5)::uuid;
  -- Ownership is checked here, across every registered job table (this runs
  -- as the owner, so RLS does not do it for us). One primary-key probe each.
  for tbl in select t.table_name from supabase_jobs.job_tables t loop
    execute pg_catalog.format('select exists (select 1 from %s j where j.id = $1 and j.owner_id = $2)', tbl)
      into owned using job_id, uid;
    if owned then
      return true;
    end if;
  end loop;
  return false;
end
$$;
comment on function supabase_jobs.owns_job_topic(text) is
  'True when the caller (auth.uid()) may read Realtime topic job:<id> (they own that job, in any job table) or jobs:<uid> (their own list). Used by the realtime.messages policy supabase_jobs_read_job_topics.';
revoke all on function supabase_jobs.owns_job_topic(text) from public, anon;
grant execute on function supabase_jobs.owns_job_topic(text) to authenticated;

drop policy if exists supabase_jobs_read_job_topics on realtime.messages;
create policy supabase_jobs_read_job_topics on realtime.messages
  for select to authenticated
  using (
    extension = 'broadcast'
    and (select supabase_jobs.owns_job_topic((select realtime.topic())))
  );

-- ---------------------------------------------------------------------------
-- Per job table: the broadcast triggers (insert; status/progress/stage changes).
create function supabase_jobs.attach_broadcast(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
begin
  -- No UPDATE OF column list: guard_job (BEFORE) derives progress and stage
  -- from the status, and UPDATE OF only sees the statement's SET list.
  execute format('drop trigger if exists broadcast_inserted on %s', tbl);
  execute format('create trigger broadcast_inserted after insert on %s for each row execute function supabase_jobs.broadcast_job_change()', tbl);
  execute format('drop trigger if exists broadcast_changed on %s', tbl);
  execute format('create trigger broadcast_changed after update on %s for each row when (old.status is distinct from new.status or old.progress is distinct from new.progress or old.stage is distinct from new.stage) execute function supabase_jobs.broadcast_job_change()', tbl);
end
$$;
revoke all on function supabase_jobs.attach_broadcast(regclass) from public;
select supabase_jobs.add_attachment('broadcast', 'supabase_jobs.attach_broadcast(regclass)', 30);
