-- Realtime messages: each visible change of a job (status, progress, stage,
-- available_at) is one message on one private topic (job_topic): jobs:<owner
-- id> for an owned job, job:<parent id> for an ownerless child, job:<id> for
-- any other job. Several changes of one statement on one topic go as list
-- messages of up to 100 (send_job_messages, the one builder). A broadcast that
-- fails is a warning, never a failed write. Who may read a topic: 14_security.

create or replace function supabase_jobs.send_job_messages(ids uuid[])
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
             'locale', j.locale, 'owner_id', j.owner_id, 'job_table', j.job_table)
           || case when j.parent_id is null then '{}'::jsonb
                   else pg_catalog.jsonb_build_object('parent_id', j.parent_id, 'expected_seconds', j.expected_seconds) end
             as message,
           j.id, j.job_table,
           case when j.owner_id is not null then 'jobs:' || j.owner_id else 'job:' || coalesce(j.parent_id, j.id) end as topic
      from supabase_jobs.job as j
     where j.id = any (ids)),
  counted as (
    select c.*, pg_catalog.count(*) over (partition by c.topic) as on_topic,
           (pg_catalog.row_number() over (partition by c.topic order by c.id) - 1) / 100 as chunk
      from changed c)
  select c.message, 'job', c.topic, true, 'broadcast' from counted c where c.on_topic = 1
  union all
  select pg_catalog.jsonb_build_object('job_table', pg_catalog.min(c.job_table), 'jobs', pg_catalog.jsonb_agg(c.message order by c.id)),
         'jobs', c.topic, true, 'broadcast'
    from counted c
   where c.on_topic > 1
   group by c.topic, c.chunk;
exception when others then
  raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
end
$$;
comment on function supabase_jobs.send_job_messages is
  'The one Realtime message builder: for each job of ids, its screen columns (never params or payload; parent_id and expected_seconds for a child) on its one topic: jobs:<owner> when owned, else job:<parent> for a child, else job:<id>. Several jobs of one topic go as ''jobs'' list messages of up to 100. A failed insert is a warning.';

create or replace function supabase_jobs.after_jobs_updated()
returns trigger
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  changed uuid[];
begin
  -- The rows whose screen changed, found once; a heartbeat changes none and sends nothing.
  select pg_catalog.array_agg(n.id) into changed
    from new_rows n join old_rows o on o.id = n.id
   where n.status is distinct from o.status or n.progress is distinct from o.progress or n.stage is distinct from o.stage
      or n.available_at is distinct from o.available_at;
  if changed is not null then
    perform supabase_jobs.send_job_messages(changed);
  end if;
  return null;
end
$$;
comment on function supabase_jobs.after_jobs_updated is
  'AFTER UPDATE statement trigger on supabase_jobs.job and on every job table: one Realtime message per visible change (status, progress, stage, available_at) on the job''s one topic (send_job_messages). A heartbeat sends nothing.';

create trigger after_jobs_updated after update on supabase_jobs.job
  referencing old table as old_rows new table as new_rows
  for each statement execute function supabase_jobs.after_jobs_updated();
