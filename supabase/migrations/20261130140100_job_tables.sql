-- supabase-jobs 0002 — job tables: one definition, any number of tables.
--
-- Purpose: the seed's abstract BaseJobModel. supabase_jobs.create_job_table(name)
-- is the only place a job table's shape is written; the default table public.jobs
-- is created through it, and a service creates further tables under names it
-- chooses the same way. Every job_* function serves every registered table.
-- Invariants (named CHECK constraints and the guard trigger, for every caller):
--   * terminal rows have finished_at and no payload; non-terminal rows have no finished_at;
--   * running rows have started_at; failed rows say why (error);
--   * progress is a percentage in [0, 100]; attempts never exceed max_attempts;
--   * kind, params, payload, locale have documented formats and sizes;
--   * status changes only along supabase_jobs.transitions (SQLSTATE SJ001 otherwise);
--   * terminal rows are frozen (only is_active may change);
--   * anon/authenticated may insert queued rows of their own and move their own
--     rows to cancelled; nothing else (SQLSTATE 42501).
-- Do not add columns to a job table by hand: the job_* functions return the
-- row type public.jobs, and every registered table must keep its shape. Keep
-- application data in params or in the table result_id points to.
-- Breaking: no (new objects only).

-- ---------------------------------------------------------------------------
-- Limits, in one place.
create function supabase_jobs.limits()
returns table (kind_max int, params_max_bytes int, payload_max_bytes int, error_max int, stage_max int, max_attempts_max int, list_max int)
language sql immutable parallel safe
set search_path = ''
as $$ select 64, 65536, 10485760, 2000, 200, 100, 1000 $$;
comment on function supabase_jobs.limits() is
  'Documented input limits: kind <= 64 chars, params <= 64 KiB of JSON, payload <= 10 MiB, error <= 2000 chars, stage <= 200 chars, max_attempts <= 100, list limit <= 1000.';
revoke all on function supabase_jobs.limits() from public;
grant execute on function supabase_jobs.limits() to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- Registry of job tables.
create table supabase_jobs.job_tables (
  table_name regclass primary key,
  created_at timestamptz not null default now()
);
comment on table supabase_jobs.job_tables is
  'Job tables created by supabase_jobs.create_job_table. The job_* functions refuse any table not listed here.';
alter table supabase_jobs.job_tables enable row level security;
create policy job_tables_readable on supabase_jobs.job_tables for select to authenticated, service_role using (true);
grant select on supabase_jobs.job_tables to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- Raising errors the TypeScript adapters map to classes (see src/lib/errors.ts).
create function supabase_jobs.invalid(field text, message text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  raise exception using errcode = '22023', message = message, detail = 'field=' || field,
    hint = 'Nothing was written.';
end
$$;
revoke all on function supabase_jobs.invalid(text, text) from public;
grant execute on function supabase_jobs.invalid(text, text) to authenticated, service_role;

-- Resolves a job table name ('jobs', 'public.jobs', 'my_schema.exports') to a
-- registered table, refusing anything else before it reaches dynamic SQL.
create function supabase_jobs.resolve_table(job_table text)
returns regclass
language plpgsql stable
set search_path = ''
as $$
declare
  resolved regclass;
begin
  if job_table is null or job_table !~ '^([a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}$' then
    perform supabase_jobs.invalid('job_table',
      format('job_table must be a lowercase table name like "jobs" or "app.exports", got %L', left(job_table, 100)));
  end if;
  resolved := to_regclass(case when position('.' in job_table) > 0 then job_table else 'public.' || job_table end);
  if resolved is null or not exists (select 1 from supabase_jobs.job_tables t where t.table_name = resolved) then
    raise exception using errcode = '42P01',
      message = format('%s is not a job table', job_table),
      hint = 'Create it with: select supabase_jobs.create_job_table(''<name>'');';
  end if;
  return resolved;
end
$$;
revoke all on function supabase_jobs.resolve_table(text) from public;
grant execute on function supabase_jobs.resolve_table(text) to authenticated, service_role;

-- The column list of the row type every job_* function returns, read from
-- public.jobs itself so there is no second copy of the shape. Without payload,
-- the payload column is null (get/list never carry megabytes; claim does).
create function supabase_jobs.select_list(alias text, with_payload boolean)
returns text
language sql stable
set search_path = ''
as $$
  select string_agg(
    case when a.attname = 'payload' and not with_payload
      then 'null::bytea as payload'
      else quote_ident(alias) || '.' || quote_ident(a.attname) end,
    ', ' order by a.attnum)
  from pg_catalog.pg_attribute a
  where a.attrelid = pg_catalog.to_regclass('public.jobs') and a.attnum > 0 and not a.attisdropped
$$;
revoke all on function supabase_jobs.select_list(text, boolean) from public;
grant execute on function supabase_jobs.select_list(text, boolean) to authenticated, service_role;

-- Sentences for the person in front of the screen, in their language.
create function supabase_jobs.user_message(key text, locale text, n int default null)
returns text
language sql immutable parallel safe
set search_path = ''
as $$
  select case
    when coalesce(lower(locale), '') like 'pt%' then
      case key
        when 'worker_lost' then format('O processamento parou inesperadamente %s vez(es) e não foi concluído. Tente novamente mais tarde.', n)
        when 'cancelled' then 'Cancelado a pedido do usuário.'
        else key
      end
    else
      case key
        when 'worker_lost' then format('The work stopped unexpectedly %s time(s) and could not finish. Please try again later.', n)
        when 'cancelled' then 'Cancelled at the user''s request.'
        else key
      end
  end
$$;
comment on function supabase_jobs.user_message(text, text, int) is
  'The sentences the database itself writes into error (en and pt-BR; pt* locales get pt-BR, anything else English).';
revoke all on function supabase_jobs.user_message(text, text, int) from public;
grant execute on function supabase_jobs.user_message(text, text, int) to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- The guard: the state machine and the per-role rules, for whatever SQL arrives.
create function supabase_jobs.guard_job()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  restricted boolean := current_user in ('anon', 'authenticated');
begin
  if tg_op = 'INSERT' then
    if new.status <> 'queued' or new.attempts <> 0 or new.started_at is not null or new.finished_at is not null then
      raise exception using errcode = 'SJ001',
        message = format('a job starts queued with no attempts; got status %s', new.status);
    end if;
    if restricted and new.owner_id is distinct from (select auth.uid()) then
      raise exception using errcode = '42501', message = 'a user can only enqueue jobs of their own';
    end if;
    new.created_at := now();
    new.updated_at := now();
    new.available_at := greatest(coalesce(new.available_at, now()), now());
    new.progress := 0;
    return new;
  end if;

  -- UPDATE
  if supabase_jobs.is_terminal(old.status) then
    if (to_jsonb(new) - 'is_active' - 'updated_at') is distinct from (to_jsonb(old) - 'is_active' - 'updated_at') then
      raise exception using errcode = 'SJ001',
        message = format('job %s is %s, a terminal state: it cannot change', old.id, old.status),
        hint = 'Enqueue a new job to run the work again.';
    end if;
    new.updated_at := now();
    return new;
  end if;

  if restricted then
    if new.status <> 'cancelled'
       or (to_jsonb(new) - 'status' - 'error' - 'updated_at') is distinct from (to_jsonb(old) - 'status' - 'error' - 'updated_at') then
      raise exception using errcode = '42501',
        message = 'a user can only cancel their own jobs; every other change is the worker''s';
    end if;
  end if;

  if new.status is distinct from old.status then
    if not exists (select 1 from supabase_jobs.transitions t where t.from_status = old.status and t.to_status = new.status) then
      raise exception using errcode = 'SJ001',
        message = format('illegal transition for job %s: %s -> %s', old.id, old.status, new.status),
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
        new.error := coalesce(nullif(btrim(new.error), ''), supabase_jobs.user_message('cancelled', old.locale));
      else
        null;
    end case;
  elsif old.status = 'queued' and not restricted then
    -- A queued row has nothing a worker may touch but its schedule.
    if (to_jsonb(new) - 'available_at' - 'updated_at' - 'is_active') is distinct from (to_jsonb(old) - 'available_at' - 'updated_at' - 'is_active') then
      raise exception using errcode = 'SJ001', message = format('job %s is queued: claim it before writing progress or results', old.id);
    end if;
  end if;
  new.updated_at := now();
  return new;
end
$$;
comment on function supabase_jobs.guard_job() is
  'BEFORE INSERT OR UPDATE on every job table: enforces supabase_jobs.transitions, freezes terminal rows, limits users to enqueue/cancel, and derives started_at/finished_at/payload/progress from the status.';
revoke all on function supabase_jobs.guard_job() from public;

-- ---------------------------------------------------------------------------
-- Per-table triggers, policies and grants, as a list of installers. Each later
-- migration that adds per-table behaviour registers its own installer with
-- supabase_jobs.add_attachment (which also runs it over the existing tables),
-- so no migration restates what another installed. Every installer is
-- idempotent (drop ... if exists, then create), so attach() is a repair too.
create table supabase_jobs.attachments (
  name text primary key,
  install regprocedure not null,
  run_order integer not null unique
);
comment on table supabase_jobs.attachments is
  'Installers run by supabase_jobs.attach(tbl) for every job table, in run_order order: each a function (tbl regclass) returns void.';
alter table supabase_jobs.attachments enable row level security;
create policy attachments_readable on supabase_jobs.attachments for select to service_role using (true);
grant select on supabase_jobs.attachments to service_role;

create function supabase_jobs.attach(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
declare
  installer regprocedure;
begin
  for installer in select a.install from supabase_jobs.attachments a order by a.run_order loop
    execute format('select %s($1)', installer::oid::regproc) using tbl;
  end loop;
end
$$;
comment on function supabase_jobs.attach(regclass) is
  'Installs (or repairs) every per-table trigger, policy and grant on a job table: runs each installer in supabase_jobs.attachments.';
revoke all on function supabase_jobs.attach(regclass) from public;

create function supabase_jobs.add_attachment(name text, install regprocedure, run_order integer)
returns void
language plpgsql
set search_path = ''
as $$
begin
  insert into supabase_jobs.attachments (name, install, run_order) values (name, install, run_order)
  on conflict on constraint attachments_pkey do update set install = excluded.install, run_order = excluded.run_order;
  perform supabase_jobs.attach(t.table_name) from supabase_jobs.job_tables t;
end
$$;
comment on function supabase_jobs.add_attachment(text, regprocedure, integer) is
  'Registers a per-table installer and re-attaches every registered job table, so new behaviour reaches the tables that already exist.';
revoke all on function supabase_jobs.add_attachment(text, regprocedure, integer) from public;

-- The base: the state-machine guard, RLS with owner policies, and the grants.
create function supabase_jobs.attach_base(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
begin
  execute format('drop trigger if exists guard_job on %s', tbl);
  execute format('create trigger guard_job before insert or update on %s for each row execute function supabase_jobs.guard_job()', tbl);

  execute format('alter table %s enable row level security', tbl);
  execute format('drop policy if exists owner_reads on %s', tbl);
  execute format('create policy owner_reads on %s for select to authenticated using (owner_id = (select auth.uid()))', tbl);
  execute format('drop policy if exists owner_enqueues on %s', tbl);
  execute format('create policy owner_enqueues on %s for insert to authenticated with check (owner_id = (select auth.uid()))', tbl);
  execute format('drop policy if exists owner_cancels on %s', tbl);
  execute format('create policy owner_cancels on %s for update to authenticated using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()))', tbl);

  execute format('revoke all on %s from public, anon, authenticated', tbl);
  execute format('grant select on %s to authenticated', tbl);
  execute format('grant insert (kind, params, payload, max_attempts, locale) on %s to authenticated', tbl);
  execute format('grant update (status, error) on %s to authenticated', tbl);
  execute format('grant select, insert, update, delete on %s to service_role', tbl);
end
$$;
revoke all on function supabase_jobs.attach_base(regclass) from public;
select supabase_jobs.add_attachment('base', 'supabase_jobs.attach_base(regclass)', 0);

-- ---------------------------------------------------------------------------
-- The one definition of a job table.
create function supabase_jobs.create_job_table(name text, schema_name text default 'public')
returns regclass
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass;
  qualified text;
begin
  if name is null or name !~ '^[a-z_][a-z0-9_]{0,47}$' then
    perform supabase_jobs.invalid('name', format('a job table name is lowercase letters, digits and _ (at most 48), starting with a letter or _; got %L', left(name, 100)));
  end if;
  if schema_name is null or schema_name !~ '^[a-z_][a-z0-9_]{0,62}$' then
    perform supabase_jobs.invalid('schema_name', format('schema_name must be a lowercase identifier; got %L', left(schema_name, 100)));
  end if;
  if schema_name in ('supabase_jobs', 'auth', 'realtime', 'storage', 'pg_catalog', 'information_schema') then
    perform supabase_jobs.invalid('schema_name', format('job tables do not belong in schema %s', schema_name));
  end if;
  qualified := format('%I.%I', schema_name, name);
  if to_regclass(qualified) is not null then
    perform supabase_jobs.invalid('name', format('%s already exists', qualified));
  end if;

  execute format($ddl$
    create table %1$s (
      id uuid not null default gen_random_uuid() primary key,
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
      max_attempts integer not null default 3,
      started_at timestamptz,
      finished_at timestamptz,
      progress real not null default 0,
      stage text,
      heartbeat_at timestamptz,
      owner_id uuid default auth.uid() references auth.users (id) on delete cascade,
      locale text,
      available_at timestamptz not null default now(),
      timings jsonb,
      constraint %2$I check (kind ~ '^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$'),
      constraint %3$I check (jsonb_typeof(params) = 'object' and octet_length(params::text) <= 65536),
      constraint %4$I check (payload is null or octet_length(payload) <= 10485760),
      constraint %5$I check (supabase_jobs.is_terminal(status) = (finished_at is not null)),
      constraint %6$I check (not supabase_jobs.is_terminal(status) or payload is null),
      constraint %7$I check (status <> 'running' or started_at is not null),
      constraint %8$I check (status <> 'failed' or error is not null),
      constraint %9$I check (progress >= 0 and progress <= 100),
      constraint %10$I check (attempts >= 0 and max_attempts between 1 and 100 and attempts <= max_attempts),
      constraint %11$I check (error is null or char_length(error) <= 2000),
      constraint %12$I check (stage is null or char_length(stage) <= 200),
      constraint %13$I check (locale is null or locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$'),
      constraint %14$I check (timings is null or jsonb_typeof(timings) = 'object')
    )$ddl$,
    qualified,
    name || '_kind_format', name || '_params_object', name || '_payload_size',
    name || '_finished_at_iff_terminal', name || '_terminal_has_no_payload',
    name || '_running_has_started_at', name || '_failed_has_error', name || '_progress_percent',
    name || '_attempts_within_max', name || '_error_length', name || '_stage_length',
    name || '_locale_format', name || '_timings_object');
  tbl := qualified::regclass;

  execute format('create index %I on %s (status, created_at desc)', name || '_status_idx', tbl);
  execute format('create index %I on %s (kind, created_at desc, id desc)', name || '_kind_created_idx', tbl);
  execute format('create index %I on %s (owner_id, created_at desc, id desc)', name || '_owner_created_idx', tbl);
  execute format('create index %I on %s (created_at desc, id desc)', name || '_created_idx', tbl);
  execute format('create index %I on %s (available_at, created_at, id) where status = ''queued''', name || '_claim_idx', tbl);
  execute format('create index %I on %s ((coalesce(heartbeat_at, started_at))) where status = ''running''', name || '_reclaim_idx', tbl);

  execute format('comment on table %s is %L', tbl,
    'Jobs: one row per unit of long-running work, read by the interface. Status moves queued -> running -> done/failed/cancelled (docs/state-machine.md); write it only through the job_* functions.');
  execute format('comment on column %s.id is %L', tbl, 'The job id the interface follows.');
  execute format('comment on column %s.is_active is %L', tbl, 'False hides the row from listings (soft delete); the only change a finished row accepts.');
  execute format('comment on column %s.created_at is %L', tbl, 'When the job was enqueued.');
  execute format('comment on column %s.updated_at is %L', tbl, 'Last change of any kind, including heartbeats.');
  execute format('comment on column %s.kind is %L', tbl, 'Which work this is: the worker branches on it and the interface filters by it.');
  execute format('comment on column %s.status is %L', tbl, 'queued -> running -> done / failed / cancelled. cancelled is terminal but not a failure.');
  execute format('comment on column %s.params is %L', tbl, 'Small input, as a JSON object (at most 64 KiB).');
  execute format('comment on column %s.payload is %L', tbl, 'Large input (at most 10 MiB), e.g. the uploaded file. Dropped when the job finishes; only claim returns it.');
  execute format('comment on column %s.result_id is %L', tbl, 'The row the work produced, so the screen links straight to it.');
  execute format('comment on column %s.error is %L', tbl, 'Why it stopped, written for the user (never a stack trace). Also the last error of a job being retried.');
  execute format('comment on column %s.error_code is %L', tbl, 'Stable code for the error: cancelled, worker_lost, failed, or the handler''s own.');
  execute format('comment on column %s.attempts is %L', tbl, 'How many times a worker has claimed it.');
  execute format('comment on column %s.max_attempts is %L', tbl, 'Claims allowed before a job that keeps killing its worker is closed as failed.');
  execute format('comment on column %s.started_at is %L', tbl, 'When the current attempt was claimed.');
  execute format('comment on column %s.finished_at is %L', tbl, 'When it reached done, failed or cancelled.');
  execute format('comment on column %s.progress is %L', tbl, 'Percent done (0-100), from measured phase timings or real counters; never decreases within an attempt.');
  execute format('comment on column %s.stage is %L', tbl, 'The phase running now, as the progress bar labels it.');
  execute format('comment on column %s.heartbeat_at is %L', tbl, 'Last tick from the worker; reclaim_stale readmits running jobs whose heartbeat (or start) is older than stale_after.');
  execute format('comment on column %s.owner_id is %L', tbl, 'The user who enqueued it (auth.uid()); only they can see or cancel it.');
  execute format('comment on column %s.locale is %L', tbl, 'The user''s language (e.g. pt-BR) for the sentences in error.');
  execute format('comment on column %s.available_at is %L', tbl, 'Not claimable before this time (retry backoff).');
  execute format('comment on column %s.timings is %L', tbl, 'Seconds (and input size) per phase, recorded by the tracker; PhasePlan.fromHistory fits plans from them.');

  insert into supabase_jobs.job_tables (table_name) values (tbl);
  perform supabase_jobs.attach(tbl);
  return tbl;
end
$$;
comment on function supabase_jobs.create_job_table(text, text) is
  'Creates a job table under a name you choose (the seed''s BaseJobModel subclass), with the checks, indexes, comments, RLS, grants and triggers every job table has. Example: select supabase_jobs.create_job_table(''exports'');';
revoke all on function supabase_jobs.create_job_table(text, text) from public;

-- The default table that works out of the box.
select supabase_jobs.create_job_table('jobs');
