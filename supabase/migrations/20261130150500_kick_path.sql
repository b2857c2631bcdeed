-- supabase-jobs 0005 — waking workers: the kick on insert and the cron schedules.
--
-- Purpose: a queued job should not wait for a poll. Every job table gets an
-- AFTER INSERT statement trigger that POSTs a wake-up to the worker through
-- pg_net (sent only after the transaction commits), with the worker's URL and
-- secret read from Vault. pg_cron runs the backstops: wake the worker when jobs
-- have waited too long (a kick can be lost), reclaim jobs whose worker went
-- silent, and clean up cron history and (opt-in) old finished jobs.
--
-- Operator setup (Supabase dashboard SQL editor, once):
--   select vault.create_secret('https://<ref>.supabase.co/functions/v1/<worker>', 'supabase_jobs_worker_url');
--   select vault.create_secret('<a long random string the worker checks>', 'supabase_jobs_worker_secret');
--   -- after enabling pg_cron later: select supabase_jobs.install_schedules();
--
-- The wake-up request (POST, JSON):
--   headers: Content-Type: application/json, Authorization: Bearer <supabase_jobs_worker_secret>
--     (Bearer because a function called by a trigger runs with verify_jwt off
--     and checks its own secret; the secret is compared, never parsed as a JWT)
--   body: {"job_id": uuid|null, "job_table": "jobs"|"<schema>.<name>", "kind": text,
--          "count": n, "reason": "enqueue"|"backstop"}
--   One request per INSERT statement and kind: job_id is set when that
--   statement inserted exactly one job of the kind, null for a batch (the worker
--   then claims up to count jobs of the kind with job_claim_next). A backstop
--   wake-up always has job_id null.
--
-- Invariants:
--   * enqueue never fails because of the kick: without pg_net, Vault or the two
--     secrets nothing is sent and nothing is raised; an error while sending is
--     a WARNING, and the backstop schedule wakes the worker within a minute;
--   * a rolled-back insert sends nothing (pg_net reads its queue after commit);
--   * only postgres (the owner) can read the secrets: kick and the trigger are
--     SECURITY DEFINER in the non-exposed schema supabase_jobs with
--     search_path = '', EXECUTE revoked from public/anon/authenticated;
--     worker_endpoint (which returns the secret) is executable by nobody else;
--   * the migration applies with or without pg_cron and is idempotent:
--     cron.schedule with an existing name replaces that schedule;
--   * tunables live in supabase_jobs.settings (one row), not in the schedules.
-- Breaking: no. Registers the attach_kick installer (the kick_worker trigger),
-- which add_attachment also runs over every registered job table.

-- ---------------------------------------------------------------------------
-- Settings: one row, changed by service_role or the owner.
create table supabase_jobs.settings (
  id boolean primary key default true,
  stale_after interval not null default interval '5 minutes',
  backstop_after interval not null default interval '30 seconds',
  kick_timeout_ms integer not null default 5000,
  finished_retention interval default null,
  cron_history_retention interval not null default interval '7 days',
  updated_at timestamptz not null default now(),
  constraint settings_single_row check (id),
  constraint settings_stale_after_positive check (stale_after > interval '0'),
  constraint settings_backstop_after_not_negative check (backstop_after >= interval '0'),
  constraint settings_kick_timeout_range check (kick_timeout_ms between 100 and 60000),
  constraint settings_finished_retention_positive check (finished_retention is null or finished_retention > interval '0'),
  constraint settings_cron_history_retention_positive check (cron_history_retention > interval '0')
);
comment on table supabase_jobs.settings is
  'Tunables of the schedules and the kick (one row). Change with: update supabase_jobs.settings set stale_after = ''10 minutes'';';
comment on column supabase_jobs.settings.stale_after is 'The supabase-jobs-reclaim schedule readmits running jobs silent for this long.';
comment on column supabase_jobs.settings.backstop_after is 'The supabase-jobs-backstop schedule wakes the worker when a job has been claimable for this long.';
comment on column supabase_jobs.settings.kick_timeout_ms is 'timeout_milliseconds of every wake-up request (the worker answers at once and works in the background).';
comment on column supabase_jobs.settings.finished_retention is 'When set, the daily cleanup deletes done/failed/cancelled jobs finished longer ago than this. Null keeps them.';
comment on column supabase_jobs.settings.cron_history_retention is 'The daily cleanup deletes cron.job_run_details older than this (pg_cron never does).';
insert into supabase_jobs.settings default values;
alter table supabase_jobs.settings enable row level security;
create policy settings_service_role_reads on supabase_jobs.settings for select to service_role using (true);
create policy settings_service_role_updates on supabase_jobs.settings for update to service_role using (true) with check (true);
revoke all on supabase_jobs.settings from public, anon, authenticated;
grant select, update on supabase_jobs.settings to service_role;

-- ---------------------------------------------------------------------------
-- How a job table is named in a wake-up body and in the job_* functions' job_table.
create function supabase_jobs.table_label(tbl regclass)
returns text
language sql stable
set search_path = ''
as $$
  select case when n.nspname = 'public' then c.relname::text else n.nspname || '.' || c.relname end
  from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  where c.oid = tbl
$$;
revoke all on function supabase_jobs.table_label(regclass) from public, anon, authenticated;
grant execute on function supabase_jobs.table_label(regclass) to service_role;

-- The worker's URL and secret from Vault; nulls when Vault or a secret is
-- missing. Returns the secret, so only its owner may run it (through kick).
create function supabase_jobs.worker_endpoint(out url text, out secret text)
language plpgsql stable
set search_path = ''
as $$
begin
  if pg_catalog.to_regclass('vault.decrypted_secrets') is null then
    return;
  end if;
  select nullif(pg_catalog.btrim(s.decrypted_secret), '') into url
    from vault.decrypted_secrets s where s.name = 'supabase_jobs_worker_url'
    order by s.updated_at desc limit 1;
  select nullif(s.decrypted_secret, '') into secret
    from vault.decrypted_secrets s where s.name = 'supabase_jobs_worker_secret'
    order by s.updated_at desc limit 1;
end
$$;
comment on function supabase_jobs.worker_endpoint() is
  'The worker URL and secret from Vault (names supabase_jobs_worker_url, supabase_jobs_worker_secret). Executable by its owner only.';
revoke all on function supabase_jobs.worker_endpoint() from public, anon, authenticated, service_role;

-- Queues one wake-up through pg_net. Returns the pg_net request id, or null
-- when nothing was sent (no pg_net, no Vault, no secrets, or an error).
create function supabase_jobs.kick(job_table text, kind text default null, job_id uuid default null, count integer default 1, reason text default 'enqueue')
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
  begin
    endpoint := supabase_jobs.worker_endpoint();
    if endpoint.url is null or endpoint.secret is null then
      return null;
    end if;
    return net.http_post(
      url := endpoint.url,
      body := pg_catalog.jsonb_build_object('job_id', job_id, 'job_table', job_table, 'kind', kind, 'count', count, 'reason', reason),
      params := '{}'::jsonb,
      headers := pg_catalog.jsonb_build_object('Content-Type', 'application/json', 'Authorization', 'Bearer ' || endpoint.secret),
      timeout_milliseconds := (select s.kick_timeout_ms from supabase_jobs.settings s where s.id)
    );
  exception when others then
    raise warning using message = pg_catalog.format('supabase_jobs: the worker was not woken (%s); the backstop schedule will wake it', sqlerrm);
    return null;
  end;
end
$$;
comment on function supabase_jobs.kick(text, text, uuid, integer, text) is
  'POSTs a wake-up to the worker through pg_net (after commit). Returns the request id, or null when pg_net, Vault or the secrets are missing. Never raises.';
revoke all on function supabase_jobs.kick(text, text, uuid, integer, text) from public, anon, authenticated;
grant execute on function supabase_jobs.kick(text, text, uuid, integer, text) to service_role;

-- AFTER INSERT ... FOR EACH STATEMENT: one wake-up per statement and kind, so a
-- batch insert of thousands of jobs costs a handful of requests (pg_net is built
-- for about 200 requests/s). SECURITY DEFINER: the inserting user may not read Vault.
create function supabase_jobs.kick_inserted_jobs()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  job_table text := supabase_jobs.table_label(tg_relid);
  batch record;
begin
  if pg_catalog.to_regprocedure('net.http_post(text, jsonb, jsonb, jsonb, integer)') is null then
    return null;
  end if;
  for batch in
    select i.kind, pg_catalog.count(*)::integer as n, (pg_catalog.array_agg(i.id))[1] as first_id
      from inserted i
     where i.status = 'queued' and i.available_at <= pg_catalog.now()
     group by i.kind
     order by i.kind
  loop
    perform supabase_jobs.kick(job_table, batch.kind, case when batch.n = 1 then batch.first_id end, batch.n, 'enqueue');
  end loop;
  return null;
end
$$;
comment on function supabase_jobs.kick_inserted_jobs() is
  'AFTER INSERT statement trigger on every job table: wakes the worker once per statement and kind (see supabase_jobs.kick).';
revoke all on function supabase_jobs.kick_inserted_jobs() from public, anon, authenticated;

-- ---------------------------------------------------------------------------
-- Schedules' bodies.

-- Wakes the worker for jobs that have been claimable for longer than
-- settings.backstop_after (their kick was lost, or they were reclaimed or
-- retried since). Returns how many wake-ups were queued.
create function supabase_jobs.backstop()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  waited interval := (select s.backstop_after from supabase_jobs.settings s where s.id);
  tbl regclass;
  batch record;
  sent integer := 0;
begin
  for tbl in select t.table_name from supabase_jobs.job_tables t order by t.table_name::text loop
    for batch in execute pg_catalog.format(
      'select j.kind, count(*)::integer as n from %s as j
        where j.status = ''queued'' and j.available_at <= now() - $1
        group by j.kind order by j.kind', tbl) using waited
    loop
      if supabase_jobs.kick(supabase_jobs.table_label(tbl), batch.kind, null, batch.n, 'backstop') is not null then
        sent := sent + 1;
      end if;
    end loop;
  end loop;
  return sent;
end
$$;
comment on function supabase_jobs.backstop() is
  'The supabase-jobs-backstop schedule: one wake-up per job table and kind with jobs claimable for longer than settings.backstop_after. Returns the number queued.';
revoke all on function supabase_jobs.backstop() from public, anon, authenticated;
grant execute on function supabase_jobs.backstop() to service_role;

-- job_reclaim_stale over every registered job table.
create function supabase_jobs.reclaim_all(stale_after interval)
returns table (job_table text, id uuid, status public.job_status)
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass;
  label text;
begin
  if stale_after is null then
    raise exception using errcode = '22004',
      message = 'stale_after is required: reclaim_all will not guess how long a silent worker is dead',
      detail = 'field=stale_after';
  end if;
  for tbl in select t.table_name from supabase_jobs.job_tables t order by t.table_name::text loop
    label := supabase_jobs.table_label(tbl);
    return query
      select label, r.id, r.status from public.job_reclaim_stale(stale_after, label) r;
  end loop;
end
$$;
comment on function supabase_jobs.reclaim_all(interval) is
  'The supabase-jobs-reclaim schedule: job_reclaim_stale(stale_after) on every registered job table; one row per job readmitted (queued) or closed (failed).';
revoke all on function supabase_jobs.reclaim_all(interval) from public, anon, authenticated;
grant execute on function supabase_jobs.reclaim_all(interval) to service_role;

-- Keeps the hot tables small: cron history always, finished jobs when
-- settings.finished_retention is set.
create function supabase_jobs.cleanup()
returns table (what text, deleted bigint)
language plpgsql
set search_path = ''
as $$
declare
  settings supabase_jobs.settings;
  tbl regclass;
  n bigint;
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
    for tbl in select t.table_name from supabase_jobs.job_tables t order by t.table_name::text loop
      execute pg_catalog.format(
        'delete from %s as j where j.status in (''done'', ''failed'', ''cancelled'') and j.finished_at < now() - $1', tbl)
        using settings.finished_retention;
      get diagnostics n = row_count;
      what := supabase_jobs.table_label(tbl);
      deleted := n;
      return next;
    end loop;
  end if;
end
$$;
comment on function supabase_jobs.cleanup() is
  'The supabase-jobs-cleanup schedule: deletes cron.job_run_details older than settings.cron_history_retention and, when settings.finished_retention is set, finished jobs older than that.';
revoke all on function supabase_jobs.cleanup() from public, anon, authenticated;
grant execute on function supabase_jobs.cleanup() to service_role;

-- (Re)creates the three schedules when pg_cron is there; a notice otherwise.
-- Run it again after enabling pg_cron. Returns how many schedules it wrote.
create function supabase_jobs.install_schedules()
returns integer
language plpgsql
set search_path = ''
as $$
begin
  if pg_catalog.to_regprocedure('cron.schedule(text, text, text)') is null then
    raise notice 'supabase_jobs: pg_cron is not enabled, so no schedules were installed. Enable it, then run: select supabase_jobs.install_schedules();';
    return 0;
  end if;
  perform cron.schedule('supabase-jobs-backstop', '* * * * *',
    'select supabase_jobs.backstop()');
  perform cron.schedule('supabase-jobs-reclaim', '* * * * *',
    'select count(*) from supabase_jobs.reclaim_all((select s.stale_after from supabase_jobs.settings s where s.id))');
  perform cron.schedule('supabase-jobs-cleanup', '17 3 * * *',
    'select * from supabase_jobs.cleanup()');
  return 3;
end
$$;
comment on function supabase_jobs.install_schedules() is
  'Creates or replaces the pg_cron schedules supabase-jobs-backstop (every minute), supabase-jobs-reclaim (every minute) and supabase-jobs-cleanup (daily 03:17 UTC). Returns 0 with a notice when pg_cron is not enabled.';
revoke all on function supabase_jobs.install_schedules() from public, anon, authenticated;

-- ---------------------------------------------------------------------------
-- Per job table: kick_worker (one request per insert statement and kind).
create function supabase_jobs.attach_kick(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
begin
  execute format('drop trigger if exists kick_worker on %s', tbl);
  execute format('create trigger kick_worker after insert on %s referencing new table as inserted for each statement execute function supabase_jobs.kick_inserted_jobs()', tbl);
end
$$;
revoke all on function supabase_jobs.attach_kick(regclass) from public;
select supabase_jobs.add_attachment('kick', 'supabase_jobs.attach_kick(regclass)', 10);
select supabase_jobs.install_schedules();
