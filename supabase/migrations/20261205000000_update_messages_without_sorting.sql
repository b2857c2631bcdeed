-- supabase-jobs — a job update's messages without a sort when nothing coalesces.
--
-- Purpose (issue 10): after_jobs_updated built every statement's messages with
-- one query that sorted the changed rows by owner, counted them in two windows
-- and grouped them, so that an owner with several changed rows gets one list
-- message per 100 of them instead of one each. Almost every statement has
-- nothing to coalesce: a claim, close or tick of one job, or of a worker's
-- batch of jobs no user owns. For those the sort, windows and grouping were
-- most of the trigger's cost. Now the trigger first finds, in one pass, the
-- rows whose status, progress, stage or available_at changed (none: nothing
-- to send, as for a heartbeat) and how many of them are owned:
--   - at most one: each changed row goes to its job topic, and the owned one to
--     its owner's topic too, as a 'job' event (what the grouping gave for an
--     owner with one row), from one query with no sort;
--   - more: supabase_jobs.send_job_messages, the coalescing builder enqueue
--     already uses, sends them, reading the changed rows back by id (after the
--     update, the table holds what new_rows holds).
-- Measured: one backend, 2,800 x (job_claim(id) + job_succeed), one commit
-- each, 4 runs interleaved with the previous trigger on one server: 478-537 ->
-- 425-469 us per job (about 11% less); 975 x (job_claim_next(null, 8) +
-- job_succeed_many) of jobs no user owns: 189-197 -> 178-189 us per job (5%).
-- Finding the changed rows once (then the insert reads them by id) and
-- returning early when there are none, against the first form of this
-- trigger: a heartbeat-only job_tick 198-207 -> 185-189 us, the per-job loop
-- 2-6% less in 4 interleaved pairs.
--
-- Invariants: the same messages on the same topics with the same payloads: a
-- row whose status, progress, stage and available_at did not change sends none;
-- a broadcast that fails is a warning (ErrorSendingBroadcastMessage), never a
-- failed update. The message shape is still written in the builders that
-- restate it (test/realtime/security.test.ts compares them).
--
-- Breaks nothing: the function is replaced in place; triggers are unchanged.

create or replace function supabase_jobs.after_jobs_updated()
returns trigger
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  owned bigint;
  changed uuid[];
begin
  begin
    -- The rows whose screen changed, found once; a heartbeat changes none and sends nothing.
    select pg_catalog.count(n.owner_id), pg_catalog.array_agg(n.id) into owned, changed
      from new_rows n join old_rows o on o.id = n.id
     where n.status is distinct from o.status or n.progress is distinct from o.progress or n.stage is distinct from o.stage
        or n.available_at is distinct from o.available_at;
    if changed is null then
      return null;
    end if;
    if owned > 1 then
      perform supabase_jobs.send_job_messages(changed, true);
      return null;
    end if;
    insert into realtime.messages (payload, event, topic, private, extension)
    select m.message, 'job', t.topic, true, 'broadcast'
      from new_rows n
     cross join lateral (select pg_catalog.jsonb_build_object(
               'id', n.id, 'kind', n.kind, 'status', n.status, 'progress', n.progress, 'stage', n.stage,
               'error', n.error, 'error_code', n.error_code, 'result_id', n.result_id,
               'attempts', n.attempts, 'max_attempts', n.max_attempts,
               'created_at', n.created_at, 'updated_at', n.updated_at, 'started_at', n.started_at, 'finished_at', n.finished_at,
               'heartbeat_ms', n.heartbeat_ms, 'available_at', n.available_at, 'tags', n.tags,
               'expected_end_at', n.expected_end_at,
               'locale', n.locale, 'owner_id', n.owner_id, 'job_table', n.job_table) as message) as m
     cross join lateral (values ('job:' || n.id), ('jobs:' || n.owner_id)) as t(topic)
     where n.id = any (changed) and t.topic is not null;
  exception when others then
    raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;
  return null;
end
$$;
