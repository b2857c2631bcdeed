-- The job row: supabase_jobs.job, partitioned by job_table, holds every job of
-- every job table (public.jobs and each one made with create_job_table is a
-- partition). Its rules live in one function, supabase_jobs.job_row_rules,
-- called by the guards: the BEFORE UPDATE trigger for every update, and the
-- insert trigger (13_kick, after_jobs_inserted) once per statement over the
-- rows it inserted, so no statement re-reads a CHECK (docs/architecture.md,
-- "Statements PostgreSQL reads again"). The guards enforce the state machine and the rules
-- on every write, whoever makes it.

-- The row rules, each named and written as PostgreSQL prints a CHECK, so a
-- broken rule raises 23514 naming it and quoting it as a constraint would.
create or replace function supabase_jobs.job_row_rules(
  id uuid,
  kind text,
  status public.job_status,
  params jsonb,
  payload bytea,
  error text,
  attempts integer,
  max_attempts integer,
  started_at timestamptz,
  finished_at timestamptz,
  progress real,
  stage text,
  locale text,
  timings jsonb,
  heartbeat_ms integer,
  tags text[],
  idempotency_key text,
  concurrency_key text,
  parent_id uuid,
  expected_seconds real
)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  -- One expression for the row that keeps every rule (nearly all of them);
  -- the rule it breaks is looked for only when it breaks one.
  if (((attempts >= 0) AND ((max_attempts >= 1) AND (max_attempts <= 100)) AND (attempts <= max_attempts))) is not false
     and (((concurrency_key IS NULL) OR ((char_length(concurrency_key) >= 1) AND (char_length(concurrency_key) <= 200)))) is not false
     and (((error IS NULL) OR (char_length(error) <= 2000))) is not false
     and (((expected_seconds IS NULL) OR ((expected_seconds > (0)::double precision) AND (expected_seconds < 'Infinity'::real)))) is not false
     and (((status <> 'failed'::public.job_status) OR (error IS NOT NULL))) is not false
     and (((status = ANY (ARRAY['done'::public.job_status, 'failed'::public.job_status, 'cancelled'::public.job_status])) = (finished_at IS NOT NULL))) is not false
     and (((heartbeat_ms IS NULL) OR ((heartbeat_ms >= 10) AND (heartbeat_ms <= 3600000)))) is not false
     and (((idempotency_key IS NULL) OR ((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 200)))) is not false
     and (((kind ~ '^[A-Za-z0-9][A-Za-z0-9_.:/-]*$'::text) AND (char_length(kind) <= 64))) is not false
     and (((locale IS NULL) OR (locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$'::text))) is not false
     and (((jsonb_typeof(params) = 'object'::text) AND (octet_length((params)::text) <= 65536))) is not false
     and ((parent_id IS DISTINCT FROM id)) is not false
     and (((payload IS NULL) OR (octet_length(payload) <= 10485760))) is not false
     and (((progress >= (0)::double precision) AND (progress <= (100)::double precision))) is not false
     and (((status <> 'running'::public.job_status) OR (started_at IS NOT NULL))) is not false
     and (((stage IS NULL) OR (char_length(stage) <= 200))) is not false
     and (((cardinality(tags) <= 10) AND (array_position(tags, NULL::text) IS NULL))) is not false
     and (((status <> ALL (ARRAY['done'::public.job_status, 'failed'::public.job_status, 'cancelled'::public.job_status])) OR (payload IS NULL))) is not false
     and (((timings IS NULL) OR (jsonb_typeof(timings) = 'object'::text))) is not false then
    return true;
  end if;
  if (((attempts >= 0) AND ((max_attempts >= 1) AND (max_attempts <= 100)) AND (attempts <= max_attempts))) is false then
    raise exception using errcode = '23514', constraint = 'job_attempts_within_max', message = 'a job row breaks job_attempts_within_max: ((attempts >= 0) AND ((max_attempts >= 1) AND (max_attempts <= 100)) AND (attempts <= max_attempts))';
  end if;
  if (((concurrency_key IS NULL) OR ((char_length(concurrency_key) >= 1) AND (char_length(concurrency_key) <= 200)))) is false then
    raise exception using errcode = '23514', constraint = 'job_concurrency_key_length', message = 'a job row breaks job_concurrency_key_length: ((concurrency_key IS NULL) OR ((char_length(concurrency_key) >= 1) AND (char_length(concurrency_key) <= 200)))';
  end if;
  if (((error IS NULL) OR (char_length(error) <= 2000))) is false then
    raise exception using errcode = '23514', constraint = 'job_error_length', message = 'a job row breaks job_error_length: ((error IS NULL) OR (char_length(error) <= 2000))';
  end if;
  if (((expected_seconds IS NULL) OR ((expected_seconds > (0)::double precision) AND (expected_seconds < 'Infinity'::real)))) is false then
    raise exception using errcode = '23514', constraint = 'job_expected_seconds_positive', message = 'a job row breaks job_expected_seconds_positive: ((expected_seconds IS NULL) OR ((expected_seconds > (0)::double precision) AND (expected_seconds < ''Infinity''::real)))';
  end if;
  if (((status <> 'failed'::public.job_status) OR (error IS NOT NULL))) is false then
    raise exception using errcode = '23514', constraint = 'job_failed_has_error', message = 'a job row breaks job_failed_has_error: ((status <> ''failed''::public.job_status) OR (error IS NOT NULL))';
  end if;
  if (((status = ANY (ARRAY['done'::public.job_status, 'failed'::public.job_status, 'cancelled'::public.job_status])) = (finished_at IS NOT NULL))) is false then
    raise exception using errcode = '23514', constraint = 'job_finished_at_iff_terminal', message = 'a job row breaks job_finished_at_iff_terminal: ((status = ANY (ARRAY[''done''::public.job_status, ''failed''::public.job_status, ''cancelled''::public.job_status])) = (finished_at IS NOT NULL))';
  end if;
  if (((heartbeat_ms IS NULL) OR ((heartbeat_ms >= 10) AND (heartbeat_ms <= 3600000)))) is false then
    raise exception using errcode = '23514', constraint = 'job_heartbeat_ms_range', message = 'a job row breaks job_heartbeat_ms_range: ((heartbeat_ms IS NULL) OR ((heartbeat_ms >= 10) AND (heartbeat_ms <= 3600000)))';
  end if;
  if (((idempotency_key IS NULL) OR ((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 200)))) is false then
    raise exception using errcode = '23514', constraint = 'job_idempotency_key_length', message = 'a job row breaks job_idempotency_key_length: ((idempotency_key IS NULL) OR ((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 200)))';
  end if;
  if (((kind ~ '^[A-Za-z0-9][A-Za-z0-9_.:/-]*$'::text) AND (char_length(kind) <= 64))) is false then
    raise exception using errcode = '23514', constraint = 'job_kind_format', message = 'a job row breaks job_kind_format: ((kind ~ ''^[A-Za-z0-9][A-Za-z0-9_.:/-]*$''::text) AND (char_length(kind) <= 64))';
  end if;
  if (((locale IS NULL) OR (locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$'::text))) is false then
    raise exception using errcode = '23514', constraint = 'job_locale_format', message = 'a job row breaks job_locale_format: ((locale IS NULL) OR (locale ~ ''^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$''::text))';
  end if;
  if (((jsonb_typeof(params) = 'object'::text) AND (octet_length((params)::text) <= 65536))) is false then
    raise exception using errcode = '23514', constraint = 'job_params_object', message = 'a job row breaks job_params_object: ((jsonb_typeof(params) = ''object''::text) AND (octet_length((params)::text) <= 65536))';
  end if;
  if ((parent_id IS DISTINCT FROM id)) is false then
    raise exception using errcode = '23514', constraint = 'job_parent_not_self', message = 'a job row breaks job_parent_not_self: (parent_id IS DISTINCT FROM id)';
  end if;
  if (((payload IS NULL) OR (octet_length(payload) <= 10485760))) is false then
    raise exception using errcode = '23514', constraint = 'job_payload_size', message = 'a job row breaks job_payload_size: ((payload IS NULL) OR (octet_length(payload) <= 10485760))';
  end if;
  if (((progress >= (0)::double precision) AND (progress <= (100)::double precision))) is false then
    raise exception using errcode = '23514', constraint = 'job_progress_percent', message = 'a job row breaks job_progress_percent: ((progress >= (0)::double precision) AND (progress <= (100)::double precision))';
  end if;
  if (((status <> 'running'::public.job_status) OR (started_at IS NOT NULL))) is false then
    raise exception using errcode = '23514', constraint = 'job_running_has_started_at', message = 'a job row breaks job_running_has_started_at: ((status <> ''running''::public.job_status) OR (started_at IS NOT NULL))';
  end if;
  if (((stage IS NULL) OR (char_length(stage) <= 200))) is false then
    raise exception using errcode = '23514', constraint = 'job_stage_length', message = 'a job row breaks job_stage_length: ((stage IS NULL) OR (char_length(stage) <= 200))';
  end if;
  if (((cardinality(tags) <= 10) AND (array_position(tags, NULL::text) IS NULL))) is false then
    raise exception using errcode = '23514', constraint = 'job_tags_shape', message = 'a job row breaks job_tags_shape: ((cardinality(tags) <= 10) AND (array_position(tags, NULL::text) IS NULL))';
  end if;
  if (((status <> ALL (ARRAY['done'::public.job_status, 'failed'::public.job_status, 'cancelled'::public.job_status])) OR (payload IS NULL))) is false then
    raise exception using errcode = '23514', constraint = 'job_terminal_has_no_payload', message = 'a job row breaks job_terminal_has_no_payload: ((status <> ALL (ARRAY[''done''::public.job_status, ''failed''::public.job_status, ''cancelled''::public.job_status])) OR (payload IS NULL))';
  end if;
  if (((timings IS NULL) OR (jsonb_typeof(timings) = 'object'::text))) is false then
    raise exception using errcode = '23514', constraint = 'job_timings_object', message = 'a job row breaks job_timings_object: ((timings IS NULL) OR (jsonb_typeof(timings) = ''object''::text))';
  end if;
  return true;
end
$$;
comment on function supabase_jobs.job_row_rules is
  'The rules of a job row, checked by the guards on every insert (after_jobs_inserted, once per statement) and every update (guard_job_update). Raises 23514 with CONSTRAINT naming the rule a row breaks, as a CHECK would; true otherwise.';

-- The id default: RFC 9562 version 7, 48 bits of Unix milliseconds then 74
-- random bits, written in the default itself (a function of its own would be a
-- call per inserted row, ~8 µs, a fifth of a 500-job enqueue, unless inlined,
-- which a fixed search_path forbids). A new job id lands at the right edge of
-- the primary-key index, and ids sort by creation to the millisecond.
create table supabase_jobs.job (
  id                     uuid not null default pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(
                           pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
                           pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(
                             pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) operator(pg_catalog.*) 1000)::pg_catalog.int8), 3),
                           1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
  is_active              boolean not null default true,
  created_at             timestamptz not null default now(),
  updated_at             timestamptz not null default now(),
  kind                   text not null,
  status                 public.job_status not null default 'queued',
  params                 jsonb not null default '{}',
  payload                bytea,
  result_id              uuid,
  error                  text,
  error_code             text,
  attempts               integer not null default 0,
  max_attempts           integer not null default 3,
  started_at             timestamptz,
  finished_at            timestamptz,
  progress               real not null default 0,
  stage                  text,
  heartbeat_at           timestamptz,
  owner_id               uuid default auth.uid() references auth.users (id) on delete cascade,
  locale                 text,
  available_at           timestamptz not null default now(),
  timings                jsonb,
  job_table              text not null,
  heartbeat_ms           integer,
  tags                   text[] not null default '{}',
  idempotency_key        text,
  idempotency_expires_at timestamptz,
  priority               smallint not null default 0,
  expires_at             timestamptz,
  concurrency_key        text,
  expected_end_at        timestamptz,
  parent_id              uuid,
  expected_seconds       real,
  resumed_at             timestamptz,
  retry_of               uuid,
  metadata               jsonb,
  failed_for_good        boolean not null default false
) partition by list (job_table);
comment on table supabase_jobs.job is
  'Every job, of every job table: each job table (public.jobs, and those made with supabase_jobs.create_job_table) is a partition of this table. Write it only through the job_* functions.';
comment on column supabase_jobs.job.id is
  'The job id the interface follows: a time-ordered UUID (version 7, made by the column default).';
comment on column supabase_jobs.job.is_active is
  'False hides the row from listings (soft delete); the only change a finished row accepts.';
comment on column supabase_jobs.job.created_at is
  'When the job was enqueued.';
comment on column supabase_jobs.job.updated_at is
  'Last change of any kind, including heartbeats.';
comment on column supabase_jobs.job.kind is
  'Which work this is: the worker branches on it and the interface filters by it.';
comment on column supabase_jobs.job.status is
  'queued -> running -> done / failed / cancelled. cancelled is terminal but not a failure.';
comment on column supabase_jobs.job.params is
  'Small input, as a JSON object (at most 64 KiB).';
comment on column supabase_jobs.job.payload is
  'Large input (at most 10 MiB), e.g. the uploaded file. Dropped when the job finishes; only claim returns it.';
comment on column supabase_jobs.job.result_id is
  'The row the work produced, so the screen links straight to it.';
comment on column supabase_jobs.job.error is
  'Why it stopped, written for the user (never a stack trace). Also the last error of a job being retried.';
comment on column supabase_jobs.job.error_code is
  'Stable code for the error: cancelled, worker_lost, failed, or the handler''s own.';
comment on column supabase_jobs.job.attempts is
  'How many times a worker has claimed it.';
comment on column supabase_jobs.job.max_attempts is
  'Claims allowed before a job that keeps killing its worker is closed as failed.';
comment on column supabase_jobs.job.started_at is
  'When the current attempt was claimed.';
comment on column supabase_jobs.job.finished_at is
  'When it reached done, failed or cancelled.';
comment on column supabase_jobs.job.progress is
  'Percent done (0-100), from measured phase timings or real counters; never decreases within an attempt. A job queued again for a retry keeps how far its last attempt got until the next claim starts from 0.';
comment on column supabase_jobs.job.stage is
  'The phase running now, as the progress bar labels it.';
comment on column supabase_jobs.job.heartbeat_at is
  'Last tick from the worker. A running job is silent when it is older than heartbeat_ms x missed_beats(), or than an explicit stale_after.';
comment on column supabase_jobs.job.owner_id is
  'The user who enqueued it (auth.uid()); only they can see or cancel it.';
comment on column supabase_jobs.job.locale is
  'The user''s language (e.g. pt-BR) for the sentences in error.';
comment on column supabase_jobs.job.available_at is
  'Not claimable before this time (retry backoff).';
comment on column supabase_jobs.job.timings is
  'Seconds (and input size) per phase, recorded by the tracker; PhasePlan.fromHistory fits plans from them.';
comment on column supabase_jobs.job.job_table is
  'Which job table (partition) the row belongs to: jobs, or <schema>.<name>.';
comment on column supabase_jobs.job.heartbeat_ms is
  'The heartbeat interval (ms) the worker running this attempt declared at claim; silent after supabase_jobs.missed_beats() missed beats, then reclaimed. Null: nothing declared, reclaimed only by an explicit stale_after.';
comment on column supabase_jobs.job.tags is
  'Labels chosen at enqueue (at most 10, 1..64 characters each); job_list_recent filters on them.';
comment on column supabase_jobs.job.idempotency_key is
  'Set by job_enqueue_once: no other job of this table with this key is created while this one is live or finished before idempotency_expires_at.';
comment on column supabase_jobs.job.idempotency_expires_at is
  'After this (and once the job finished), its idempotency_key no longer stands in for a new job.';
comment on column supabase_jobs.job.priority is
  'Claims take the highest first (then the oldest available_at); default 0. No aging.';
comment on column supabase_jobs.job.expires_at is
  'A queued job not started by then is never claimed and is closed as failed (error_code expired).';
comment on column supabase_jobs.job.concurrency_key is
  'Jobs of one kind sharing this key run at most supabase_jobs.kind_limits.max_running_per_key at a time (e.g. the owner: one export per user).';
comment on column supabase_jobs.job.expected_end_at is
  'When the worker running this attempt expects it to end, from its phase plan (written by job_tick with the progress). Earlier than updated_at: the current phase is running past its measured time. Null: no estimate; cleared on every status change.';
comment on column supabase_jobs.job.parent_id is
  'The job that enqueued this one (job_enqueue_child): same job table, same owner. Cancelling the parent cancels it; its end may resume the parent.';
comment on column supabase_jobs.job.expected_seconds is
  'What the kind''s plan predicts for this job, in seconds: its weight in its parent''s progress (null weighs 1).';
comment on column supabase_jobs.job.resumed_at is
  'When this job last came back from waiting (its last child ended, or its question was answered): its handler runs again and reads its children''s outcomes or the answer.';
comment on column supabase_jobs.job.retry_of is
  'The failed or cancelled job this one tries again (job_try_again, job_replay): same kind, params, owner and options; that row is left as it was. Null for a job enqueued on its own.';
comment on column supabase_jobs.job.metadata is
  'What the handler says about the work so far, typed by its kind (a JSON object of at most 16 KiB, merged key by key by job_tick); sent in the Realtime message of the tick that wrote it. Null until written.';
comment on column supabase_jobs.job.failed_for_good is
  'The job failed for good: its worker closed it with job_fail(permanent => true), an error its kind declares permanent, so trying again would fail the same way. job_try_again refuses it (SJ002) and job_replay skips it. Only a failed row holds true; written by job_fail only.';

-- The indexes. Each partition holds one job_table, so no key carries it (the
-- partition is chosen before any index is read); the primary key (id) of each
-- partition is also the listing newest first, ids being time-ordered. A queued
-- job without an owner enters 3 (primary key, claim order, kind; the partial
-- ones only test their predicate), an owned one 5. docs/architecture.md
-- ("Indexes") lists which query needs each.
-- Claims in claim order: the queued jobs, highest priority, then oldest.
create index job_claim_idx on supabase_jobs.job (priority desc, available_at, created_at, id) where status = 'queued';
-- The running jobs: the reclaimer, the running counts, and a write to a running job by id.
create index job_reclaim_idx on supabase_jobs.job (id) where status = 'running';
-- Listings, newest first (by id): by kind, by owner (owned jobs only); by table: the primary key.
create index job_kind_idx on supabase_jobs.job (kind, id);
create index job_owner_idx on supabase_jobs.job (owner_id, id) where owner_id is not null;
-- The per-owner quotas count an owner's live jobs.
create index job_owner_active_idx on supabase_jobs.job (owner_id, kind)
  where status in ('queued', 'running') and owner_id is not null;
create index job_tags_idx on supabase_jobs.job using gin (tags) where tags <> '{}';
create index job_idempotency_key_idx on supabase_jobs.job (idempotency_key) where idempotency_key is not null;
create index job_expiry_idx on supabase_jobs.job (expires_at) where status = 'queued' and expires_at is not null;
-- Finished rows in finishing order: what retention deletes first and what the windowed views read.
create index job_finished_idx on supabase_jobs.job (finished_at) where finished_at is not null;
create index job_parent_idx on supabase_jobs.job (parent_id, id) where parent_id is not null;

-- Who is calling: an admin (by JWT claim), or a worker (a role RLS does not restrict).
create or replace function supabase_jobs.is_admin()
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce((select auth.jwt()) -> 'app_metadata' ->> 'role', '') = 'admin';
end
$$;
comment on function supabase_jobs.is_admin is
  'True when the caller''s JWT says app_metadata.role = ''admin'' (set by the service role; users cannot write app_metadata): reads and cancels every job.';

-- Who is calling, by privilege and not by role name: a worker or an operator is a role
-- RLS does not restrict (a superuser, a BYPASSRLS role, the table's owner); everyone else,
-- a custom JWT role that inherits authenticated included, is a user. The one rule: a
-- function that acts for a user asks it as its caller (never inside SECURITY DEFINER,
-- where current_user is the definer) and sends a user to the checked path.
create or replace function supabase_jobs.is_worker()
returns boolean
language plpgsql stable
set search_path = ''
as $$ begin return not pg_catalog.row_security_active('supabase_jobs.job'::regclass); end $$;

-- The update guard: every update goes through the state machine and the row rules
-- (a job is inserted queued and untouched: after_jobs_inserted, 13_kick).
create or replace function supabase_jobs.guard_job_update()
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
    new.updated_at := greatest(now(), old.updated_at + interval '1 microsecond');
    return new;
  end if;

  if restricted then
    -- A user cancels their job, or moves the start of one still queued; nothing else.
    if not ((new.status = 'cancelled'
             and (pg_catalog.to_jsonb(new) - 'status' - 'error' - 'updated_at') is not distinct from (pg_catalog.to_jsonb(old) - 'status' - 'error' - 'updated_at'))
         or (old.status = 'queued' and new.status = 'queued'
             and (pg_catalog.to_jsonb(new) - 'available_at' - 'updated_at') is not distinct from (pg_catalog.to_jsonb(old) - 'available_at' - 'updated_at'))) then
      raise exception using errcode = '42501',
        message = 'a user can only cancel their own jobs or reschedule them while queued; every other change is the worker''s';
    end if;
  end if;

  if new.status is distinct from old.status then
    if not supabase_jobs.can_transition(old.status, new.status) then
      raise exception using errcode = 'SJ001',
        message = pg_catalog.format('illegal transition for job %s: %s -> %s', old.id, old.status, new.status),
        hint = 'See docs/state-machine.md for the transitions and the job_* function that makes each.';
    end if;
    -- The estimate belongs to the attempt that wrote it.
    new.expected_end_at := null;
    case new.status
      when 'running' then
        new.started_at := now();
        new.heartbeat_at := now();
        -- A parent resumed after its children keeps the progress they earned
        -- (here and on waiting -> queued below).
        new.progress := case when old.status = 'queued' and new.resumed_at is not null then old.progress else 0 end;
        new.stage := null;
      when 'queued' then
        new.started_at := null;
        new.heartbeat_at := null;
        -- Back in the queue (a retry, a reclaim, a release, a resumed parent) the row
        -- keeps how far the last attempt got, for the screen to show while it waits;
        -- the next claim starts the new attempt from 0.
        new.progress := old.progress;
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
    -- Failed for good is how a job fails, never a state of its own: any other status clears it.
    if new.status <> 'failed' then
      new.failed_for_good := false;
    end if;
  elsif old.status = 'queued' and not restricted then
    -- A queued row has nothing a worker may touch but its schedule.
    if (pg_catalog.to_jsonb(new) - 'available_at' - 'updated_at' - 'is_active') is distinct from (pg_catalog.to_jsonb(old) - 'available_at' - 'updated_at' - 'is_active') then
      raise exception using errcode = 'SJ001', message = pg_catalog.format('job %s is queued: claim it before writing progress or results', old.id);
    end if;
  end if;
  if new.failed_for_good and new.status <> 'failed' then
    raise exception using errcode = '23514', constraint = 'job_failed_for_good_is_failed',
      message = pg_catalog.format('job %s is %s: only a failed job is failed for good (job_fail with permanent => true)', old.id, new.status);
  end if;
  new.updated_at := greatest(now(), old.updated_at + interval '1 microsecond');
  perform supabase_jobs.job_row_rules(new.id, new.kind, new.status, new.params, new.payload, new.error, new.attempts,
    new.max_attempts, new.started_at, new.finished_at, new.progress, new.stage, new.locale, new.timings, new.heartbeat_ms,
    new.tags, new.idempotency_key, new.concurrency_key, new.parent_id, new.expected_seconds);
  return new;
end
$$;
comment on function supabase_jobs.guard_job_update is
  'BEFORE UPDATE on every job table, every row: enforces the state machine, freezes terminal rows, limits users to cancelling and rescheduling, derives started_at/finished_at/payload/progress (and failed_for_good, false but on failed) from the status, and checks the row rules (job_row_rules).';

-- Every writer, but the statements of a job_* function that did this work
-- itself: the function sets supabase_jobs.handled to this statement's mark
-- (its start and trigger depth, ' sent' or ' guarded') just before, and sets
-- every column the guard derives in its own SET list. A mark lasts for that
-- statement only: a later one starts at another time, a row a trigger updates
-- runs one level deeper; and never for a caller RLS restricts.
create trigger guard_job_update before update on supabase_jobs.job for each row
  when (not coalesce(pg_catalog.starts_with(pg_catalog.current_setting('supabase_jobs.handled', true),
                                            pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' ')), false)
        or pg_catalog.row_security_active('supabase_jobs.job'::pg_catalog.regclass))
  execute function supabase_jobs.guard_job_update();

-- The registry of job tables: what the job_* functions accept as job_table.
create table supabase_jobs.job_tables (
  table_name                  regclass primary key,
  created_at                  timestamptz not null default now(),
  label                       text not null unique,
  max_active_per_owner        integer default 1000,
  max_payload_bytes_per_owner bigint default 104857600,
  constraint job_tables_max_active_positive check (max_active_per_owner is null or max_active_per_owner > 0),
  constraint job_tables_max_payload_positive check (max_payload_bytes_per_owner is null or max_payload_bytes_per_owner > 0)
);
comment on table supabase_jobs.job_tables is
  'Job tables created by supabase_jobs.create_job_table. The job_* functions refuse any table not listed here.';
comment on column supabase_jobs.job_tables.label is
  'How the job_* functions name the table (job_table): jobs, or <schema>.<name>; the partition bound of supabase_jobs.job.';
comment on column supabase_jobs.job_tables.max_active_per_owner is
  'At most this many queued or running jobs per owner in this table (PT429 past it); null: no limit. Change with: update supabase_jobs.job_tables set max_active_per_owner = 500 where label = ''jobs'';';
comment on column supabase_jobs.job_tables.max_payload_bytes_per_owner is
  'At most this many payload bytes over one owner''s queued and running jobs in this table (PT429 past it); null: no limit.';

create or replace function supabase_jobs.table_label(tbl regclass)
returns text
language sql stable
set search_path = ''
as $$
  select case when n.nspname = 'public' then c.relname::text else n.nspname || '.' || c.relname end
  from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  where c.oid = tbl
$$;

create or replace function supabase_jobs.job_table_label(job_table text)
returns text
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
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
comment on function supabase_jobs.job_table_label is
  'The label of a registered job table (''public.jobs'' -> ''jobs''): the label as written, checked against supabase_jobs.job_tables. A malformed name is 22023 naming job_table, a well-formed one that is no job table 42P01. Every entry point that names a job table resolves it here, first; the hot by-id calls (job_claim, job_claim_next, job_tick, job_succeed) match rows with the label as written (the first half of this function, in their declarations) and call it only when no row lands.';

create or replace function supabase_jobs.resolve_table(job_table text)
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

create or replace function supabase_jobs.owner_for(owner_id uuid)
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

create or replace function supabase_jobs.without_payload(j supabase_jobs.job)
returns supabase_jobs.job
language plpgsql immutable
set search_path = ''
as $$
begin
  j.payload := null;
  return j;
end
$$;

create or replace function supabase_jobs.attach_partition(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
declare
  col record;
begin
  -- Statements aimed at the partition itself fire its own statement triggers
  -- (the row triggers, after_jobs_updated among them, are cloned from the parent).
  execute pg_catalog.format('drop trigger if exists after_jobs_inserted on %s', tbl);
  execute pg_catalog.format('create trigger after_jobs_inserted after insert on %s referencing new table as inserted for each statement execute function supabase_jobs.after_jobs_inserted()', tbl);

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
comment on function supabase_jobs.attach_partition is
  'Installs (or repairs) on one job table what a partition does not inherit: its statement triggers, RLS policies, grants and comments.';

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
  perform supabase_jobs.attach_admission(tbl);
  perform supabase_jobs.attach_admin_policies(tbl);
  return tbl;
end
$$;
comment on function supabase_jobs.create_job_table is
  'Creates a job table under a name you choose (one per kind of long work, e.g. exports): a partition of supabase_jobs.job with its checks, indexes, triggers, RLS, grants and comments. Example: select supabase_jobs.create_job_table(''exports'');';

-- Security, as every schema file grants its own objects: signed-in users
-- (authenticated) read, enqueue and cancel their own jobs through RLS and the
-- job_* functions granted to them; workers run as service_role, which bypasses
-- RLS; anon gets nothing; admins (is_admin) read and cancel every job. Every
-- table has RLS and explicit grants; every function's EXECUTE is revoked from
-- PUBLIC and granted by name at the end of the file that defines it.
-- The job row: users read and cancel their own (admins every one) and insert
-- their own, through the columns an enqueue sets; workers do everything.
grant usage on type supabase_jobs.job to authenticated, service_role;
alter table supabase_jobs.job enable row level security;
create policy owner_reads on supabase_jobs.job for select to authenticated
  using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()));
create policy owner_enqueues on supabase_jobs.job for insert to authenticated
  with check (owner_id = (select auth.uid()));
create policy owner_cancels on supabase_jobs.job for update to authenticated
  using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()))
  with check (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()));
revoke all on supabase_jobs.job from public, anon, authenticated;
grant select on supabase_jobs.job to authenticated;
grant insert (job_table, kind, params, payload, max_attempts, locale, owner_id, available_at, tags, idempotency_key,
              idempotency_expires_at, priority, expires_at, concurrency_key) on supabase_jobs.job to authenticated;
grant update (status, error, available_at) on supabase_jobs.job to authenticated;
grant select, insert, update, delete on supabase_jobs.job to service_role;

-- The registry of job tables: readable (users see their quotas), written by create_job_table.
alter table supabase_jobs.job_tables enable row level security;
create policy job_tables_readable on supabase_jobs.job_tables for select to authenticated, service_role using (true);
grant select on supabase_jobs.job_tables to authenticated, service_role;
grant select (label, max_active_per_owner, max_payload_bytes_per_owner) on supabase_jobs.job_tables to authenticated;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.job_row_rules, supabase_jobs.is_admin,
  supabase_jobs.is_worker, supabase_jobs.guard_job_update, supabase_jobs.table_label,
  supabase_jobs.job_table_label, supabase_jobs.resolve_table,
  supabase_jobs.owner_for, supabase_jobs.without_payload, supabase_jobs.attach_partition,
  supabase_jobs.create_job_table
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  supabase_jobs.job_row_rules, supabase_jobs.is_admin,
  supabase_jobs.is_worker, supabase_jobs.job_table_label,
  supabase_jobs.resolve_table, supabase_jobs.owner_for, supabase_jobs.without_payload
  to authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.table_label
  to service_role;
