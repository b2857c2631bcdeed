-- Recurring jobs declared in code (pg-boss schedule, graphile-worker crontab,
-- BullMQ repeatable jobs): `defineSchedule({ name, kind, cron, params })`, synced
-- with `store.syncSchedules([...])` into supabase_jobs.schedules and pg_cron.
--
-- Invariants:
--   * supabase_jobs.schedules holds exactly the set the code last synced
--     (job_sync_schedules replaces it: added, changed and removed at once).
--   * Each schedule has one pg_cron entry, `supabase-jobs-schedule:<name>`, whose
--     command is run_schedule(<name>); entries of removed schedules are
--     unscheduled. Without pg_cron the rows are kept and install_schedules()
--     installs their entries once it is enabled.
--   * Each run is a normal job row enqueued with job_enqueue_once under the key
--     `schedule:<name>:<slot>` (the slot is the UTC minute it is for), so a slot
--     never runs twice, whatever the number of cron runners or restarts.
--   * Missed slots (pg_cron down, database paused) are skipped, not backfilled:
--     pg_cron does not replay minutes, and a nightly job that fires late at
--     noon surprises more than one that waits for the next night.
--
-- Breaks nothing: new table and functions; install_schedules() also installs
-- the recurring entries.

create table supabase_jobs.schedules (
  name text primary key,
  kind text not null,
  cron text not null,
  params jsonb not null default '{}'::jsonb,
  job_table text not null default 'jobs',
  updated_at timestamptz not null default now(),
  constraint schedules_name_shape check (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
  -- Five fields of pg_cron's syntax (minute hour day month weekday).
  constraint schedules_cron_shape check (cron ~ '^\s*([0-9*/,-]+\s+){4}[0-9*/,-]+\s*$'),
  constraint schedules_params_object check (pg_catalog.jsonb_typeof(params) = 'object')
);
comment on table supabase_jobs.schedules is
  'Recurring jobs declared in code (defineSchedule), replaced as a set by job_sync_schedules. Each runs as pg_cron entry supabase-jobs-schedule:<name>; each run is a job with idempotency key schedule:<name>:<UTC minute>.';
alter table supabase_jobs.schedules enable row level security;
create policy schedules_service_role on supabase_jobs.schedules for all to service_role using (true) with check (true);
revoke all on supabase_jobs.schedules from public, anon, authenticated;
grant select, insert, update, delete on supabase_jobs.schedules to service_role;

-- The pg_cron entries of the schedules, in step with the table. Runs as the
-- owner: pg_cron's cron.schedule is the owner's (postgres) to call.
create function supabase_jobs.install_recurring()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  s record;
  stale record;
  n integer := 0;
begin
  if pg_catalog.to_regprocedure('cron.schedule(text, text, text)') is null then
    return 0;
  end if;
  for stale in
    select j.jobname from cron.job j
     where j.jobname like 'supabase-jobs-schedule:%'
       and pg_catalog.substr(j.jobname, 24) not in (select x.name from supabase_jobs.schedules x)
  loop
    perform cron.unschedule(stale.jobname);
  end loop;
  for s in select * from supabase_jobs.schedules order by name loop
    perform cron.schedule('supabase-jobs-schedule:' || s.name, s.cron,
      pg_catalog.format('select supabase_jobs.run_schedule(%L)', s.name));
    n := n + 1;
  end loop;
  return n;
end
$$;
revoke all on function supabase_jobs.install_recurring() from public, anon, authenticated;
grant execute on function supabase_jobs.install_recurring() to service_role;

-- One slot of one schedule: the job of that minute, created once.
create function supabase_jobs.run_schedule(name text, slot timestamptz default now())
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  s supabase_jobs.schedules;
  minute timestamptz := pg_catalog.date_trunc('minute', slot);
  made record;
begin
  select * into s from supabase_jobs.schedules x where x.name = run_schedule.name;
  if s.name is null then
    return null; -- removed since its cron entry last ran
  end if;
  select * into made from public.job_enqueue_once(s.kind,
    'schedule:' || s.name || ':' || pg_catalog.to_char(minute at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"'),
    s.params, job_table => s.job_table, key_ttl => interval '7 days');
  return (made.job ->> 'id')::uuid;
end
$$;
comment on function supabase_jobs.run_schedule(text, timestamptz) is
  'Enqueues the job of one schedule for the minute of slot (default now), once: a second call for the same minute returns the same job.';
revoke all on function supabase_jobs.run_schedule(text, timestamptz) from public, anon, authenticated;
grant execute on function supabase_jobs.run_schedule(text, timestamptz) to service_role;

-- schedules: [{"name": "nightly-report", "kind": "report.build", "cron": "0 2 * * *", "params": {...}}, ...]
create function public.job_sync_schedules(schedules jsonb, job_table text default 'jobs')
returns integer
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  item record;
begin
  if schedules is null or pg_catalog.jsonb_typeof(schedules) <> 'array' then
    perform supabase_jobs.invalid('schedules', 'schedules is a JSON array of {name, kind, cron, params}');
  end if;
  for item in select e.value, e.ordinality - 1 as i from pg_catalog.jsonb_array_elements(schedules) with ordinality e loop
    if pg_catalog.jsonb_typeof(item.value) <> 'object' then
      perform supabase_jobs.invalid(pg_catalog.format('schedules[%s]', item.i), 'each schedule is a JSON object');
    end if;
    if coalesce(item.value ->> 'name', '') !~ '^[a-z0-9][a-z0-9._-]{0,62}$' then
      perform supabase_jobs.invalid(pg_catalog.format('schedules[%s].name', item.i),
        pg_catalog.format('a schedule name is 1 to 63 lowercase letters, digits, dots, dashes or underscores; got %L', item.value ->> 'name'));
    end if;
    if not supabase_jobs.kind_is_valid(item.value ->> 'kind') then
      perform supabase_jobs.invalid(pg_catalog.format('schedules[%s].kind', item.i), pg_catalog.format('not a kind: %L', item.value ->> 'kind'));
    end if;
    if coalesce(item.value ->> 'cron', '') !~ '^\s*([0-9*/,-]+\s+){4}[0-9*/,-]+\s*$' then
      perform supabase_jobs.invalid(pg_catalog.format('schedules[%s].cron', item.i),
        pg_catalog.format('cron is five fields (minute hour day month weekday), e.g. ''0 2 * * *''; got %L', item.value ->> 'cron'));
    end if;
    if item.value ? 'params' and pg_catalog.jsonb_typeof(item.value -> 'params') <> 'object' then
      perform supabase_jobs.invalid(pg_catalog.format('schedules[%s].params', item.i), 'params is a JSON object');
    end if;
  end loop;
  if (select pg_catalog.count(distinct e ->> 'name') <> pg_catalog.count(*) from pg_catalog.jsonb_array_elements(schedules) e) then
    perform supabase_jobs.invalid('schedules', 'two schedules have the same name');
  end if;

  delete from supabase_jobs.schedules s
   where s.job_table = label
     and s.name not in (select e ->> 'name' from pg_catalog.jsonb_array_elements(schedules) e);
  insert into supabase_jobs.schedules as s (name, kind, cron, params, job_table)
  select e ->> 'name', e ->> 'kind', pg_catalog.btrim(e ->> 'cron'), coalesce(e -> 'params', '{}'::jsonb), label
    from pg_catalog.jsonb_array_elements(schedules) e
  on conflict (name) do update
     set kind = excluded.kind, cron = excluded.cron, params = excluded.params, job_table = excluded.job_table, updated_at = now()
   where (s.kind, s.cron, s.params, s.job_table) is distinct from (excluded.kind, excluded.cron, excluded.params, excluded.job_table);
  perform supabase_jobs.install_recurring();
  return pg_catalog.jsonb_array_length(schedules);
end
$$;
comment on function public.job_sync_schedules(jsonb, text) is
  'Replaces the recurring schedules of a job table with this set ({name, kind, cron, params}) and their pg_cron entries; returns how many there are. Service role only.';
revoke all on function public.job_sync_schedules(jsonb, text) from public, anon, authenticated;
grant execute on function public.job_sync_schedules(jsonb, text) to service_role;

-- install_schedules() installs the recurring entries too: it is rewritten once,
-- with the hourly cleanup, in 20261201060000_operator_views.sql.
