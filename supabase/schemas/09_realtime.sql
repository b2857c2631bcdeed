-- Realtime messages: each visible change of a job (status, progress, stage,
-- available_at) is broadcast on private topics, job:<id> and, for an owned
-- job, jobs:<owner id>; several jobs of one owner changed at once coalesce
-- into list messages (send_job_messages). A broadcast that fails is a warning,
-- never a failed write. Who may read a topic: 14_security.

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
comment on function supabase_jobs.after_jobs_updated is
  'AFTER UPDATE statement trigger on supabase_jobs.job and on every job table: a Realtime message per visible change (status, progress, stage) to job:<id>, one list message per owner to jobs:<owner>. Never params or payload. Built from the transition tables in one INSERT.';

create trigger after_jobs_updated after update on supabase_jobs.job
  referencing old table as old_rows new table as new_rows
  for each statement execute function supabase_jobs.after_jobs_updated();
