-- A job's timeline: its transitions and its worker's log lines, read in one
-- ordered list by job_timeline. Most transitions are derived from what the row
-- already records (created_at, started_at + attempts, finished_at + status);
-- supabase_jobs.job_events keeps only what a later change would erase (a
-- retried, reclaimed, released or parked attempt; who cancelled), written by
-- after_jobs_updated for those transitions only, so the per-job path pays no
-- insert and no second Realtime message (docs/architecture.md, "A job's timeline").
-- job_log writes a worker's lines, attempt-guarded and bounded per job.
-- Readers: admins everything; the owner only the lines marked user_facing.

create or replace function supabase_jobs.log_lines_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 500; end $$;
comment on function supabase_jobs.log_lines_max is
  'Log lines kept per job (job_log): lines past it are dropped and counted in one marker line.';

create or replace function supabase_jobs.log_message_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 2000; end $$;
comment on function supabase_jobs.log_message_max is
  'Characters of one log line''s message (job_log).';

create or replace function supabase_jobs.log_fields_max_bytes()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 4096; end $$;
comment on function supabase_jobs.log_fields_max_bytes is
  'Bytes of one log line''s fields, as JSON text (job_log).';

-- A log line's at: an ISO timestamp with its offset that PostgreSQL reads as
-- one (a month 13 or a +99:99 offset is the caller's mistake, refused as 22023
-- naming the field, never a raw 22008 from the cast).
create or replace function supabase_jobs.is_log_time(at jsonb)
returns boolean
language plpgsql stable parallel safe
set search_path = ''
as $$
begin
  return pg_catalog.jsonb_typeof(at) = 'string'
     and (at #>> '{}') ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$'
     and pg_catalog.pg_input_is_valid(at #>> '{}', 'timestamptz')
     and pg_catalog.isfinite((at #>> '{}')::timestamptz);
end
$$;
comment on function supabase_jobs.is_log_time is
  'Whether a log line''s at (job_log) is an ISO timestamp with an offset that PostgreSQL reads as a finite timestamptz.';

create table supabase_jobs.job_events (
  job_id     uuid not null,
  at         timestamptz not null default now(),
  seq        bigint generated always as identity,
  job_table  text not null,
  event      text not null,
  attempt    integer not null,
  started_at timestamptz,
  progress   real,
  error      text,
  error_code text,
  actor      text,
  primary key (job_id, seq),
  constraint job_events_event check (event in ('retried', 'reclaimed', 'released', 'waiting', 'resumed', 'cancelled'))
);
comment on table supabase_jobs.job_events is
  'What a job''s row cannot keep for its timeline: each retried, reclaimed, released or parked attempt (when it started, how far it got, why it ended), each resume after children, and who cancelled. Read through public.job_timeline.';
comment on column supabase_jobs.job_events.started_at is
  'When the attempt that ended here had been claimed (the row forgets it at the next claim).';
comment on column supabase_jobs.job_events.actor is
  'Who made the change: the signed-in user''s id, else the database role (service_role for workers and schedules).';

create table supabase_jobs.job_logs (
  job_id      uuid not null,
  seq         integer not null,
  job_table   text not null,
  attempt     integer not null,
  at          timestamptz not null,
  level       text not null,
  message     text not null,
  fields      jsonb,
  user_facing boolean not null default false,
  primary key (job_id, seq),
  constraint job_logs_level check (level in ('debug', 'info', 'warn', 'error'))
);
comment on table supabase_jobs.job_logs is
  'The worker''s own log lines of a job (ctx.log in a handler), at most log_lines_max() per job; seq 0 is the marker counting the lines dropped past it. Written by public.job_log, read through public.job_timeline: admins read every line, the owner those with user_facing.';

-- Transitions a later change would erase: running -> queued (retried when the
-- schedule moved, released when the attempt was given back, else reclaimed),
-- running -> waiting, waiting -> queued, and any cancel (who did it).
create or replace function supabase_jobs.record_job_event(old_row supabase_jobs.job, new_row supabase_jobs.job)
returns void
language sql
set search_path = ''
as $$
  insert into supabase_jobs.job_events (job_id, job_table, event, attempt, started_at, progress, error, error_code, actor)
  values (new_row.id, new_row.job_table,
          case when new_row.status = 'cancelled' then 'cancelled'
               when new_row.status = 'waiting' then 'waiting'
               when old_row.status = 'waiting' then 'resumed'
               when new_row.attempts < old_row.attempts then 'released'
               when new_row.available_at is distinct from old_row.available_at then 'retried'
               else 'reclaimed' end,
          old_row.attempts, old_row.started_at, old_row.progress,
          case when new_row.status = 'cancelled' or new_row.error is distinct from old_row.error then new_row.error end,
          case when new_row.status = 'cancelled' or new_row.error_code is distinct from old_row.error_code then new_row.error_code end,
          coalesce((select auth.uid())::text, (select auth.jwt()) ->> 'role', session_user::text));
$$;
comment on function supabase_jobs.record_job_event is
  'Run by after_jobs_updated (as the owner of the tables), only when a change erases something the timeline shows (retry, reclaim, release, waiting, resume, cancel): one row in supabase_jobs.job_events. Claims and closes never run it.';

create or replace function supabase_jobs.forget_job_timeline()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from supabase_jobs.job_events e where e.job_id = old.id;
  delete from supabase_jobs.job_logs l where l.job_id = old.id;
  return null;
end
$$;
comment on function supabase_jobs.forget_job_timeline is
  'AFTER DELETE row trigger on supabase_jobs.job: a deleted job (retention, a deleted owner) takes its events and log lines with it. Runs as its owner (SECURITY DEFINER): whoever deletes a job deletes its events and log lines, which no user may write.';

create trigger forget_job_timeline after delete on supabase_jobs.job for each row
  execute function supabase_jobs.forget_job_timeline();

create or replace function public.job_log(
  id uuid,
  lines jsonb,
  attempt integer default null,
  job_table text default 'jobs',
  dropped integer default 0
)
returns integer
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  found_status public.job_status;
  started timestamptz;
  holder integer;
  kept integer;
  room integer;
  bad record;
  stored integer := 0;
  over bigint;
  total integer;
begin
  perform supabase_jobs.check_call(id, attempt);
  if lines is null or pg_catalog.jsonb_typeof(lines) <> 'array' then
    perform supabase_jobs.invalid('lines', 'lines is a JSON array of {level, message, fields, user_facing, at}');
  elsif pg_catalog.jsonb_array_length(lines) > supabase_jobs.log_lines_max() then
    perform supabase_jobs.invalid('lines', pg_catalog.format('at most %s lines per call', supabase_jobs.log_lines_max()));
  end if;
  if dropped is null or dropped < 0 then
    perform supabase_jobs.invalid('dropped', 'dropped is a count of lines, zero or more');
  end if;
  select l.i - 1 as i,
         case when pg_catalog.jsonb_typeof(l.line) <> 'object' then 'lines[' || (l.i - 1) || ']'
              when coalesce(l.line ->> 'level', '') not in ('debug', 'info', 'warn', 'error') then 'lines[' || (l.i - 1) || '].level'
              when pg_catalog.jsonb_typeof(l.line -> 'message') is distinct from 'string'
                or char_length(l.line ->> 'message') > supabase_jobs.log_message_max() then 'lines[' || (l.i - 1) || '].message'
              when pg_catalog.jsonb_typeof(l.line -> 'fields') not in ('object', 'null')
                or octet_length((l.line -> 'fields')::text) > supabase_jobs.log_fields_max_bytes() then 'lines[' || (l.i - 1) || '].fields'
              when pg_catalog.jsonb_typeof(l.line -> 'user_facing') not in ('boolean', 'null') then 'lines[' || (l.i - 1) || '].user_facing'
              when l.line ? 'at' and not supabase_jobs.is_log_time(l.line -> 'at') then 'lines[' || (l.i - 1) || '].at'
         end as field
    into bad
    from pg_catalog.jsonb_array_elements(lines) with ordinality as l(line, i)
   where pg_catalog.jsonb_typeof(l.line) <> 'object'
      or coalesce(l.line ->> 'level', '') not in ('debug', 'info', 'warn', 'error')
      or pg_catalog.jsonb_typeof(l.line -> 'message') is distinct from 'string'
      or char_length(l.line ->> 'message') > supabase_jobs.log_message_max()
      or pg_catalog.jsonb_typeof(l.line -> 'fields') not in ('object', 'null')
      or octet_length((l.line -> 'fields')::text) > supabase_jobs.log_fields_max_bytes()
      or pg_catalog.jsonb_typeof(l.line -> 'user_facing') not in ('boolean', 'null')
      or (l.line ? 'at' and not supabase_jobs.is_log_time(l.line -> 'at'))
   order by l.i
   limit 1;
  if bad.field is not null then
    perform supabase_jobs.invalid(bad.field, pg_catalog.format(
      '%s: a log line is {level: debug|info|warn|error, message: at most %s characters, fields: an object of at most %s bytes as JSON, user_facing: boolean, at: an ISO timestamp}',
      bad.field, supabase_jobs.log_message_max(), supabase_jobs.log_fields_max_bytes()));
  end if;

  -- The attempt that holds the job (or parked it, or held it when it was cancelled) writes its lines; any other is told why not.
  select j.status, j.started_at, j.attempts into found_status, started, holder
    from supabase_jobs.job j
   where j.job_table = label and j.id = job_log.id and (attempt is null or j.attempts = attempt)
     and j.status in ('running', 'waiting', 'cancelled');
  if found_status is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'log');
  end if;

  -- One writer per job at a time, so the bound is exact.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.log:' || id::text, 0));
  select coalesce(pg_catalog.max(g.seq), 0) into kept from supabase_jobs.job_logs g where g.job_id = job_log.id and g.seq > 0;
  room := greatest(0, supabase_jobs.log_lines_max() - kept);
  insert into supabase_jobs.job_logs (job_id, seq, job_table, attempt, at, level, message, fields, user_facing)
  select job_log.id, kept + l.i, label,
         holder,
         least(now(), greatest(coalesce((l.line ->> 'at')::timestamptz, now()), coalesce(started, now()))),
         l.line ->> 'level', l.line ->> 'message',
         case when pg_catalog.jsonb_typeof(l.line -> 'fields') = 'object' then l.line -> 'fields' end,
         coalesce((l.line ->> 'user_facing')::boolean, false)
    from pg_catalog.jsonb_array_elements(lines) with ordinality as l(line, i)
   where l.i <= room;
  get diagnostics stored = row_count;
  -- The marker's count saturates at the largest integer: a hostile dropped never overflows it.
  over := pg_catalog.jsonb_array_length(lines)::bigint - stored + dropped;
  if over > 0 then
    total := least(over, 2147483647);
    insert into supabase_jobs.job_logs as g (job_id, seq, job_table, attempt, at, level, message, fields)
    values (job_log.id, 0, label, holder, now(), 'warn',
            pg_catalog.format('%s log lines dropped (at most %s are kept per job)', total, supabase_jobs.log_lines_max()),
            pg_catalog.jsonb_build_object('dropped', total))
    on conflict (job_id, seq) do update
       set at = now(),
           fields = pg_catalog.jsonb_build_object('dropped', least((g.fields ->> 'dropped')::bigint + over, 2147483647)),
           message = pg_catalog.format('%s log lines dropped (at most %s are kept per job)',
                                       least((g.fields ->> 'dropped')::bigint + over, 2147483647), supabase_jobs.log_lines_max());
  end if;
  return stored;
end
$$;
comment on function public.job_log(uuid, jsonb, integer, text, integer) is
  'A worker''s log lines for the attempt that holds a job (or held it when it was cancelled): lines is [{level: debug|info|warn|error, message, fields, user_facing, at}]. Keeps at most log_lines_max() per job; past it (and the dropped count the worker sends) one marker line counts what was dropped. Returns the lines stored. 22023 names the bad field (lines[2].level); PT409/PT410 as job_tick.';

create or replace function public.job_timeline(id uuid, job_table text default 'jobs')
returns table (
  at timestamptz,
  source text,
  event text,
  attempt integer,
  message text,
  fields jsonb,
  actor text,
  user_facing boolean
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  j supabase_jobs.job;
  everything boolean := supabase_jobs.is_admin() or supabase_jobs.is_worker();
begin
  perform supabase_jobs.check_call(id);
  -- The row as the caller may read it (RLS): someone else's job shows nothing.
  select * into j from supabase_jobs.job t where t.job_table = label and t.id = job_timeline.id;
  if j.id is null then
    return;
  end if;
  return query
  with entries as (
    -- Derived from the row: enqueued, the current attempt's claim, the end.
    select j.created_at as at, 0 as rank, 0::bigint as seq, 'transition'::text as source, 'queued'::text as event, 0 as attempt,
           null::text as message, null::jsonb as fields, j.owner_id::text as actor, false as user_facing
     where everything
    union all
    select j.started_at, 1, 0, 'transition', 'claimed', j.attempts, null, null, null, false
     where everything and j.started_at is not null
    union all
    select j.finished_at, 3, 0, 'transition', j.status::text, j.attempts, j.error,
           case when j.error_code is null then null else pg_catalog.jsonb_build_object('error_code', j.error_code) end,
           null, false
     where everything and j.finished_at is not null and j.status <> 'cancelled'
    union all
    -- What the row forgot: the claim of each earlier attempt, and how it ended.
    select e.started_at, 1, e.seq, 'transition', 'claimed', e.attempt, null, null, null, false
      from supabase_jobs.job_events e
     where everything and e.job_id = j.id and e.started_at is not null and e.event in ('retried', 'reclaimed', 'released', 'waiting')
       and e.started_at is distinct from j.started_at
    union all
    select e.at, 2, e.seq, 'transition', e.event, e.attempt, e.error,
           pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object('error_code', e.error_code, 'progress', e.progress)),
           e.actor, false
      from supabase_jobs.job_events e
     where everything and e.job_id = j.id
    union all
    -- The worker's lines (RLS: the owner reads the user-facing ones only).
    select g.at, 2, g.seq, 'log', g.level, g.attempt, g.message, g.fields, null, g.user_facing
      from supabase_jobs.job_logs g
     where g.job_id = j.id and g.job_table = label and (everything or g.user_facing))
  select x.at, x.source, x.event, x.attempt, x.message, x.fields, x.actor, x.user_facing
    from entries x
   order by x.at, x.rank, x.seq;
end
$$;
comment on function public.job_timeline(uuid, text) is
  'A job''s timeline, oldest first: its transitions (queued, claimed with the attempt, retried, reclaimed, released, waiting, resumed, done/failed/cancelled, with who and why where known) and its worker''s log lines (source log, event the level). Admins (and workers) read everything; the owner reads only the lines the worker marked user_facing; anyone else gets no rows.';

alter table supabase_jobs.job_events enable row level security;
create policy job_events_admin_reads on supabase_jobs.job_events for select to authenticated
  using ((select supabase_jobs.is_admin()));
create policy job_events_service_role on supabase_jobs.job_events for all to service_role using (true) with check (true);
revoke all on supabase_jobs.job_events from public, anon, authenticated;
grant select on supabase_jobs.job_events to authenticated;
grant select, insert, update, delete on supabase_jobs.job_events to service_role;

alter table supabase_jobs.job_logs enable row level security;
create policy job_logs_readers on supabase_jobs.job_logs for select to authenticated
  using ((select supabase_jobs.is_admin())
         or (user_facing and exists (select 1 from supabase_jobs.job j
                                      where j.job_table = job_logs.job_table and j.id = job_logs.job_id
                                        and j.owner_id = (select auth.uid()))));
create policy job_logs_service_role on supabase_jobs.job_logs for all to service_role using (true) with check (true);
revoke all on supabase_jobs.job_logs from public, anon, authenticated;
grant select on supabase_jobs.job_logs to authenticated;
grant select, insert, update, delete on supabase_jobs.job_logs to service_role;

revoke all on function
  public.job_log(uuid, jsonb, integer, text, integer), public.job_timeline(uuid, text),
  supabase_jobs.log_lines_max, supabase_jobs.log_message_max, supabase_jobs.log_fields_max_bytes,
  supabase_jobs.record_job_event, supabase_jobs.forget_job_timeline, supabase_jobs.is_log_time
  from public, anon, authenticated, service_role;
grant execute on function public.job_timeline(uuid, text) to authenticated, service_role;
grant execute on function
  public.job_log(uuid, jsonb, integer, text, integer),
  supabase_jobs.log_lines_max, supabase_jobs.log_message_max, supabase_jobs.log_fields_max_bytes, supabase_jobs.is_log_time
  to service_role;
