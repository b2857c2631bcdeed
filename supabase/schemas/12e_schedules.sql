-- Schedules: recurring jobs declared in code (defineSchedule), synced as a set
-- by job_sync_schedules and run by pg_cron, and the package's own pg_cron
-- entries (reclaim, backstop, cleanup) installed by install_schedules
-- (99_install). cron_problem says why pg_cron would refuse an expression.

create or replace function supabase_jobs.cron_problem(expr text)
returns text
language plpgsql immutable
set search_path = ''
as $$
declare
  -- minute, hour, day of month, month, day of week: bounds, largest step, names.
  fields constant text[] := array['minute', 'hour', 'day of month', 'month', 'day of week'];
  lows constant int[] := array[0, 0, 1, 1, 0];
  highs constant int[] := array[59, 23, 31, 12, 7];
  steps constant int[] := array[60, 24, 31, 12, 7];
  months constant text[] := array['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
  days constant text[] := array['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
  text_ text := pg_catalog.lower(pg_catalog.btrim(coalesce(expr, ''), e' \t\n\r'));
  parts text[];
  part text;
  m text[];
  tokens text[];
  token text;
  names text[];
  v int;
  bounds int[];
  i int;
begin
  if text_ ~ '^[0-9]+\s*seconds?$' then
    return pg_catalog.format('a recurring job runs at most once a minute (one job per minute slot): write five fields, not ''%s''', text_);
  end if;
  if pg_catalog.left(text_, 1) = '@' then
    if text_ in ('@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly') then
      return null;
    end if;
    return pg_catalog.format('''%s'' is not a schedule pg_cron runs: use @yearly, @monthly, @weekly, @daily, @hourly or five fields', text_);
  end if;
  parts := pg_catalog.regexp_split_to_array(text_, '\s+');
  if pg_catalog.cardinality(parts) <> 5 then
    return pg_catalog.format('a cron expression is five fields (minute hour day-of-month month day-of-week, in UTC), e.g. ''0 2 * * *''; got ''%s''', text_);
  end if;
  for i in 1..5 loop
    continue when i = 3 and parts[3] = '$'; -- pg_cron 1.6: the last day of the month
    names := case i when 4 then months when 5 then days end;
    foreach part in array pg_catalog.string_to_array(parts[i], ',') loop
      m := pg_catalog.regexp_match(part, '^(\*|([0-9]+|[a-z]+)(?:-([0-9]+|[a-z]+))?)(?:/([0-9]+))?$');
      if m is null then
        return pg_catalog.format('the %s field ''%s'' is not a number, a name, a range a-b, * or a step */n or a-b/n', fields[i], part);
      end if;
      if m[1] <> '*' then
        bounds := '{}';
        foreach token in array array_remove(array[m[2], m[3]], null) loop
          if token ~ '^[0-9]+$' then
            if token::numeric < lows[i] or token::numeric > highs[i] then
              return pg_catalog.format('the %s is %s-%s; got %s', fields[i], lows[i], highs[i], token);
            end if;
            v := token::int;
          elsif names is null then
            return pg_catalog.format('the %s takes no names; got ''%s''', fields[i], token);
          else
            v := pg_catalog.array_position(names, token);
            if v is null then
              return pg_catalog.format('''%s'' is not a %s name (%s-%s)', token, fields[i], names[1], names[pg_catalog.cardinality(names)]);
            end if;
            v := v - 1 + lows[i];
          end if;
          bounds := bounds || v;
          if m[3] is null and m[4] is not null then
            return pg_catalog.format('the %s field ''%s'' has a step without a range: write */%s or %s-%s/%s', fields[i], part, m[4], m[2], highs[i], m[4]);
          end if;
        end loop;
        if pg_catalog.cardinality(bounds) = 2 and bounds[2] < bounds[1] then
          return pg_catalog.format('the %s range ''%s'' runs backwards', fields[i], part);
        end if;
      end if;
      if m[4] is not null and (m[4]::numeric < 1 or m[4]::numeric > steps[i]) then
        return pg_catalog.format('the %s step is 1-%s; got %s', fields[i], steps[i], m[4]);
      end if;
    end loop;
  end loop;
  return null;
end
$$;
comment on function supabase_jobs.cron_problem is
  'Why pg_cron would refuse a recurring schedule (not whether its days ever come: only the TypeScript side checks that), in one sentence naming the field (minute 0-59, hour 0-23, day of month 1-31 or $, month 1-12 or jan-dec, day of week 0-7 or sun-sat; lists, ranges a-b, steps */n and a-b/n; @yearly @monthly @weekly @daily @hourly); null when it is one. The TypeScript twin is cronProblem (src/lib/store/cron-expression.ts).';

create table supabase_jobs.schedules (
  name       text primary key,
  kind       text not null,
  cron       text not null,
  params     jsonb not null default '{}',
  job_table  text not null default 'jobs',
  updated_at timestamptz not null default now(),
  constraint schedules_name_shape check (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
  constraint schedules_cron_valid check (supabase_jobs.cron_problem(cron) is null),
  constraint schedules_params_object check (jsonb_typeof(params) = 'object')
);
comment on table supabase_jobs.schedules is
  'Recurring jobs declared in code (defineSchedule), replaced as a set by job_sync_schedules. Each runs as pg_cron entry supabase-jobs-schedule:<name>; each run is a job with idempotency key schedule:<name>:<UTC minute>.';

create or replace function public.job_sync_schedules(schedules jsonb, job_table text default 'jobs')
returns integer
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  item record;
  at text;
  problem text;
begin
  if schedules is null or pg_catalog.jsonb_typeof(schedules) <> 'array' then
    perform supabase_jobs.invalid('schedules', 'schedules is a JSON array of {name, kind, cron, params}');
  end if;
  for item in select e.value, e.ordinality - 1 as i from pg_catalog.jsonb_array_elements(schedules) with ordinality e loop
    if pg_catalog.jsonb_typeof(item.value) <> 'object' then
      perform supabase_jobs.invalid(pg_catalog.format('schedules[%s]', item.i), 'each schedule is a JSON object');
    end if;
    -- Each part is a JSON string: 0 is not the name '0', and a missing kind is refused here, not by a NOT NULL.
    if pg_catalog.jsonb_typeof(item.value -> 'name') is distinct from 'string'
       or (item.value ->> 'name') !~ '^[a-z0-9][a-z0-9._-]{0,62}$' then
      perform supabase_jobs.invalid(pg_catalog.format('schedules[%s].name', item.i),
        pg_catalog.format('a schedule name is 1 to 63 lowercase letters, digits, dots, dashes or underscores; got %L', item.value ->> 'name'));
    end if;
    -- From here on the schedule is named by its name: schedules["nightly-report"].cron.
    at := pg_catalog.format('schedules[%s]', pg_catalog.to_json(item.value ->> 'name'));
    if pg_catalog.jsonb_typeof(item.value -> 'kind') is distinct from 'string'
       or not coalesce(supabase_jobs.kind_is_valid(item.value ->> 'kind'), false) then
      perform supabase_jobs.invalid(at || '.kind', pg_catalog.format('not a kind: %L', item.value ->> 'kind'));
    end if;
    problem := case when pg_catalog.jsonb_typeof(item.value -> 'cron') is distinct from 'string'
                    then 'cron is a string: five fields, an @alias or ''N seconds'''
                    else supabase_jobs.cron_problem(item.value ->> 'cron') end;
    if problem is not null then
      perform supabase_jobs.invalid(at || '.cron', problem);
    end if;
    if item.value ? 'params' and pg_catalog.jsonb_typeof(item.value -> 'params') <> 'object' then
      perform supabase_jobs.invalid(at || '.params', 'params is a JSON object');
    end if;
  end loop;
  select e ->> 'name' into at from pg_catalog.jsonb_array_elements(schedules) e
   group by e ->> 'name' having pg_catalog.count(*) > 1 order by 1 limit 1;
  if at is not null then
    perform supabase_jobs.invalid('schedules', pg_catalog.format('two schedules are named %L', at));
  end if;

  delete from supabase_jobs.schedules s
   where s.job_table = label
     and s.name not in (select e ->> 'name' from pg_catalog.jsonb_array_elements(schedules) e);
  insert into supabase_jobs.schedules as s (name, kind, cron, params, job_table)
  select e ->> 'name', e ->> 'kind', pg_catalog.btrim(e ->> 'cron', e' \t\n\r'), coalesce(e -> 'params', '{}'::jsonb), label
    from pg_catalog.jsonb_array_elements(schedules) e
  on conflict (name) do update
     set kind = excluded.kind, cron = excluded.cron, params = excluded.params, job_table = excluded.job_table, updated_at = now()
   where (s.kind, s.cron, s.params, s.job_table) is distinct from (excluded.kind, excluded.cron, excluded.params, excluded.job_table);
  perform supabase_jobs.install_recurring();
  return pg_catalog.jsonb_array_length(schedules);
end
$$;
comment on function public.job_sync_schedules is
  'Replaces the recurring schedules of a job table with this set ({name, kind, cron, params}) and their pg_cron entries; returns how many there are. Each is checked first (supabase_jobs.cron_problem for the expression); a bad one raises 22023 naming it by its name, e.g. field=schedules["nightly-report"].cron (a bad name by its position), and nothing changes. Service role only.';

create or replace function supabase_jobs.run_schedule(name text, slot timestamptz default now())
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
comment on function supabase_jobs.run_schedule is
  'Enqueues the job of one schedule for the minute of slot (default now), once: a second call for the same minute returns the same job.';

create or replace function supabase_jobs.install_recurring()
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
comment on function supabase_jobs.install_recurring is
  'Puts the recurring schedules (supabase_jobs.schedules) into pg_cron, one cron job each, and drops the cron jobs of schedules gone; returns how many. Runs as its owner (SECURITY DEFINER): pg_cron''s cron.schedule is the owner''s to call, for the service role''s job_sync_schedules and install_schedules.';

create or replace function supabase_jobs.install_schedules()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  reclaim constant text := 'select count(*) from supabase_jobs.reclaim_all((select s.stale_after from supabase_jobs.settings s where s.id))';
begin
  if pg_catalog.to_regprocedure('cron.schedule(text, text, text)') is null then
    raise notice 'supabase_jobs: pg_cron is not enabled, so no schedules were installed. Enable it, then run: select supabase_jobs.install_schedules();';
    return 0;
  end if;
  perform cron.schedule('supabase-jobs-backstop', '* * * * *',
    'select supabase_jobs.backstop()');
  -- pg_cron 1.5 and later run a job every N seconds; older ones refuse the
  -- schedule with invalid_parameter_value, and these two run every minute.
  begin
    perform cron.schedule('supabase-jobs-reclaim', '5 seconds', reclaim);
    perform cron.schedule('supabase-jobs-due', '5 seconds', 'select supabase_jobs.kick_due()');
  exception when invalid_parameter_value then
    perform cron.schedule('supabase-jobs-reclaim', '* * * * *', reclaim);
    perform cron.schedule('supabase-jobs-due', '* * * * *', 'select supabase_jobs.kick_due()');
    raise notice 'supabase_jobs: pg_cron % schedules in minutes only (seconds need 1.5 or later): the reclaimer and the due wake-ups run every minute, so a dead worker''s job, or one queued for later, waits up to a minute more before it runs.',
      coalesce((select e.extversion from pg_catalog.pg_extension e where e.extname = 'pg_cron'), '(unknown version)');
  end;
  perform cron.schedule('supabase-jobs-cleanup', '17 * * * *',
    'select * from supabase_jobs.cleanup()');
  return 4 + supabase_jobs.install_recurring();
end
$$;
comment on function supabase_jobs.install_schedules() is
  'Creates or replaces the pg_cron schedules supabase-jobs-backstop (every minute), supabase-jobs-reclaim and supabase-jobs-due (every 5 seconds on pg_cron 1.5 and later, else every minute, with a notice), supabase-jobs-cleanup (hourly at minute 17) and one supabase-jobs-schedule:<name> per recurring schedule. Returns how many; 0 with a notice when pg_cron is not enabled.';

-- Security: the declared schedules are written and read by workers only
-- (job_sync_schedules, as the service role).
alter table supabase_jobs.schedules enable row level security;
create policy schedules_service_role on supabase_jobs.schedules for all to service_role using (true) with check (true);
revoke all on supabase_jobs.schedules from public, anon, authenticated;
grant select, insert, update, delete on supabase_jobs.schedules to service_role;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.cron_problem, public.job_sync_schedules, supabase_jobs.run_schedule,
  supabase_jobs.install_recurring, supabase_jobs.install_schedules
  from public, anon, authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.cron_problem, public.job_sync_schedules, supabase_jobs.run_schedule,
  supabase_jobs.install_recurring
  to service_role;
