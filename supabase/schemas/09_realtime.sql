-- Realtime messages: each visible change of a job (status, progress, stage,
-- available_at, metadata) is one message on one private topic: jobs:<owner id> for an
-- owned job, job:<parent id> for an ownerless child, job:<id> for any other.
-- The view job_messages builds it (the one builder). An update sends one message per
-- changed row (after_jobs_updated, 19_job_updated); an insert statement's
-- go through send_job_messages, several on one topic as list messages (topic_messages: up to 100
-- jobs and about 200,000 bytes, under hosted Realtime's 256 KB); a batched claim or close sends its
-- rows' in one insert, grouped the same way (send_statement_messages).
-- Each message row gets its id from us, not from realtime.messages' default
-- (gen_random_uuid): a time-ordered UUID (version 7, as the job id, 03), so a
-- message lands at the right edge of that table's primary key (id,
-- inserted_at) instead of on a random page of it, which after each checkpoint
-- writes the whole page to the WAL. Realtime only forwards the id (meta.id).
-- Every insert into realtime.messages writes it the same way, inline (a
-- function would be a call per message).
-- A broadcast never fails a write: realtime_probe checks first that
-- realtime.messages can take the row (no subtransaction per statement); when
-- it cannot, the messages are dropped with a warning. Readers: the topic policy
-- at the end of this file (owns_job_topic).

create or replace function supabase_jobs.realtime_probe()
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
declare
  until text := pg_catalog.current_setting('supabase_jobs.realtime_ready_until', true);
  at timestamp := pg_catalog.now()::timestamp;
  tbl regclass;
  ready_until timestamp;
begin
  if until is not null and until <> '' and at < until::timestamp then
    return true;
  end if;
  tbl := pg_catalog.to_regclass('realtime.messages');
  if tbl is null or not pg_catalog.has_table_privilege(tbl, 'insert')
     or exists (select 1 from pg_catalog.pg_class c where c.oid = tbl and c.relrowsecurity)
        and not exists (select 1 from pg_catalog.pg_roles r where r.rolname = current_user and (r.rolsuper or r.rolbypassrls)) then
    return false;
  end if;
  if (select c.relkind from pg_catalog.pg_class c where c.oid = tbl) <> 'p' then
    ready_until := 'infinity';
  else
    -- A partitioned table (Supabase: one partition a day, made ahead by Realtime): the partition holding now.
    select pg_catalog.max(case when b.bound = 'DEFAULT' then 'infinity'::timestamp else b.range[2]::timestamp end)
      into ready_until
      from pg_catalog.pg_inherits i
      join pg_catalog.pg_class c on c.oid = i.inhrelid
     cross join lateral (select pg_catalog.pg_get_expr(c.relpartbound, c.oid) as bound) e
     cross join lateral (select e.bound,
                                pg_catalog.regexp_match(e.bound, '^FOR VALUES FROM \(''([^'']+)''\) TO \(''([^'']+)''\)$') as range) b
     where i.inhparent = tbl
       and (b.bound = 'DEFAULT' or (b.range is not null and b.range[1]::timestamp <= at and at < b.range[2]::timestamp));
  end if;
  if ready_until is null then
    return false;
  end if;
  perform pg_catalog.set_config('supabase_jobs.realtime_ready_until', ready_until::text, false);
  return true;
end
$$;
comment on function supabase_jobs.realtime_probe is
  'Looks whether realtime.messages can take a message now: it exists, the caller may insert (RLS bypassed), and a partition holds the current time; remembers the answer for the session until that partition ends. The functions and the trigger that send messages read the remembered answer themselves and call this only when none is left.';

-- The one message builder, a view: the planner inlines a view into every
-- statement that reads it (a function would be inlined only without a fixed
-- search_path). Its readers send messages of rows as a statement left them.
-- A message is a full snapshot of what a screen shows of the job: a key left
-- out means null (tags: none), never "unchanged". No owner_id (the topic
-- jobs:<owner> names it; a job:<id> topic means none), locale or
-- expected_seconds (no screen reads them from a message).
create view supabase_jobs.job_messages with (security_invoker = true) as
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

create or replace function supabase_jobs.topic_messages(topics text[], payloads jsonb[])
returns table (topic text, event text, payload jsonb)
language sql
stable
set search_path = ''
as $$
  -- A topic with one job: its 'job' message. A topic with several: 'jobs' list messages, each of at most
  -- 100 jobs and cut where the jobs before it in the list pass 200,000 bytes, so that no list comes near
  -- hosted Realtime's 256 KB payload limit (a job's message is at most its 16 KiB of metadata and its
  -- screen columns): Realtime drops a larger one.
  with m as (
    select t.topic, t.payload, pg_catalog.count(*) over (partition by t.topic) as on_topic,
           (pg_catalog.row_number() over w operator(pg_catalog.-) 1) operator(pg_catalog./) 100 as by_count,
           coalesce(pg_catalog.sum(pg_catalog.octet_length(t.payload::pg_catalog.text)) over (w rows between unbounded preceding and 1 preceding), 0)
             operator(pg_catalog./) 200000 as by_size
      from unnest(topics, payloads) as t(topic, payload)
    window w as (partition by t.topic order by t.payload operator(pg_catalog.->>) 'id'))
  select m.topic, 'job', m.payload from m where m.on_topic operator(pg_catalog.=) 1
  union all
  select m.topic, 'jobs',
         pg_catalog.jsonb_build_object('job_table', pg_catalog.min(m.payload operator(pg_catalog.->>) 'job_table'),
                                       'jobs', pg_catalog.jsonb_agg(m.payload order by m.payload operator(pg_catalog.->>) 'id'))
    from m
   where m.on_topic operator(pg_catalog.>) 1
   group by m.topic, m.by_count, m.by_size
$$;
comment on function supabase_jobs.topic_messages is
  'One statement''s Realtime messages grouped by topic: one ''job'' message for a topic with one job, ''jobs'' list messages ({job_table, jobs}) of at most 100 jobs and about 200,000 bytes for a topic with several (hosted Realtime drops a payload over 256 KB).';

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
comment on function supabase_jobs.send_job_messages is
  'Writes one statement''s Realtime messages (from job_messages), grouped by topic_messages: one ''job'' message per topic that has one, ''jobs'' list messages for a topic with several; when realtime.messages cannot take them (realtime_probe), a warning instead.';

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
comment on function supabase_jobs.send_statement_messages is
  'The Realtime messages of a batched claim or close (job_claim_next, job_succeed_many), called inside its statement with the ids it changed: each job''s message (job_messages, as after_jobs_updated writes it), grouped by topic (topic_messages: one ''job'' message, or ''jobs'' lists for a topic with several) in one insert, and the mark (setting supabase_jobs.statement_messages: this transaction and the trigger depth of the statement''s row triggers) that tells after_jobs_updated to send none for those rows. When realtime.messages cannot take them (realtime_probe), one warning instead. Returns how many it sent. Runs as its owner (SECURITY DEFINER): a batched claim or close writes realtime.messages, which no caller of the job API may write directly; workers only call it.';

-- Who reads a topic: a user jobs:<their id>, where every change of their jobs is
-- sent; an admin any jobs:<owner> and job:<id>.
create or replace function supabase_jobs.owns_job_topic(topic text)
returns boolean
language plpgsql stable
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  uid uuid := (select auth.uid());
begin
  if uid is null or topic is null then
    return false;
  end if;
  -- A user's jobs (and their children) speak on jobs:<uid> only.
  if topic = 'jobs:' || uid::text then
    return true;
  end if;
  return supabase_jobs.is_admin() and topic ~ '^jobs?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
end
$$;
comment on function supabase_jobs.owns_job_topic is
  'True when the caller (auth.uid()) may read Realtime topic jobs:<uid> (their own jobs, where every change of a job they own is sent), or, for an admin, any jobs:<owner> or job:<id>. Used by the realtime.messages policy supabase_jobs_read_job_topics. Runs as its owner (SECURITY DEFINER): the realtime.messages policy calls it as the joining user, each join; it reads only the caller''s own claims (auth.uid(), is_admin).';

-- Realtime: a signed-in user reads the broadcasts of the topics owns_job_topic allows.
create policy supabase_jobs_read_job_topics on realtime.messages
  for select to authenticated
  using (
    extension = 'broadcast'
    and topic = (select realtime.topic())
    and (select supabase_jobs.owns_job_topic((select realtime.topic())))
  );

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.realtime_probe, supabase_jobs.topic_messages, supabase_jobs.send_job_messages, supabase_jobs.send_statement_messages,
  supabase_jobs.owns_job_topic
  from public, anon, authenticated, service_role;
revoke all on supabase_jobs.job_messages from public, anon, authenticated, service_role;

-- Signed-in users only: the Realtime topic policy calls it as the joining user.
grant execute on function
  supabase_jobs.owns_job_topic
  to authenticated;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.send_statement_messages
  to service_role;
