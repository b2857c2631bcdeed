-- supabase-jobs 0009 — one partitioned job table, static SQL, set-based side effects.
--
-- Purpose: make every hot path a static, plan-cached statement. Until now each
-- job_* call resolved its table, rebuilt a column list from pg_attribute and
-- ran an unplanned EXECUTE format(...), and every row fired its own kick,
-- NOTIFY and two realtime.send calls. From here on:
--   * supabase_jobs.job is the one job table, LIST-partitioned by job_table
--     (the label the functions take: 'jobs', or '<schema>.<name>'). Every job
--     table a service creates (supabase_jobs.create_job_table) is a partition
--     under the name it chose, so the functions query one table and the
--     planner prunes to one partition at run time. Existing job tables are
--     converted in place (their rows, ids and primary keys stay);
--   * the row shape, its CHECKs, its indexes, its row triggers and its column
--     comments are written once, on the parent; partitions inherit them.
--     Limits are written once, one function each (gathered by
--     supabase_jobs.job_limits()): the input checks and supabase_jobs.limits()
--     call them, and the CHECKs are written from them as constants;
--   * side effects are per statement: one AFTER INSERT statement trigger sends
--     ONE NOTIFY and ONE kick per statement (whatever the number of rows and
--     kinds) and one list message per owner; one AFTER UPDATE statement trigger
--     sends one message per visible change to job:<id> and one list message per
--     owner. Messages are written to realtime.messages in one INSERT per
--     statement (what realtime.send does row by row, with the same "never abort
--     the write" rule). A job's own topic gets no message for its INSERT: nobody
--     can have joined job:<id> before the id exists;
--   * batch calls: job_enqueue_many (one statement, all or nothing, the bad
--     item's index in the error) and job_succeed_many (one statement closing
--     many jobs, each with its own result, timings and broadcast); job_status
--     (the status alone, for a worker's cancellation check);
--   * the wake-up carries a signed token that expires in minutes, never the
--     worker secret (pg_net keeps its queue, headers included, in a table);
--   * the Realtime read policy matches each message's own topic.
-- Invariants kept (every earlier test holds): the state machine is enforced
-- for every caller by the guard trigger, which now decides "a worker or a
-- user?" by privilege (row_security_active: BYPASSRLS roles, superusers and the
-- owner are workers), not by role name; RLS on the parent and on every
-- partition; explicit grants; fixed search_path; no SECURITY DEFINER function
-- callable by anon/authenticated in an exposed schema.
-- Changed behaviour:
--   * job_fail / job_retry shorten an error over the limit instead of refusing
--     it, and job_cancel shortens a long reason: a close is never refused for
--     the length of a sentence;
--   * every job_* function returns supabase_jobs.job rows (the old return type
--     was public.jobs): the same columns plus job_table;
--   * a partition cannot get columns of its own (PostgreSQL refuses); add a
--     column to supabase_jobs.job and every job table has it, and every job_*
--     function returns it.
-- Operator note: converting an existing job table scans it once (ATTACH
-- PARTITION validates the partition bound) under an ACCESS EXCLUSIVE lock;
-- tables of a few million rows take seconds. Apply outside peak hours.
-- Breaking: the return type of the job_* functions (a superset of the old
-- columns); supabase_jobs.attachments and its installers are gone (a per-table
-- behaviour now lives on the parent, or in supabase_jobs.attach_partition());
-- the wake-up's Authorization header is a signed token: deploy the worker of
-- this version (its bearerChecker accepts both) with these migrations.

-- ---------------------------------------------------------------------------
-- Limits, written once (one function each, gathered by job_limits()).
create type supabase_jobs.job_limits as (
  kind_max int,
  params_max_bytes int,
  payload_max_bytes int,
  error_max int,
  stage_max int,
  max_attempts_max int,
  max_attempts_default int,
  list_max int,
  batch_max int
);
comment on type supabase_jobs.job_limits is 'The documented input limits (see supabase_jobs.job_limits()).';
grant usage on type supabase_jobs.job_limits to authenticated, service_role;

-- One function per limit. They are PL/pgSQL (with the fixed search_path every
-- function has, which keeps SQL functions from being inlined): cheap to call
-- from the job_* functions. The CHECKs below do not call them per row: the
-- statement that creates the table reads them once and writes their values in.
do $$
declare
  lim record;
begin
  for lim in select * from (values
      ('kind_max', 64), ('params_max_bytes', 65536), ('payload_max_bytes', 10485760), ('error_max', 2000),
      ('stage_max', 200), ('max_attempts_max', 100), ('max_attempts_default', 3), ('list_max', 1000), ('batch_max', 5000)
    ) as v(name, value)
  loop
    execute pg_catalog.format(
      'create function supabase_jobs.%I() returns int language plpgsql immutable parallel safe set search_path = %L as $f$ begin return %s; end $f$',
      lim.name, '', lim.value);
    execute pg_catalog.format('revoke all on function supabase_jobs.%I() from public', lim.name);
    execute pg_catalog.format('grant execute on function supabase_jobs.%I() to authenticated, service_role', lim.name);
  end loop;
end
$$;

create function supabase_jobs.job_limits()
returns supabase_jobs.job_limits
language sql immutable parallel safe
set search_path = ''
as $$
  select row(supabase_jobs.kind_max(), supabase_jobs.params_max_bytes(), supabase_jobs.payload_max_bytes(),
             supabase_jobs.error_max(), supabase_jobs.stage_max(), supabase_jobs.max_attempts_max(),
             supabase_jobs.max_attempts_default(), supabase_jobs.list_max(), supabase_jobs.batch_max())::supabase_jobs.job_limits
$$;
comment on function supabase_jobs.job_limits() is
  'Every documented limit in one row: kind <= 64 chars, params <= 64 KiB of JSON, payload <= 10 MiB, error <= 2000 chars, stage <= 200 chars, max_attempts 1..100 (default 3), list limit <= 1000, batch <= 5000 items. Each is its own function (supabase_jobs.kind_max() ...): the input checks call them, and the CHECKs were written from them.';
revoke all on function supabase_jobs.job_limits() from public;
grant execute on function supabase_jobs.job_limits() to authenticated, service_role;

-- The old limits() keeps its signature and now reads job_limits().
create or replace function supabase_jobs.limits()
returns table (kind_max int, params_max_bytes int, payload_max_bytes int, error_max int, stage_max int, max_attempts_max int, list_max int)
language sql immutable parallel safe
set search_path = ''
as $$
  select l.kind_max, l.params_max_bytes, l.payload_max_bytes, l.error_max, l.stage_max, l.max_attempts_max, l.list_max
  from supabase_jobs.job_limits() l
$$;

-- is_terminal (0001) in PL/pgSQL: the guard calls it per status change, and a
-- SQL function with a fixed search_path is never inlined.
create or replace function supabase_jobs.is_terminal(status public.job_status)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return status in ('done', 'failed', 'cancelled'); end $$;

-- Formats shared by the CHECKs (written in by the statement that creates the table) and the input checks.
create function supabase_jobs.kind_pattern()
returns text
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return '^[A-Za-z0-9][A-Za-z0-9_.:/-]*$'; end $$;
revoke all on function supabase_jobs.kind_pattern() from public;
grant execute on function supabase_jobs.kind_pattern() to authenticated, service_role;

create function supabase_jobs.locale_pattern()
returns text
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$'; end $$;
revoke all on function supabase_jobs.locale_pattern() from public;
grant execute on function supabase_jobs.locale_pattern() to authenticated, service_role;

create function supabase_jobs.kind_is_valid(kind text)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return kind ~ supabase_jobs.kind_pattern() and char_length(kind) <= supabase_jobs.kind_max(); end $$;
revoke all on function supabase_jobs.kind_is_valid(text) from public;
grant execute on function supabase_jobs.kind_is_valid(text) to authenticated, service_role;

create function supabase_jobs.locale_is_valid(locale text)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return locale ~ supabase_jobs.locale_pattern(); end $$;
revoke all on function supabase_jobs.locale_is_valid(text) from public;
grant execute on function supabase_jobs.locale_is_valid(text) to authenticated, service_role;

-- The state machine as an expression (the guard calls it per status change;
-- supabase_jobs.transitions stays the table docs and tests read, and a test
-- keeps the two equal).
create function supabase_jobs.can_transition(from_status public.job_status, to_status public.job_status)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  return case from_status
    when 'queued' then to_status in ('running', 'cancelled')
    when 'running' then to_status in ('done', 'failed', 'cancelled', 'queued')
    else false
  end;
end
$$;
revoke all on function supabase_jobs.can_transition(public.job_status, public.job_status) from public;
grant execute on function supabase_jobs.can_transition(public.job_status, public.job_status) to authenticated, service_role;

-- A sentence shortened to the limit (with an ellipsis), so a close never fails on length.
create function supabase_jobs.sentence(value text)
returns text
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  return case when char_length(value) <= supabase_jobs.error_max() then value
    else left(value, supabase_jobs.error_max() - 1) || '…' end;
end
$$;
revoke all on function supabase_jobs.sentence(text) from public;
grant execute on function supabase_jobs.sentence(text) to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- The parent. Column order matches the job tables 0.1.0 created, plus job_table.
-- The CHECKs get the limits, formats and terminal statuses as constants, read
-- here from the functions that define them: a CHECK that called a function
-- would run it for every row written.
do $$
begin
  execute pg_catalog.format($ddl$
create table supabase_jobs.job (
  id uuid not null default gen_random_uuid(),
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  kind text not null,
  status public.job_status not null default 'queued',
  params jsonb not null default '{}'::jsonb,
  payload bytea,
  result_id uuid,
  error text,
  error_code text,
  attempts integer not null default 0,
  max_attempts integer not null default %1$s,
  started_at timestamptz,
  finished_at timestamptz,
  progress real not null default 0,
  stage text,
  heartbeat_at timestamptz,
  owner_id uuid default auth.uid() references auth.users (id) on delete cascade,
  locale text,
  available_at timestamptz not null default now(),
  timings jsonb,
  job_table text not null,
  constraint job_kind_format check (kind ~ %2$L and char_length(kind) <= %3$s),
  constraint job_params_object check (jsonb_typeof(params) = 'object' and octet_length(params::text) <= %4$s),
  constraint job_payload_size check (payload is null or octet_length(payload) <= %5$s),
  constraint job_finished_at_iff_terminal check ((status in (%6$s)) = (finished_at is not null)),
  constraint job_terminal_has_no_payload check (status not in (%6$s) or payload is null),
  constraint job_running_has_started_at check (status <> 'running' or started_at is not null),
  constraint job_failed_has_error check (status <> 'failed' or error is not null),
  constraint job_progress_percent check (progress >= 0 and progress <= 100),
  constraint job_attempts_within_max check (attempts >= 0 and max_attempts between 1 and %7$s and attempts <= max_attempts),
  constraint job_error_length check (error is null or char_length(error) <= %8$s),
  constraint job_stage_length check (stage is null or char_length(stage) <= %9$s),
  constraint job_locale_format check (locale is null or locale ~ %10$L),
  constraint job_timings_object check (timings is null or jsonb_typeof(timings) = 'object')
) partition by list (job_table)$ddl$,
    supabase_jobs.max_attempts_default(), supabase_jobs.kind_pattern(), supabase_jobs.kind_max(),
    supabase_jobs.params_max_bytes(), supabase_jobs.payload_max_bytes(),
    (select pg_catalog.string_agg(pg_catalog.quote_literal(s::text), ', ' order by s)
       from pg_catalog.unnest(pg_catalog.enum_range(null::public.job_status)) s where supabase_jobs.is_terminal(s)),
    supabase_jobs.max_attempts_max(), supabase_jobs.error_max(), supabase_jobs.stage_max(), supabase_jobs.locale_pattern());
end
$$;

comment on table supabase_jobs.job is
  'Every job, of every job table: each job table (public.jobs, and those made with supabase_jobs.create_job_table) is a partition of this table. Write it only through the job_* functions.';
comment on column supabase_jobs.job.id is 'The job id the interface follows.';
comment on column supabase_jobs.job.is_active is 'False hides the row from listings (soft delete); the only change a finished row accepts.';
comment on column supabase_jobs.job.created_at is 'When the job was enqueued.';
comment on column supabase_jobs.job.updated_at is 'Last change of any kind, including heartbeats.';
comment on column supabase_jobs.job.kind is 'Which work this is: the worker branches on it and the interface filters by it.';
comment on column supabase_jobs.job.status is 'queued -> running -> done / failed / cancelled. cancelled is terminal but not a failure.';
comment on column supabase_jobs.job.params is 'Small input, as a JSON object (at most 64 KiB).';
comment on column supabase_jobs.job.payload is 'Large input (at most 10 MiB), e.g. the uploaded file. Dropped when the job finishes; only claim returns it.';
comment on column supabase_jobs.job.result_id is 'The row the work produced, so the screen links straight to it.';
comment on column supabase_jobs.job.error is 'Why it stopped, written for the user (never a stack trace). Also the last error of a job being retried.';
comment on column supabase_jobs.job.error_code is 'Stable code for the error: cancelled, worker_lost, failed, or the handler''s own.';
comment on column supabase_jobs.job.attempts is 'How many times a worker has claimed it.';
comment on column supabase_jobs.job.max_attempts is 'Claims allowed before a job that keeps killing its worker is closed as failed.';
comment on column supabase_jobs.job.started_at is 'When the current attempt was claimed.';
comment on column supabase_jobs.job.finished_at is 'When it reached done, failed or cancelled.';
comment on column supabase_jobs.job.progress is 'Percent done (0-100), from measured phase timings or real counters; never decreases within an attempt.';
comment on column supabase_jobs.job.stage is 'The phase running now, as the progress bar labels it.';
comment on column supabase_jobs.job.heartbeat_at is 'Last tick from the worker; reclaim_stale readmits running jobs whose heartbeat (or start) is older than stale_after.';
comment on column supabase_jobs.job.owner_id is 'The user who enqueued it (auth.uid()); only they can see or cancel it.';
comment on column supabase_jobs.job.locale is 'The user''s language (e.g. pt-BR) for the sentences in error.';
comment on column supabase_jobs.job.available_at is 'Not claimable before this time (retry backoff).';
comment on column supabase_jobs.job.timings is 'Seconds (and input size) per phase, recorded by the tracker; PhasePlan.fromHistory fits plans from them.';
comment on column supabase_jobs.job.job_table is 'Which job table (partition) the row belongs to: jobs, or <schema>.<name>.';

-- Indexes (each partition gets its own). Few on purpose: every index is paid on every enqueue.
--   claim: queued rows in claim order;  reclaim: the running rows (few: one per busy worker slot);
--   owner: a user's jobs newest first (RLS listings);  created: all jobs newest first (service listings, history).
create index job_claim_idx on supabase_jobs.job (job_table, available_at, created_at, id) where status = 'queued';
-- The reclaim index names no heartbeat column: a tick then changes no indexed
-- column, and PostgreSQL can write it as a HOT update (no index entry at all).
create index job_reclaim_idx on supabase_jobs.job (job_table) where status = 'running';
create index job_owner_created_idx on supabase_jobs.job (owner_id, created_at desc, id desc);
create index job_created_idx on supabase_jobs.job (job_table, created_at desc, id desc);
create index job_kind_created_idx on supabase_jobs.job (job_table, kind, created_at desc, id desc);

alter table supabase_jobs.job enable row level security;
create policy owner_reads on supabase_jobs.job for select to authenticated using (owner_id = (select auth.uid()));
create policy owner_enqueues on supabase_jobs.job for insert to authenticated with check (owner_id = (select auth.uid()));
create policy owner_cancels on supabase_jobs.job for update to authenticated
  using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()));
revoke all on supabase_jobs.job from public, anon, authenticated;
grant select on supabase_jobs.job to authenticated;
grant insert (job_table, kind, params, payload, max_attempts, locale, owner_id) on supabase_jobs.job to authenticated;
grant update (status, error) on supabase_jobs.job to authenticated;
grant select, insert, update, delete on supabase_jobs.job to service_role;
grant usage on type supabase_jobs.job to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- Who is a worker: a role that row-level security does not restrict
-- (BYPASSRLS such as service_role, a superuser, the owner). Decided by
-- privilege, so a custom role that merely inherits authenticated is a user.
create function supabase_jobs.is_worker()
returns boolean
language plpgsql stable
set search_path = ''
as $$ begin return not pg_catalog.row_security_active('supabase_jobs.job'::regclass); end $$;
revoke all on function supabase_jobs.is_worker() from public;
grant execute on function supabase_jobs.is_worker() to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- The guard, split so that the frequent writes (ticks) cost nothing: the
-- insert guard runs only for a row that does not start as a fresh queued job,
-- the update guard only when the status or the error changes, or the row is
-- terminal or queued (the WHEN clauses are evaluated without a function call).
-- A tick (progress, stage, heartbeat of a running row) passes no guard: a user
-- cannot write those columns (no grant), and job_tick sets updated_at itself.
create function supabase_jobs.refuse_job_insert()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception using errcode = 'SJ001',
    message = pg_catalog.format('a job starts queued with no attempts and no progress; got status %s', new.status);
end
$$;
revoke all on function supabase_jobs.refuse_job_insert() from public;

create function supabase_jobs.guard_job_update()
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
    new.updated_at := now();
    return new;
  end if;

  if restricted then
    if new.status <> 'cancelled'
       or (pg_catalog.to_jsonb(new) - 'status' - 'error' - 'updated_at') is distinct from (pg_catalog.to_jsonb(old) - 'status' - 'error' - 'updated_at') then
      raise exception using errcode = '42501',
        message = 'a user can only cancel their own jobs; every other change is the worker''s';
    end if;
  end if;

  if new.status is distinct from old.status then
    if not supabase_jobs.can_transition(old.status, new.status) then
      raise exception using errcode = 'SJ001',
        message = pg_catalog.format('illegal transition for job %s: %s -> %s', old.id, old.status, new.status),
        hint = 'See docs/state-machine.md for the transitions and the job_* function that makes each.';
    end if;
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
  new.updated_at := now();
  return new;
end
$$;
comment on function supabase_jobs.guard_job_update() is
  'BEFORE UPDATE on every job table (WHEN the status or error changes, or the row is terminal or queued): enforces the state machine, freezes terminal rows, limits users to cancelling, and derives started_at/finished_at/payload/progress from the status.';
revoke all on function supabase_jobs.guard_job_update() from public;

create trigger guard_job_insert before insert on supabase_jobs.job for each row
  when (new.status <> 'queued' or new.attempts <> 0 or new.started_at is not null or new.finished_at is not null or new.progress <> 0)
  execute function supabase_jobs.refuse_job_insert();
create trigger guard_job_update before update on supabase_jobs.job for each row
  when (old.status is distinct from new.status or old.error is distinct from new.error
        or old.status in ('queued', 'done', 'failed', 'cancelled'))
  execute function supabase_jobs.guard_job_update();

-- ---------------------------------------------------------------------------
-- Side effects, per statement.

-- Writes the Realtime messages of one statement in ONE insert into
-- realtime.messages (what realtime.send does row by row):
--   * each job in `ids` to job:<id> (event 'job'), when to_job_topic;
--   * per owner, one list message to jobs:<owner>: event 'job' with the job
--     when one of their jobs changed, event 'jobs' with {job_table, jobs: [...]}
--     (at most 100 per message) when several did.
-- The rows are read back by id (the statement's new state), column by column:
-- this is the one place the message's shape is written, and params and payload
-- are never read. Never raises: like realtime.send, a failure to broadcast is a
-- WARNING and the write it describes stands.
create function supabase_jobs.send_job_messages(ids uuid[], to_job_topic boolean)
returns void
language plpgsql
set search_path = ''
as $$
begin
  insert into realtime.messages (payload, event, topic, private, extension)
  with changed as materialized (
    select pg_catalog.jsonb_build_object(
             'id', j.id, 'kind', j.kind, 'status', j.status, 'progress', j.progress, 'stage', j.stage,
             'error', j.error, 'error_code', j.error_code, 'result_id', j.result_id,
             'attempts', j.attempts, 'max_attempts', j.max_attempts,
             'created_at', j.created_at, 'updated_at', j.updated_at, 'started_at', j.started_at, 'finished_at', j.finished_at,
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
revoke all on function supabase_jobs.send_job_messages(uuid[], boolean) from public, anon, authenticated;

-- The worker's URL and a credential for one wake-up, from Vault; nulls when
-- Vault or a secret is missing. Returns the secret, so only its owner may run it.
-- (Unchanged contract; redefined here for the kick below.)

-- AFTER INSERT ... FOR EACH STATEMENT on the parent and on every partition:
-- ONE NOTIFY and ONE kick per statement, and the list messages. SECURITY
-- DEFINER: the inserting user may read neither Vault nor realtime.messages.
create function supabase_jobs.after_jobs_inserted()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  summary record;
  kinds text[];
  body jsonb;
begin
  -- One pass, no sort: the kinds are listed apart only when a statement mixed several.
  select pg_catalog.count(*)::integer as n,
         (pg_catalog.array_agg(i.id))[1] as first_id,
         pg_catalog.min(i.job_table) as job_table,
         pg_catalog.max(i.job_table) as last_table,
         pg_catalog.min(i.kind) as kind,
         pg_catalog.max(i.kind) as last_kind,
         pg_catalog.min(i.available_at) as available_at,
         pg_catalog.count(*) filter (where i.available_at <= pg_catalog.now())::integer as claimable,
         pg_catalog.array_agg(i.id) filter (where i.owner_id is not null) as owned
    into summary
    from inserted i
   where i.status = 'queued';
  if summary.n = 0 then
    return null;
  end if;
  -- job_table / kind / job_id are set when the statement is about one of each,
  -- null otherwise (a worker then drains every kind it handles).
  if summary.kind = summary.last_kind then
    kinds := array[summary.kind];
  else
    select pg_catalog.array_agg(distinct i.kind order by i.kind) into kinds from inserted i where i.status = 'queued';
  end if;
  body := pg_catalog.jsonb_build_object(
    'job_table', case when summary.job_table = summary.last_table then summary.job_table end,
    'kind', case when summary.kind = summary.last_kind then summary.kind end,
    'kinds', pg_catalog.to_jsonb(kinds),
    'job_id', case when summary.n = 1 then summary.first_id end,
    'count', summary.n);
  perform pg_catalog.pg_notify('supabase_jobs', (body || pg_catalog.jsonb_build_object(
    'available_at', summary.available_at, 'reason', 'enqueue'))::text);
  if summary.claimable > 0 then
    perform supabase_jobs.kick_body(body || pg_catalog.jsonb_build_object('reason', 'enqueue'));
  end if;
  if summary.owned is not null then
    perform supabase_jobs.send_job_messages(summary.owned, false);
  end if;
  return null;
end
$$;
comment on function supabase_jobs.after_jobs_inserted() is
  'AFTER INSERT statement trigger on supabase_jobs.job and on every job table: one NOTIFY supabase_jobs and one wake-up (pg_net) per statement, and one list message per owner.';
revoke all on function supabase_jobs.after_jobs_inserted() from public, anon, authenticated;

-- AFTER UPDATE ... FOR EACH STATEMENT: a message per job whose status,
-- progress or stage changed (heartbeats send nothing), one list message per owner.
create function supabase_jobs.after_jobs_updated()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  changed uuid[];
begin
  select pg_catalog.array_agg(n.id) into changed
    from new_rows n join old_rows o on o.id = n.id
   where n.status is distinct from o.status or n.progress is distinct from o.progress or n.stage is distinct from o.stage;
  if changed is not null then
    perform supabase_jobs.send_job_messages(changed, true);
  end if;
  return null;
end
$$;
comment on function supabase_jobs.after_jobs_updated() is
  'AFTER UPDATE statement trigger on supabase_jobs.job and on every job table: a Realtime message per visible change (status, progress, stage) to job:<id>, one list message per owner to jobs:<owner>. Never params or payload.';
revoke all on function supabase_jobs.after_jobs_updated() from public, anon, authenticated;

-- A retried, released or reclaimed job is claimable again: tell listening workers (row trigger, rare).
create or replace function supabase_jobs.notify_requeued_job()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('supabase_jobs', pg_catalog.json_build_object(
    'job_table', new.job_table, 'kind', new.kind, 'job_id', new.id,
    'count', 1, 'available_at', new.available_at, 'reason', 'requeue')::text);
  return null;
end
$$;

create trigger notify_requeued after update of status on supabase_jobs.job for each row
  when (old.status = 'running' and new.status = 'queued')
  execute function supabase_jobs.notify_requeued_job();

-- ---------------------------------------------------------------------------
-- The kick, with the body built by the statement trigger (one request per statement).
-- Every insert statement runs it, so the common case of a project without the
-- Vault secrets (or without pg_net) costs one catalog probe and one read, and
-- only the call into pg_net sits in an exception block (a subtransaction).
create or replace function supabase_jobs.worker_endpoint(out url text, out secret text)
language plpgsql stable
set search_path = ''
as $$
begin
  if pg_catalog.to_regclass('vault.decrypted_secrets') is null then
    return;
  end if;
  -- One read of the two secrets (Vault decrypts each row it returns).
  select nullif(pg_catalog.btrim((pg_catalog.array_agg(s.decrypted_secret order by s.updated_at desc)
                  filter (where s.name = 'supabase_jobs_worker_url'))[1]), ''),
         nullif((pg_catalog.array_agg(s.decrypted_secret order by s.updated_at desc)
                  filter (where s.name = 'supabase_jobs_worker_secret'))[1], '')
    into url, secret
    from vault.decrypted_secrets s
   where s.name in ('supabase_jobs_worker_url', 'supabase_jobs_worker_secret');
end
$$;

-- The wake-up carries no secret: pg_net keeps its queue (headers included) in
-- a table until it sends, so the kick signs a short-lived token instead,
-- 'v1.<unix seconds>.<hex HMAC-SHA256(secret, "v1.<unix seconds>")>', which
-- the worker verifies (bearerChecker: at most 5 minutes old). HMAC is built on
-- the core sha256() so no extension is needed.
create function supabase_jobs.kick_token(secret text, at bigint)
returns text
language plpgsql immutable
set search_path = ''
as $$
declare
  k bytea := pg_catalog.convert_to(secret, 'UTF8');
  inner_key bytea;
  outer_key bytea;
  i int;
begin
  if pg_catalog.length(k) > 64 then
    k := pg_catalog.sha256(k);
  end if;
  k := k || pg_catalog.decode(pg_catalog.repeat('00', 64 - pg_catalog.length(k)), 'hex');
  inner_key := k;
  outer_key := k;
  for i in 0..63 loop
    inner_key := pg_catalog.set_byte(inner_key, i, pg_catalog.get_byte(k, i) # 54);
    outer_key := pg_catalog.set_byte(outer_key, i, pg_catalog.get_byte(k, i) # 92);
  end loop;
  return 'v1.' || at || '.' || pg_catalog.encode(
    pg_catalog.sha256(outer_key || pg_catalog.sha256(inner_key || pg_catalog.convert_to('v1.' || at, 'UTF8'))), 'hex');
end
$$;
comment on function supabase_jobs.kick_token(text, bigint) is
  'The Bearer token of one wake-up: v1.<unix seconds>.<hex HMAC-SHA256(secret, "v1.<unix seconds>")>. The worker accepts it for 5 minutes.';
revoke all on function supabase_jobs.kick_token(text, bigint) from public, anon, authenticated, service_role;

create function supabase_jobs.kick_body(body jsonb)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
  endpoint record;
begin
  if pg_catalog.to_regprocedure('net.http_post(text, jsonb, jsonb, jsonb, integer)') is null then
    return null;
  end if;
  endpoint := supabase_jobs.worker_endpoint();
  if endpoint.url is null or endpoint.secret is null then
    return null;
  end if;
  begin
    return net.http_post(
      url := endpoint.url,
      body := body,
      params := '{}'::jsonb,
      headers := pg_catalog.jsonb_build_object('Content-Type', 'application/json', 'Authorization',
        'Bearer ' || supabase_jobs.kick_token(endpoint.secret, pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.now()))::bigint)),
      timeout_milliseconds := (select s.kick_timeout_ms from supabase_jobs.settings s where s.id)
    );
  exception when others then
    raise warning using message = pg_catalog.format('supabase_jobs: the worker was not woken (%s); the backstop schedule will wake it', sqlerrm);
    return null;
  end;
end
$$;
comment on function supabase_jobs.kick_body(jsonb) is
  'POSTs one wake-up with the given body to the worker through pg_net (after commit). Null when pg_net, Vault or the secrets are missing. Never raises.';
revoke all on function supabase_jobs.kick_body(jsonb) from public, anon, authenticated;
grant execute on function supabase_jobs.kick_body(jsonb) to service_role;

create or replace function supabase_jobs.kick(job_table text, kind text default null, job_id uuid default null, count integer default 1, reason text default 'enqueue')
returns bigint
language sql
security definer
set search_path = ''
as $$
  select supabase_jobs.kick_body(pg_catalog.jsonb_build_object(
    'job_id', job_id, 'job_table', job_table, 'kind', kind, 'count', count, 'reason', reason))
$$;

-- ---------------------------------------------------------------------------
-- Registry: the label is what the functions take and the partition bound.
alter table supabase_jobs.job_tables add column label text;
update supabase_jobs.job_tables set label = supabase_jobs.table_label(table_name);
alter table supabase_jobs.job_tables alter column label set not null;
alter table supabase_jobs.job_tables add constraint job_tables_label_key unique (label);
comment on column supabase_jobs.job_tables.label is 'How the job_* functions name the table (job_table): jobs, or <schema>.<name>; the partition bound of supabase_jobs.job.';

-- The label a caller's job_table names ('public.x' is 'x'), or 42P01.
create function supabase_jobs.job_table_label(job_table text)
returns text
language plpgsql stable
set search_path = ''
as $$
declare
  wanted text := case when job_table like 'public.%' then pg_catalog.substr(job_table, 8) else job_table end;
begin
  if wanted is null or not exists (select 1 from supabase_jobs.job_tables t where t.label = wanted) then
    if job_table is null or job_table !~ '^([a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}$' then
      perform supabase_jobs.invalid('job_table',
        pg_catalog.format('job_table must be a lowercase table name like "jobs" or "app.exports", got %L', left(job_table, 100)));
    end if;
    raise exception using errcode = '42P01',
      message = pg_catalog.format('%s is not a job table', job_table),
      hint = 'Create it with: select supabase_jobs.create_job_table(''<name>'');';
  end if;
  return wanted;
end
$$;
revoke all on function supabase_jobs.job_table_label(text) from public;
grant execute on function supabase_jobs.job_table_label(text) to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- Per partition: what a partition does not inherit from the parent. Written
-- once; a later migration that changes it replaces this function and runs it
-- over supabase_jobs.job_tables again.
create function supabase_jobs.attach_partition(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
declare
  col record;
begin
  -- Statements aimed at the partition itself fire its own statement triggers.
  execute pg_catalog.format('drop trigger if exists after_jobs_inserted on %s', tbl);
  execute pg_catalog.format('create trigger after_jobs_inserted after insert on %s referencing new table as inserted for each statement execute function supabase_jobs.after_jobs_inserted()', tbl);
  execute pg_catalog.format('drop trigger if exists after_jobs_updated on %s', tbl);
  execute pg_catalog.format('create trigger after_jobs_updated after update on %s referencing old table as old_rows new table as new_rows for each statement execute function supabase_jobs.after_jobs_updated()', tbl);

  -- Room on each page for HOT updates: a tick rewrites the row in place of its page.
  execute pg_catalog.format('alter table %s set (fillfactor = 85)', tbl);
  execute pg_catalog.format('alter table %s enable row level security', tbl);
  execute pg_catalog.format('drop policy if exists owner_reads on %s', tbl);
  execute pg_catalog.format('create policy owner_reads on %s for select to authenticated using (owner_id = (select auth.uid()))', tbl);
  execute pg_catalog.format('drop policy if exists owner_enqueues on %s', tbl);
  execute pg_catalog.format('create policy owner_enqueues on %s for insert to authenticated with check (owner_id = (select auth.uid()))', tbl);
  execute pg_catalog.format('drop policy if exists owner_cancels on %s', tbl);
  execute pg_catalog.format('create policy owner_cancels on %s for update to authenticated using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()))', tbl);

  execute pg_catalog.format('revoke all on %s from public, anon, authenticated', tbl);
  execute pg_catalog.format('grant select on %s to authenticated', tbl);
  execute pg_catalog.format('grant insert (kind, params, payload, max_attempts, locale) on %s to authenticated', tbl);
  execute pg_catalog.format('grant update (status, error) on %s to authenticated', tbl);
  execute pg_catalog.format('grant select, insert, update, delete on %s to service_role', tbl);

  -- Studio shows a partition's own comments: copy the parent's.
  execute pg_catalog.format('comment on table %s is %L', tbl,
    'Jobs: one row per unit of long-running work, read by the interface (a partition of supabase_jobs.job). Status moves queued -> running -> done/failed/cancelled (docs/state-machine.md); write it only through the job_* functions.');
  for col in
    select a.attname, pg_catalog.col_description('supabase_jobs.job'::regclass, a.attnum) as note
      from pg_catalog.pg_attribute a
     where a.attrelid = 'supabase_jobs.job'::regclass and a.attnum > 0 and not a.attisdropped
  loop
    execute pg_catalog.format('comment on column %s.%I is %L', tbl, col.attname, col.note);
  end loop;
end
$$;
comment on function supabase_jobs.attach_partition(regclass) is
  'Installs (or repairs) on one job table what a partition does not inherit: its statement triggers, RLS policies, grants and comments.';
revoke all on function supabase_jobs.attach_partition(regclass) from public;

-- Statements aimed at the parent (the job_* functions) fire the parent's.
create trigger after_jobs_inserted after insert on supabase_jobs.job
  referencing new table as inserted for each statement execute function supabase_jobs.after_jobs_inserted();
create trigger after_jobs_updated after update on supabase_jobs.job
  referencing old table as old_rows new table as new_rows for each statement execute function supabase_jobs.after_jobs_updated();

-- ---------------------------------------------------------------------------
-- Convert the job tables 0.1.0 created into partitions (rows, ids and primary keys stay).
do $$
declare
  t record;
  k record;
  obj text;
begin
  for t in
    select j.table_name as tbl, j.label, c.relname::text as name, n.nspname::text as schema
      from supabase_jobs.job_tables j join pg_catalog.pg_class c on c.oid = j.table_name
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  loop
    foreach obj in array array['guard_job', 'kick_worker', 'notify_inserted', 'notify_requeued', 'broadcast_inserted', 'broadcast_changed'] loop
      execute pg_catalog.format('drop trigger if exists %I on %s', obj, t.tbl);
    end loop;
    foreach obj in array array['owner_reads', 'owner_enqueues', 'owner_cancels'] loop
      execute pg_catalog.format('drop policy if exists %I on %s', obj, t.tbl);
    end loop;
    for k in select x.conname from pg_catalog.pg_constraint x where x.conrelid = t.tbl and x.contype = 'c' loop
      execute pg_catalog.format('alter table %s drop constraint %I', t.tbl, k.conname);
    end loop;
    foreach obj in array array['_status_idx', '_kind_created_idx', '_owner_created_idx', '_created_idx', '_claim_idx', '_reclaim_idx'] loop
      execute pg_catalog.format('drop index if exists %s', pg_catalog.quote_ident(t.schema) || '.' || pg_catalog.quote_ident(t.name || obj));
    end loop;
    execute pg_catalog.format('alter table %s add column job_table text not null default %L', t.tbl, t.label);
    -- A partition must carry the parent's CHECKs, under the parent's names.
    for k in select x.conname, pg_catalog.pg_get_constraintdef(x.oid) as def from pg_catalog.pg_constraint x
              where x.conrelid = 'supabase_jobs.job'::regclass and x.contype = 'c' loop
      execute pg_catalog.format('alter table %s add constraint %I %s', t.tbl, k.conname, k.def);
    end loop;
    execute pg_catalog.format('alter table supabase_jobs.job attach partition %s for values in (%L)', t.tbl, t.label);
    perform supabase_jobs.attach_partition(t.tbl);
  end loop;
end
$$;

-- The installers of 0.1.0 are gone: the parent carries what they installed.
drop table supabase_jobs.attachments;
drop function supabase_jobs.add_attachment(text, regprocedure, integer);
drop function supabase_jobs.attach(regclass);
drop function supabase_jobs.attach_base(regclass);
drop function supabase_jobs.attach_kick(regclass);
drop function supabase_jobs.attach_notify(regclass);
drop function supabase_jobs.attach_broadcast(regclass);
drop function supabase_jobs.guard_job();
drop function supabase_jobs.kick_inserted_jobs();
drop function supabase_jobs.notify_inserted_jobs();
drop function supabase_jobs.broadcast_job_change();

-- ---------------------------------------------------------------------------
-- Creating a job table: a partition under the name the service picks.
create or replace function supabase_jobs.create_job_table(name text, schema_name text default 'public')
returns regclass
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass;
  qualified text;
  label text;
begin
  if name is null or name !~ '^[a-z_][a-z0-9_]{0,47}$' then
    perform supabase_jobs.invalid('name', pg_catalog.format('a job table name is lowercase letters, digits and _ (at most 48), starting with a letter or _; got %L', left(name, 100)));
  end if;
  if schema_name is null or schema_name !~ '^[a-z_][a-z0-9_]{0,62}$' then
    perform supabase_jobs.invalid('schema_name', pg_catalog.format('schema_name must be a lowercase identifier; got %L', left(schema_name, 100)));
  end if;
  if schema_name in ('supabase_jobs', 'auth', 'realtime', 'storage', 'pg_catalog', 'information_schema') then
    perform supabase_jobs.invalid('schema_name', pg_catalog.format('job tables do not belong in schema %s', schema_name));
  end if;
  qualified := pg_catalog.format('%I.%I', schema_name, name);
  if pg_catalog.to_regclass(qualified) is not null then
    perform supabase_jobs.invalid('name', pg_catalog.format('%s already exists', qualified));
  end if;
  label := case when schema_name = 'public' then name else schema_name || '.' || name end;

  execute pg_catalog.format('create table %s partition of supabase_jobs.job for values in (%L)', qualified, label);
  tbl := qualified::regclass;
  execute pg_catalog.format('alter table %s add primary key (id)', tbl);
  execute pg_catalog.format('alter table %s alter column job_table set default %L', tbl, label);
  insert into supabase_jobs.job_tables (table_name, label) values (tbl, label);
  perform supabase_jobs.attach_partition(tbl);
  return tbl;
end
$$;
comment on function supabase_jobs.create_job_table(text, text) is
  'Creates a job table under a name you choose (the seed''s BaseJobModel subclass): a partition of supabase_jobs.job with its checks, indexes, triggers, RLS, grants and comments. Example: select supabase_jobs.create_job_table(''exports'');';

-- ---------------------------------------------------------------------------
-- The SQL API, static. Each function checks its input, runs one statement on
-- the parent (pruned to one partition by job_table) and explains an empty
-- result with the SQLSTATE the adapters map.

-- The job row without its payload (get, list and every close return it so).
create function supabase_jobs.without_payload(j supabase_jobs.job)
returns supabase_jobs.job
language plpgsql immutable
set search_path = ''
as $$
begin
  j.payload := null;
  return j;
end
$$;
revoke all on function supabase_jobs.without_payload(supabase_jobs.job) from public;
grant execute on function supabase_jobs.without_payload(supabase_jobs.job) to authenticated, service_role;

create or replace function supabase_jobs.check_attempt(attempt int)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if attempt is not null and attempt < 1 then
    perform supabase_jobs.invalid('attempt', pg_catalog.format('attempt counts from 1; got %s', attempt));
  end if;
end
$$;

-- Why a compare-and-set found no row, as the SQLSTATE the adapters map.
create function supabase_jobs.raise_not_closable(label text, job_id uuid, expected_attempt int, action text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  found_status public.job_status;
  found_attempts int;
begin
  select j.status, j.attempts into found_status, found_attempts
    from supabase_jobs.job j where j.job_table = label and j.id = job_id;
  if found_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', job_id);
  elsif found_status = 'cancelled' then
    raise exception using errcode = 'PT410', message = pg_catalog.format('job %s was cancelled; cannot %s it', job_id, action),
      hint = 'The system did what it was told: log it and move on.';
  elsif supabase_jobs.is_terminal(found_status) then
    raise exception using errcode = 'PT409', message = pg_catalog.format('job %s is already %s; cannot %s it', job_id, found_status, action),
      hint = 'Two workers believe this job is theirs.';
  elsif found_status = 'queued' and expected_attempt is not null then
    raise exception using errcode = 'PT409',
      message = pg_catalog.format('job %s was reclaimed and is queued again; attempt %s cannot %s it', job_id, expected_attempt, action),
      hint = 'Two workers believe this job is theirs.';
  elsif found_status = 'queued' then
    raise exception using errcode = '55000', message = pg_catalog.format('job %s is queued, not running; claim it before you %s it', job_id, action);
  elsif expected_attempt is not null and found_attempts <> expected_attempt then
    raise exception using errcode = 'PT409',
      message = pg_catalog.format('job %s was reclaimed: attempt %s now owns it, not attempt %s; cannot %s it', job_id, found_attempts, expected_attempt, action),
      hint = 'Two workers believe this job is theirs.';
  else
    raise exception using errcode = 'PT409', message = pg_catalog.format('job %s changed while it was being %s', job_id, action);
  end if;
end
$$;
revoke all on function supabase_jobs.raise_not_closable(text, uuid, int, text) from public;
grant execute on function supabase_jobs.raise_not_closable(text, uuid, int, text) to authenticated, service_role;

-- The input checks of one job, naming the field (prefix: 'items[3].' in a batch).
create function supabase_jobs.check_job_input(kind text, params jsonb, payload bytea, max_attempts integer, locale text, prefix text default '')
returns void
language plpgsql stable
set search_path = ''
as $$
declare
begin
  if kind is null or kind = '' then
    perform supabase_jobs.invalid(prefix || 'kind', 'kind is required');
  elsif char_length(kind) > supabase_jobs.kind_max() then
    perform supabase_jobs.invalid(prefix || 'kind', pg_catalog.format('kind is at most %s characters; got %s', supabase_jobs.kind_max(), char_length(kind)));
  elsif not supabase_jobs.kind_is_valid(kind) then
    perform supabase_jobs.invalid(prefix || 'kind', pg_catalog.format('kind may use letters, digits and _ . : / - (starting with a letter or digit); got %L', left(kind, 80)));
  end if;
  if params is not null and pg_catalog.jsonb_typeof(params) <> 'object' then
    perform supabase_jobs.invalid(prefix || 'params', pg_catalog.format('params must be a JSON object; got a JSON %s', pg_catalog.jsonb_typeof(params)));
  elsif params is not null and octet_length(params::text) > supabase_jobs.params_max_bytes() then
    perform supabase_jobs.invalid(prefix || 'params', pg_catalog.format('params is at most %s bytes of JSON; got %s (put large input in payload)', supabase_jobs.params_max_bytes(), octet_length(params::text)));
  end if;
  if payload is not null and octet_length(payload) > supabase_jobs.payload_max_bytes() then
    perform supabase_jobs.invalid(prefix || 'payload', pg_catalog.format('payload is at most %s bytes; got %s', supabase_jobs.payload_max_bytes(), octet_length(payload)));
  end if;
  if max_attempts is not null and (max_attempts < 1 or max_attempts > supabase_jobs.max_attempts_max()) then
    perform supabase_jobs.invalid(prefix || 'max_attempts', pg_catalog.format('max_attempts is between 1 and %s; got %s', supabase_jobs.max_attempts_max(), max_attempts));
  end if;
  if locale is not null and not supabase_jobs.locale_is_valid(locale) then
    perform supabase_jobs.invalid(prefix || 'locale', pg_catalog.format('locale must be a language tag like en or pt-BR; got %L', left(locale, 40)));
  end if;
end
$$;
revoke all on function supabase_jobs.check_job_input(text, jsonb, bytea, integer, text, text) from public;
grant execute on function supabase_jobs.check_job_input(text, jsonb, bytea, integer, text, text) to authenticated, service_role;

-- The checks every worker call shares, naming the field at fault: the job id,
-- the attempt (from 1), the sentence for the user when one is required (its
-- length is never refused: supabase_jobs.sentence shortens it) and timings.
create function supabase_jobs.check_call(id uuid, attempt int default null, error text default null,
                                         error_required boolean default false, timings jsonb default null)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if id is null then
    perform supabase_jobs.invalid('id', 'id is required');
  end if;
  perform supabase_jobs.check_attempt(attempt);
  if error_required and (error is null or btrim(error) = '') then
    perform supabase_jobs.invalid('error', 'error is required: say why the job stopped, in a sentence for the user');
  end if;
  if timings is not null and pg_catalog.jsonb_typeof(timings) <> 'object' then
    perform supabase_jobs.invalid('timings', 'timings must be a JSON object of phase -> {seconds, size}');
  end if;
end
$$;
revoke all on function supabase_jobs.check_call(uuid, int, text, boolean, jsonb) from public;
grant execute on function supabase_jobs.check_call(uuid, int, text, boolean, jsonb) to authenticated, service_role;

-- A user may only enqueue for themself; a worker may name any owner.
create function supabase_jobs.owner_for(owner_id uuid)
returns uuid
language plpgsql stable
set search_path = ''
as $$
begin
  if supabase_jobs.is_worker() then
    return owner_id;
  end if;
  if owner_id is not null and owner_id is distinct from (select auth.uid()) then
    raise exception using errcode = '42501', message = 'a user can only enqueue jobs of their own';
  end if;
  return (select auth.uid());
end
$$;
revoke all on function supabase_jobs.owner_for(uuid) from public;
grant execute on function supabase_jobs.owner_for(uuid) to authenticated, service_role;

-- Old signatures return public.jobs: replace them (same arguments, new row type).
drop function public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text);
drop function public.job_claim(uuid, text);
drop function public.job_claim_next(text[], integer, text);
drop function public.job_tick(uuid, real, text, integer, text);
drop function public.job_succeed(uuid, uuid, integer, jsonb, text);
drop function public.job_fail(uuid, text, integer, text, jsonb, text);
drop function public.job_retry(uuid, text, interval, integer, text);
drop function public.job_release(uuid, integer, text);
drop function public.job_cancel(uuid, text, text);
drop function public.job_reclaim_stale(interval, text);
drop function public.job_get(uuid, text);
drop function public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text);
drop function public.job_phase_history(text, integer, text);
drop function supabase_jobs.raise_not_closable(regclass, uuid, int, text);
drop function supabase_jobs.select_list(text, boolean);
drop function supabase_jobs.check_sentence(text, text, boolean);

create function public.job_enqueue(
  kind text,
  params jsonb default '{}'::jsonb,
  payload bytea default null,
  max_attempts integer default null,
  locale text default null,
  owner_id uuid default null,
  job_table text default 'jobs'
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_job_input(kind, params, payload, max_attempts, locale);
  insert into supabase_jobs.job as t (job_table, kind, params, payload, max_attempts, locale, owner_id)
  values (label, kind, coalesce(params, '{}'::jsonb), payload,
          coalesce(max_attempts, supabase_jobs.max_attempts_default()), locale, supabase_jobs.owner_for(owner_id))
  returning t.* into result;
  result.payload := null;
  return result;
end
$$;
comment on function public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text) is
  'Writes a queued job row and returns it (payload omitted). Bad input raises 22023 naming the field and writes nothing.';

-- items: [{"params": {...}, "payload": "<base64>", "max_attempts": n, "locale": "pt-BR", "owner_id": uuid}, ...]
create function public.job_enqueue_many(kind text, items jsonb, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  item record;
  worker boolean := supabase_jobs.is_worker();
  uid uuid := (select auth.uid());
  bytes bytea;
  attempts integer;
  owner uuid;
begin
  if items is null or pg_catalog.jsonb_typeof(items) <> 'array' or pg_catalog.jsonb_array_length(items) = 0 then
    perform supabase_jobs.invalid('items', 'items is a non-empty JSON array of {params, payload, max_attempts, locale, owner_id}');
  elsif pg_catalog.jsonb_array_length(items) > supabase_jobs.batch_max() then
    perform supabase_jobs.invalid('items', pg_catalog.format('at most %s items per call; got %s', supabase_jobs.batch_max(), pg_catalog.jsonb_array_length(items)));
  end if;
  perform supabase_jobs.check_job_input(kind, null, null, null, null);
  begin
    if not worker and exists (
      select 1 from pg_catalog.jsonb_array_elements(items) e
       where e.value ->> 'owner_id' is not null and (e.value ->> 'owner_id')::uuid is distinct from uid) then
      raise exception using errcode = '42501', message = 'a user can only enqueue jobs of their own';
    end if;
    return query
    with added as (
      insert into supabase_jobs.job as t (job_table, kind, params, payload, max_attempts, locale, owner_id)
      select label, kind, coalesce(e.value -> 'params', '{}'::jsonb),
             pg_catalog.decode(e.value ->> 'payload', 'base64'),
             coalesce((e.value ->> 'max_attempts')::integer, supabase_jobs.max_attempts_default()),
             e.value ->> 'locale',
             case when worker then (e.value ->> 'owner_id')::uuid else uid end
        from pg_catalog.jsonb_array_elements(items) with ordinality e
       order by e.ordinality
      returning t as j)
    select w.* from added cross join lateral supabase_jobs.without_payload(added.j) as w;
  exception when others then
    -- All or nothing: find the first bad item and name it.
    for item in select e.value, e.ordinality - 1 as i from pg_catalog.jsonb_array_elements(items) with ordinality e loop
      if pg_catalog.jsonb_typeof(item.value) <> 'object' then
        perform supabase_jobs.invalid(pg_catalog.format('items[%s]', item.i), 'each item is a JSON object');
      end if;
      begin
        bytes := pg_catalog.decode(item.value ->> 'payload', 'base64');
        attempts := (item.value ->> 'max_attempts')::integer;
        owner := (item.value ->> 'owner_id')::uuid;
      exception when others then
        perform supabase_jobs.invalid(pg_catalog.format('items[%s]', item.i),
          pg_catalog.format('items[%s] has a value of the wrong type (payload is base64, max_attempts an integer, owner_id a uuid): %s', item.i, sqlerrm));
      end;
      perform supabase_jobs.check_job_input(kind, item.value -> 'params', bytes, attempts,
        item.value ->> 'locale', pg_catalog.format('items[%s].', item.i));
      if not worker and owner is distinct from uid and owner is not null then
        raise exception using errcode = '42501', message = pg_catalog.format('items[%s]: a user can only enqueue jobs of their own', item.i);
      end if;
    end loop;
    raise;
  end;
end
$$;
comment on function public.job_enqueue_many(text, jsonb, text) is
  'Writes many queued jobs of one kind in one statement (all or nothing) and returns them in order (payload omitted). A bad item raises 22023 naming it (DETAIL field=items[<i>].<field>) and writes nothing.';

create function public.job_claim(id uuid, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  return query
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1
   where t.job_table = label and t.id = job_claim.id and t.status = 'queued'
     and t.available_at <= now() and t.attempts < t.max_attempts
  returning t.*;
end
$$;
comment on function public.job_claim(uuid, text) is
  'queued -> running for one job, returning the row with its payload; no row when the job is not yours to run (claimed by another worker, unknown, not yet available).';

create function public.job_claim_next(kinds text[] default null, "limit" integer default 1, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  return query
  with next as (
    select n.id from supabase_jobs.job as n
     where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
       and (kinds is null or n.kind = any (kinds))
     order by n.available_at, n.created_at, n.id
     limit "limit"
     for update skip locked)
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1
    from next where t.job_table = label and t.id = next.id
  returning t.*;
end
$$;
comment on function public.job_claim_next(text[], integer, text) is
  'Claims up to limit queued jobs of the given kinds (all kinds when null), oldest first, skipping rows other workers hold (FOR UPDATE SKIP LOCKED).';

create function public.job_tick(id uuid, progress real default null, stage text default null, attempt integer default null, job_table text default 'jobs')
returns public.job_status
language plpgsql
set search_path = ''
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
  -- Progress never decreases within an attempt: greatest() keeps the bar
  -- honest even when two ticks arrive out of order.
  update supabase_jobs.job as t
     set progress = greatest(t.progress, coalesce(job_tick.progress, t.progress)),
         stage = coalesce(job_tick.stage, t.stage), heartbeat_at = now(), updated_at = now()
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
comment on function public.job_tick(uuid, real, text, integer, text) is
  'One round trip per tick: writes progress (never backwards), stage and heartbeat on a running job and returns its status; cancelled comes back so the worker stops.';

create function public.job_succeed(id uuid, result_id uuid default null, attempt integer default null, timings jsonb default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt, timings => timings);
  update supabase_jobs.job as t set status = 'done', result_id = job_succeed.result_id, timings = coalesce(job_succeed.timings, t.timings)
   where t.job_table = label and t.id = job_succeed.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
  returning t.* into result;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'succeed');
  end if;
  return result;
end
$$;
comment on function public.job_succeed(uuid, uuid, integer, jsonb, text) is
  'running -> done, recording result_id and dropping the payload. Refuses a cancelled job (PT410), any other finished job (PT409), a queued one (55000), an unknown id (PT404).';

-- items: [{"id": uuid, "attempt": n, "result_id": uuid|null, "timings": {...}|null}, ...]
create function public.job_succeed_many(items jsonb, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if items is null or pg_catalog.jsonb_typeof(items) <> 'array' then
    perform supabase_jobs.invalid('items', 'items is a JSON array of {id, attempt, result_id, timings}');
  elsif pg_catalog.jsonb_array_length(items) > supabase_jobs.batch_max() then
    perform supabase_jobs.invalid('items', pg_catalog.format('at most %s items per call', supabase_jobs.batch_max()));
  end if;
  return query
  with wanted as (
    select w.id, w.attempt, w.result_id, w.timings
      from pg_catalog.jsonb_to_recordset(items) as w(id uuid, attempt integer, result_id uuid, timings jsonb)
     where w.id is not null),
  closed as (
    update supabase_jobs.job as t
       set status = 'done', result_id = w.result_id,
           timings = case when pg_catalog.jsonb_typeof(w.timings) = 'object' then w.timings else t.timings end
      from wanted w
     where t.job_table = label and t.id = w.id and t.status = 'running' and (w.attempt is null or t.attempts = w.attempt)
    returning t as j)
  select c.* from closed cross join lateral supabase_jobs.without_payload(closed.j) as c;
end
$$;
comment on function public.job_succeed_many(jsonb, text) is
  'running -> done for many jobs in one statement, each with its own result_id and timings (payload dropped). Returns the rows that landed; a job missing from the result was not closable (call job_succeed for the reason).';

create function public.job_fail(id uuid, error text, attempt integer default null, error_code text default null, timings jsonb default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt, error, true, timings);
  if error_code is not null and error_code !~ '^[a-z][a-z0-9_]{0,63}$' then
    perform supabase_jobs.invalid('error_code', pg_catalog.format('error_code is a snake_case identifier; got %L', left(error_code, 80)));
  end if;
  update supabase_jobs.job as t
     set status = 'failed', error = supabase_jobs.sentence(job_fail.error), error_code = coalesce(job_fail.error_code, 'failed'),
         timings = coalesce(job_fail.timings, t.timings)
   where t.job_table = label and t.id = job_fail.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
  returning t.* into result;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'fail');
  end if;
  return result;
end
$$;
comment on function public.job_fail(uuid, text, integer, text, jsonb, text) is
  'running -> failed with a sentence for the user in error (shortened to the limit, never refused for its length). Same refusals as job_succeed.';

create function public.job_retry(id uuid, error text, delay interval default '0 seconds', attempt integer default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt, error, true);
  if delay is null or delay < interval '0' then
    perform supabase_jobs.invalid('delay', 'delay must be zero or positive');
  end if;
  update supabase_jobs.job as t
     set status = (case when t.attempts >= t.max_attempts then 'failed' else 'queued' end)::public.job_status,
         error = supabase_jobs.sentence(job_retry.error),
         error_code = case when t.attempts >= t.max_attempts then 'attempts_exhausted' else 'retrying' end,
         available_at = case when t.attempts >= t.max_attempts then t.available_at else now() + delay end
   where t.job_table = label and t.id = job_retry.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
  returning t.* into result;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'retry');
  end if;
  result.payload := null;
  return result;
end
$$;
comment on function public.job_retry(uuid, text, interval, integer, text) is
  'After an unexpected failure: running -> queued, claimable again after delay; running -> failed (error_code attempts_exhausted) once max_attempts is spent.';

create function public.job_release(id uuid, attempt integer default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt);
  update supabase_jobs.job as t set status = 'queued', attempts = t.attempts - 1
   where t.job_table = label and t.id = job_release.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
  returning t.* into result;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'release');
  end if;
  result.payload := null;
  return result;
end
$$;
comment on function public.job_release(uuid, integer, text) is
  'A worker giving a job back cleanly (shutdown, wall-clock limit): running -> queued without spending the attempt.';

create function public.job_cancel(id uuid, reason text default null, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  return query
  with cancelled as (
    update supabase_jobs.job as t set status = 'cancelled', error = supabase_jobs.sentence(reason)
     where t.job_table = label and t.id = job_cancel.id and t.status in ('queued', 'running')
    returning t as j)
  select c.* from cancelled cross join lateral supabase_jobs.without_payload(cancelled.j) as c;
end
$$;
comment on function public.job_cancel(uuid, text, text) is
  'Asks a job to stop: queued/running -> cancelled, payload dropped. Idempotent: no row back for an unknown, finished or already cancelled job (a long reason is shortened, never refused). The worker learns it on its next tick.';

create function public.job_reclaim_stale(stale_after interval, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if stale_after is null then
    raise exception using errcode = '22004',
      message = 'stale_after is required: reclaim_stale will not guess how long a silent worker is dead',
      detail = 'field=stale_after';
  end if;
  if stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  -- The scan and the write are one statement; the write re-checks status,
  -- attempts and the heartbeat on the row it finally locks, so a job that
  -- finished, ticked or was reclaimed meanwhile is left alone.
  return query
  with stale as (
    select s.id, s.attempts from supabase_jobs.job as s
     where s.job_table = label and s.status = 'running' and coalesce(s.heartbeat_at, s.started_at) < now() - stale_after)
  , reclaimed as (
  update supabase_jobs.job as t
     set status = (case when t.attempts >= t.max_attempts then 'failed' else 'queued' end)::public.job_status,
         error = case when t.attempts >= t.max_attempts then supabase_jobs.user_message('worker_lost', t.locale, t.attempts) else t.error end,
         error_code = case when t.attempts >= t.max_attempts then 'worker_lost' else t.error_code end
    from stale
   where t.job_table = label and t.id = stale.id and t.status = 'running' and t.attempts = stale.attempts
     and coalesce(t.heartbeat_at, t.started_at) < now() - stale_after
  returning t as j)
  select r.* from reclaimed cross join lateral supabase_jobs.without_payload(reclaimed.j) as r;
end
$$;
comment on function public.job_reclaim_stale(interval, text) is
  'Readmits running jobs whose worker went silent for stale_after (last heartbeat, else started_at): back to queued, or failed with a sentence for the user once max_attempts is spent. Refuses without stale_after (22004).';

create function public.job_get(id uuid, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id);
  select t.* into result from supabase_jobs.job as t where t.job_table = label and t.id = job_get.id;
  if result.id is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  result.payload := null;
  return result;
end
$$;
comment on function public.job_get(uuid, text) is
  'One job (payload omitted). PT404 when it does not exist or is not yours.';

-- The status alone, for a worker's cancellation check between writes: a primary-key
-- read, no row to ship. With attempt, PT409 once another attempt owns the job.
create function public.job_status(id uuid, attempt integer default null, job_table text default 'jobs')
returns public.job_status
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  found_status public.job_status;
  found_attempts integer;
begin
  perform supabase_jobs.check_call(id, attempt);
  select t.status, t.attempts into found_status, found_attempts
    from supabase_jobs.job as t where t.job_table = label and t.id = job_status.id;
  if found_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  if attempt is not null and found_status = 'running' and found_attempts <> attempt then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'watch');
  end if;
  return found_status;
end
$$;
comment on function public.job_status(uuid, integer, text) is
  'The status of one job (PT404 when it does not exist or is not yours); with attempt, PT409 once another attempt owns it. What a worker reads between writes to learn of a cancellation.';

create function public.job_list_recent(
  kind text default null,
  status public.job_status default null,
  statuses public.job_status[] default null,
  "limit" integer default 20,
  cursor text default null,
  job_table text default 'jobs'
)
returns setof supabase_jobs.job
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  wanted public.job_status[];
  after_created timestamptz;
  after_id uuid;
  parts text[];
begin
  if status is not null and statuses is not null then
    perform supabase_jobs.invalid('statuses', 'give status or statuses, not both');
  end if;
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  wanted := case when status is not null then array[status] else statuses end;
  if cursor is not null then
    parts := pg_catalog.regexp_match(cursor, '^(.{10,40})~([0-9a-fA-F-]{36})$');
    if parts is null then
      perform supabase_jobs.invalid('cursor', 'cursor is not one this function returned (expected <created_at>~<id>)');
    end if;
    begin
      after_created := parts[1]::timestamptz;
      after_id := parts[2]::uuid;
    exception when others then
      perform supabase_jobs.invalid('cursor', 'cursor is not one this function returned (expected <created_at>~<id>)');
    end;
  end if;
  return query
  select w.* from supabase_jobs.job as t cross join lateral supabase_jobs.without_payload(t) as w
   where t.job_table = label and t.is_active
     and (job_list_recent.kind is null or t.kind = job_list_recent.kind)
     and (wanted is null or t.status = any (wanted))
     and (after_created is null or (t.created_at, t.id) < (after_created, after_id))
   order by t.created_at desc, t.id desc
   limit "limit";
end
$$;
comment on function public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text) is
  'Newest jobs first, filtered by kind and status(es), keyset-paginated: pass "<created_at>~<id>" of the last row as cursor. [] when nothing matches.';

create function public.job_phase_history(kind text, "limit" integer default 50, job_table text default 'jobs')
returns table (timings jsonb, finished_at timestamptz)
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if kind is null or kind = '' then
    perform supabase_jobs.invalid('kind', 'kind is required: a phase history is per kind of work');
  end if;
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  return query
  select t.timings, t.finished_at from supabase_jobs.job as t
   where t.job_table = label and t.kind = job_phase_history.kind and t.status = 'done' and t.timings is not null and t.is_active
   order by t.finished_at desc, t.id desc
   limit "limit";
end
$$;
comment on function public.job_phase_history(text, integer, text) is
  'Phase timings of the latest done jobs of a kind, newest first: what PhasePlan.fromHistory fits medians and per-kilochar slopes from.';

-- ---------------------------------------------------------------------------
-- The schedules' bodies and Realtime Authorization, static over the parent.
create or replace function supabase_jobs.backstop()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  waited interval := (select s.backstop_after from supabase_jobs.settings s where s.id);
  batch record;
  sent integer := 0;
begin
  for batch in
    select j.job_table, j.kind, pg_catalog.count(*)::integer as n from supabase_jobs.job as j
     where j.status = 'queued' and j.available_at <= now() - waited
     group by j.job_table, j.kind order by j.job_table, j.kind
  loop
    if supabase_jobs.kick(batch.job_table, batch.kind, null, batch.n, 'backstop') is not null then
      sent := sent + 1;
    end if;
  end loop;
  return sent;
end
$$;

create or replace function supabase_jobs.cleanup()
returns table (what text, deleted bigint)
language plpgsql
set search_path = ''
as $$
declare
  settings supabase_jobs.settings;
  n bigint;
  t record;
begin
  select * into settings from supabase_jobs.settings s where s.id;
  if pg_catalog.to_regclass('cron.job_run_details') is not null then
    execute 'delete from cron.job_run_details d where coalesce(d.end_time, d.start_time) < now() - $1'
      using settings.cron_history_retention;
    get diagnostics n = row_count;
    what := 'cron.job_run_details';
    deleted := n;
    return next;
  end if;
  if settings.finished_retention is not null then
    for t in select r.label from supabase_jobs.job_tables r order by r.label loop
      delete from supabase_jobs.job as j
       where j.job_table = t.label and j.status in ('done', 'failed', 'cancelled') and j.finished_at < now() - settings.finished_retention;
      get diagnostics n = row_count;
      what := t.label;
      deleted := n;
      return next;
    end loop;
  end if;
end
$$;

create or replace function supabase_jobs.owns_job_topic(topic text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  uid uuid := (select auth.uid());
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
  -- This runs as the owner, so RLS does not check ownership for us: one
  -- primary-key probe per job table.
  return exists (select 1 from supabase_jobs.job j where j.id = pg_catalog.substr(topic, 5)::uuid and j.owner_id = uid);
end
$$;

-- ---------------------------------------------------------------------------
-- Per function, in one list: who may call it (nothing by default, then exactly
-- what each role needs), and whether it plans once per session. The hot
-- statements filter the partitioned parent by a parameter (job_table); left to
-- itself, the plan cache re-plans them on every call (a custom plan prunes
-- partitions at plan time and looks cheaper than the generic plan, which
-- prunes at execution). Listings keep custom plans: their optional filters
-- pick an index per call.
do $$
declare
  f record;
begin
  for f in select * from (values
      -- function,                                                                          api,   users, generic plan
      ('public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text)',                   true,  true,  true),
      ('public.job_enqueue_many(text, jsonb, text)',                                          true,  true,  true),
      ('public.job_claim(uuid, text)',                                                        true,  false, true),
      ('public.job_claim_next(text[], integer, text)',                                        true,  false, true),
      ('public.job_tick(uuid, real, text, integer, text)',                                    true,  false, true),
      ('public.job_succeed(uuid, uuid, integer, jsonb, text)',                                true,  false, true),
      ('public.job_succeed_many(jsonb, text)',                                                true,  false, true),
      ('public.job_fail(uuid, text, integer, text, jsonb, text)',                             true,  false, true),
      ('public.job_retry(uuid, text, interval, integer, text)',                               true,  false, true),
      ('public.job_release(uuid, integer, text)',                                             true,  false, true),
      ('public.job_cancel(uuid, text, text)',                                                 true,  true,  true),
      ('public.job_reclaim_stale(interval, text)',                                            true,  false, false),
      ('public.job_get(uuid, text)',                                                          true,  true,  true),
      ('public.job_status(uuid, integer, text)',                                              true,  true,  true),
      ('public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text)', true, true, false),
      ('public.job_phase_history(text, integer, text)',                                       true,  true,  false),
      ('supabase_jobs.job_table_label(text)',                                                 false, false, true),
      ('supabase_jobs.raise_not_closable(text, uuid, int, text)',                             false, false, true),
      ('supabase_jobs.after_jobs_inserted()',                                                 false, false, true),
      ('supabase_jobs.after_jobs_updated()',                                                  false, false, true),
      ('supabase_jobs.send_job_messages(uuid[], boolean)',                                    false, false, true),
      ('supabase_jobs.owns_job_topic(text)',                                                  false, false, true)
    ) as v(fn, api, users, generic)
  loop
    if f.api then
      execute pg_catalog.format('revoke all on function %s from public, anon, authenticated', f.fn);
      execute pg_catalog.format('grant execute on function %s to service_role', f.fn);
      if f.users then
        execute pg_catalog.format('grant execute on function %s to authenticated', f.fn);
      end if;
    end if;
    if f.generic then
      execute pg_catalog.format('alter function %s set plan_cache_mode = force_generic_plan', f.fn);
    end if;
  end loop;
end
$$;

-- ---------------------------------------------------------------------------
-- Realtime Authorization reads each message's own topic: a connection
-- authorized for its own jobs:<uid> must not read messages stored under any
-- other topic (the 0.1.0 policy checked only realtime.topic()).
drop policy if exists supabase_jobs_read_job_topics on realtime.messages;
create policy supabase_jobs_read_job_topics on realtime.messages
  for select to authenticated
  using (
    extension = 'broadcast'
    and topic = (select realtime.topic())
    and (select supabase_jobs.owns_job_topic((select realtime.topic())))
  );
