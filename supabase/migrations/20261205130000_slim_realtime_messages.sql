-- Slimmer Realtime messages.
-- 1. The body the view supabase_jobs.job_messages builds for each visible change
-- of a job carries only what a screen reads. Always: id, kind, status,
-- progress, attempts, max_attempts, job_table, created_at, updated_at,
-- available_at. Only when set (a key left out is null; tags: none): stage,
-- error, error_code, result_id, started_at, finished_at, heartbeat_ms,
-- expected_end_at, parent_id, tags, metadata, failed_for_good (only when
-- true: a watched job that fails for good is offered no Try again). Gone: owner_id (the topic
-- jobs:<owner> names it; job:<id> means none), locale and expected_seconds (no
-- screen reads them from a message), and every key of a null column.
-- 2. Each row written to realtime.messages (send_job_messages,
-- send_statement_messages, after_jobs_updated, send_stream_chunk) gets a
-- time-ordered id (UUID version 7, as a job's) instead of the table's default
-- gen_random_uuid(): it lands at the right edge of the (id, inserted_at)
-- primary key, not on a random page of it that is written whole to the WAL
-- after each checkpoint. Realtime only forwards the id to clients (meta.id).
-- Why: a message was about 550 bytes of JSON, two per job on the per-job path,
-- mostly nulls and columns no reader uses; each is a realtime.messages row
-- written to the WAL and replicated.
-- Breaks: a reader of realtime.messages or of the broadcasts that expects every
-- key (the package's own client, from this version, reads both shapes).

create or replace view supabase_jobs.job_messages with (security_invoker = true) as
  select j.job_table, j.id,
         case when j.owner_id is not null then 'jobs:' || j.owner_id
              else 'job:' || coalesce(j.parent_id, j.id) end as topic,
         pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
           'id', j.id, 'kind', j.kind, 'status', j.status, 'progress', j.progress,
           'attempts', j.attempts, 'max_attempts', j.max_attempts, 'job_table', j.job_table,
           'created_at', j.created_at, 'updated_at', j.updated_at, 'available_at', j.available_at,
           'stage', j.stage, 'error', j.error, 'error_code', j.error_code, 'result_id', j.result_id,
           'started_at', j.started_at, 'finished_at', j.finished_at, 'heartbeat_ms', j.heartbeat_ms,
           'expected_end_at', j.expected_end_at, 'parent_id', j.parent_id, 'tags', nullif(j.tags, '{}'),
           'failed_for_good', nullif(j.failed_for_good, false)))
         -- Outside the strip: a null inside the handler's metadata is its own.
         || case when j.metadata is null then '{}'::jsonb
                 else pg_catalog.jsonb_build_object('metadata', j.metadata) end as body
    from supabase_jobs.job as j;
comment on view supabase_jobs.job_messages is
  'The one Realtime message of a job''s change, by job_table and id: its topic (jobs:<owner> when owned, else job:<parent> for a child, else job:<id>) and its body, the screen columns (never params or payload): id, kind, status, progress, attempts, max_attempts, job_table, created_at, updated_at, available_at always; stage, error, error_code, result_id, started_at, finished_at, heartbeat_ms, expected_end_at, parent_id, tags, failed_for_good and metadata only when set (a key left out is null; tags: none; failed_for_good: false). The owner is the topic''s. Read by the functions that send messages; granted to no one.';
comment on column supabase_jobs.job_messages.job_table is 'The job''s table label (with id, the row a message is of).';
comment on column supabase_jobs.job_messages.id is 'The job''s id.';
comment on column supabase_jobs.job_messages.topic is 'The one topic the job''s changes are sent on.';
comment on column supabase_jobs.job_messages.body is 'The message payload: the job''s screen columns as JSON, the keys of null ones left out.';

create or replace function supabase_jobs.send_job_messages(topics text[], payloads jsonb[])
returns void
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  -- The answer remembered for the session, else realtime_probe (a call of its own only then).
  if not (pg_catalog.now()::timestamp < coalesce(nullif(pg_catalog.current_setting('supabase_jobs.realtime_ready_until', true), '')::timestamp,
                                              '-infinity')
          or supabase_jobs.realtime_probe()) then
    raise warning 'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; % dropped', pg_catalog.cardinality(topics);
    return;
  end if;
  if pg_catalog.cardinality(topics) = 1 then
    insert into realtime.messages (id, payload, event, topic, private, extension)
    values (pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
              pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
                 operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
            payloads[1], 'job', topics[1], true, 'broadcast');
    return;
  end if;
  insert into realtime.messages (id, payload, event, topic, private, extension)
  select pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
           pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
             operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
         g.payload, g.event, g.topic, true, 'broadcast'
    from supabase_jobs.topic_messages(topics, payloads) as g;
end
$$;

create or replace function supabase_jobs.send_statement_messages(label text, ids uuid[])
returns integer
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  sent integer;
begin
  if ids is null or pg_catalog.cardinality(ids) = 0 then
    return 0;
  end if;
  -- The mark after_jobs_updated (19) reads to leave these rows' messages to
  -- this insert: this transaction (its id is assigned: the rows were just
  -- written) and the trigger depth at which the statement's row triggers run.
  -- Only those triggers match it: a row a trigger updates (a child's parent)
  -- fires one level deeper and sends its own; the caller clears the mark once
  -- its statement is done, and a rollback to before the statement clears it too.
  perform pg_catalog.set_config('supabase_jobs.statement_messages',
    pg_catalog.concat(pg_catalog.pg_current_xact_id_if_assigned(), ' ', pg_catalog.pg_trigger_depth() + 1), true);
  -- The answer remembered for the session, else realtime_probe (a call of its own only then).
  if not (pg_catalog.now()::timestamp < coalesce(nullif(pg_catalog.current_setting('supabase_jobs.realtime_ready_until', true), '')::timestamp,
                                              '-infinity')
          or supabase_jobs.realtime_probe()) then
    raise warning 'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; % dropped', pg_catalog.cardinality(ids);
    return 0;
  end if;
  -- The rows as the statement left them (its row triggers have not run yet). One job (a claim or
  -- close by id, the per-job path) is one message: no grouping to pay for.
  if pg_catalog.cardinality(ids) = 1 then
    insert into realtime.messages (id, payload, event, topic, private, extension)
    select pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
             pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
               operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
           m.body, 'job', m.topic, true, 'broadcast'
      from supabase_jobs.job_messages as m
     where m.job_table = label and m.id = ids[1];
    get diagnostics sent = row_count;
    return sent;
  end if;
  -- Several, grouped by topic: a claim or close of many jobs of one owner is a few list messages,
  -- not one per job.
  insert into realtime.messages (id, payload, event, topic, private, extension)
  select pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
           pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
             operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
         g.payload, g.event, g.topic, true, 'broadcast'
    from (select pg_catalog.array_agg(m.topic) as topics, pg_catalog.array_agg(m.body) as payloads
            from supabase_jobs.job_messages as m
           where m.job_table = label and m.id = any (ids)) as a
   cross join lateral supabase_jobs.topic_messages(a.topics, a.payloads) as g
   where a.topics is not null;
  get diagnostics sent = row_count;
  return sent;
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
  j supabase_jobs.job;
begin
  if not (new.status is distinct from old.status or new.progress is distinct from old.progress
          or new.stage is distinct from old.stage or new.available_at is distinct from old.available_at
          or new.metadata is distinct from old.metadata) then
    return null;
  end if;
  j := row(new.*)::supabase_jobs.job;
  if new.parent_id is not null and (new.status is distinct from old.status or new.progress is distinct from old.progress
                                    or new.stage is distinct from old.stage) then
    perform supabase_jobs.child_changed(j, new.status in ('done', 'failed', 'cancelled') and old.status not in ('done', 'failed', 'cancelled'));
  end if;
  if pg_catalog.current_setting('supabase_jobs.statement_messages', true)
     = pg_catalog.concat(pg_catalog.pg_current_xact_id_if_assigned(), ' ', pg_catalog.pg_trigger_depth())
     or pg_catalog.current_setting('supabase_jobs.handled', true)
     = pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth() - 1, ' sent') then
    null; -- the statement sent it with its others (send_statement_messages, 09)
  elsif pg_catalog.now()::timestamp < coalesce(nullif(pg_catalog.current_setting('supabase_jobs.realtime_ready_until', true), '')::timestamp,
                                               '-infinity')
        or supabase_jobs.realtime_probe() then
    -- Whether realtime.messages can take it: the answer remembered for the session, else realtime_probe.
    -- Its id time-ordered, as every message's (09).
    insert into realtime.messages (id, payload, event, topic, private, extension)
    select pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
             pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
               operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
           m.body, 'job', m.topic, true, 'broadcast' from supabase_jobs.job_messages as m
     where m.job_table = new.job_table and m.id = new.id;
  else
    raise warning 'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; 1 dropped';
  end if;
  if new.status is distinct from old.status then
    if new.status in ('done', 'failed', 'cancelled') and old.status not in ('done', 'failed', 'cancelled')
       and (old.status = 'waiting' or new.resumed_at is not null) then
      perform supabase_jobs.forget_questions(new.id);
    end if;
    if new.status = 'queued' and old.status in ('running', 'waiting') then
      perform supabase_jobs.notify_requeued(new.job_table, new.kind, new.id, new.available_at);
    end if;
    if (old.status = 'running' and new.status in ('queued', 'waiting')) or (old.status = 'waiting' and new.status = 'queued')
       or new.status = 'cancelled' then
      perform supabase_jobs.record_job_event(row(old.*)::supabase_jobs.job, j);
    end if;
  elsif new.status = 'queued' and new.available_at is distinct from old.available_at then
    -- A queued job moved to another time (job_reschedule): the same news as a requeue.
    perform supabase_jobs.notify_requeued(new.job_table, new.kind, new.id, new.available_at);
  end if;
  return null;
end
$$;

create or replace function supabase_jobs.send_stream_chunk(j supabase_jobs.job, payload jsonb)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if supabase_jobs.realtime_probe() then
    -- On the job's one topic (job_messages decides it), as its own event; its id time-ordered, as every message's (09).
    insert into realtime.messages (id, payload, event, topic, private, extension)
    select pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
             pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
               operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
           send_stream_chunk.payload, 'job_stream', m.topic, true, 'broadcast'
      from supabase_jobs.job_messages as m where m.job_table = j.job_table and m.id = j.id;
  else
    raise warning 'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; 1 dropped';
  end if;
end
$$;
