-- supabase-jobs: the update trigger builds its Realtime messages from the statement's rows.
--
-- (Runs after 20261201030000_enqueue_options, whose columns the messages carry.)
--
-- Purpose: every claim, close and progress tick runs after_jobs_updated. It
-- collected the changed ids, then called send_job_messages(ids), which read
-- each row back from supabase_jobs.job by id (no job_table in that lookup, so
-- every partition's primary key was probed) inside a function with its own
-- SET search_path. Profiled with perf on the per-job path (claim by id +
-- succeed), that statement trigger was ~30% of the server's time. Now one
-- INSERT ... SELECT reads the transition tables directly: new_rows already
-- holds the statement's new state of every changed row.
--
-- Invariants (unchanged): one message per visible change (status, progress or
-- stage) to job:<id>, event 'job'; per owner, one message to jobs:<owner>:
-- event 'job' with the row when the statement changed one of their jobs, else
-- event 'jobs' with {job_table, jobs: [...]} in chunks of at most 100, ordered
-- by id. The message shape is written here exactly as in send_job_messages
-- (never params or payload; test/realtime/security.test.ts checks both paths
-- store the same columns). A rescheduled job (available_at moved) is a visible
-- change too: its bar says when it will start. Heartbeats send nothing. A failure to broadcast is
-- a WARNING; the write it describes stands. send_job_messages stays (the insert
-- trigger uses it).
--
-- Each keeps `set plan_cache_mode = force_generic_plan` (20261130210000 set it on
-- these hot functions; create or replace would otherwise drop it).
--
-- Breaks: nothing. SECURITY DEFINER, search_path and grants as before
-- (create or replace keeps them).

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
comment on function supabase_jobs.after_jobs_updated() is
  'AFTER UPDATE statement trigger on supabase_jobs.job and on every job table: a Realtime message per visible change (status, progress, stage) to job:<id>, one list message per owner to jobs:<owner>. Never params or payload. Built from the transition tables in one INSERT.';
