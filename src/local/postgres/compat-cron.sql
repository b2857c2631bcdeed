-- Local stand-in for pg_cron (citusdata/pg_cron 1.6, as on Supabase), applied by applyCompat only
-- when the database has no `cron` schema and pg_cron is not preloaded (where it
-- is, the operator runs `create extension pg_cron` and then
-- `select supabase_jobs.install_schedules()`). NOT a migration, never on Supabase.
--
-- Same surface as upstream: cron.job and cron.job_run_details with upstream's
-- columns, cron.schedule(job_name, schedule, command) replacing a job of the same
-- name, cron.schedule(schedule, command), cron.unschedule(job_name) and
-- cron.unschedule(job_id) (both raise when there is no such job, as upstream).
-- A schedule is five cron fields or '<1-59> seconds' (pg_cron 1.5 and later);
-- anything else raises invalid_parameter_value ("invalid schedule"), as upstream.
-- Nothing runs here by itself: src/local/dispatcher.ts reads cron.job every
-- second, runs the due commands and records them in cron.job_run_details.

create schema cron;
comment on schema cron is 'Local stand-in for pg_cron (src/local/postgres/compat-cron.sql); src/local/dispatcher.ts runs the jobs.';

create sequence cron.jobid_seq;
create table cron.job (
  jobid bigint primary key default nextval('cron.jobid_seq'),
  schedule text not null,
  command text not null,
  nodename text not null default 'localhost',
  nodeport integer not null default coalesce(inet_server_port(), current_setting('port')::integer),
  database text not null default current_database(),
  username text not null default current_user,
  active boolean not null default true,
  jobname name,
  constraint jobname_username_uniq unique (jobname, username)
);

create sequence cron.runid_seq;
create table cron.job_run_details (
  jobid bigint,
  runid bigint primary key default nextval('cron.runid_seq'),
  job_pid integer,
  database text,
  username text,
  command text,
  status text,
  return_message text,
  start_time timestamptz,
  end_time timestamptz
);

-- The shape of a schedule upstream accepts (the dispatcher checks each field's range).
create function cron.check_schedule(schedule text)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if schedule !~ '^\s*\S+(\s+\S+){4}\s*$'
     and pg_catalog.lower(pg_catalog.btrim(schedule)) not in ('@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly')
     and coalesce(pg_catalog.substring(schedule, '^\s*(\d{1,2})\s+seconds?\s*$')::int not between 1 and 59, true) then
    raise exception using errcode = 'invalid_parameter_value', message = pg_catalog.format('invalid schedule: %s', schedule),
      hint = 'Use cron format (e.g. 5 4 * * *), or interval format ''[1-59] seconds''';
  end if;
end
$$;

create function cron.schedule(job_name text, schedule text, command text)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  id bigint;
begin
  if job_name is null or schedule is null or command is null then
    raise exception 'job_name, schedule and command are required';
  end if;
  perform cron.check_schedule(schedule);
  insert into cron.job (jobname, schedule, command) values (job_name, schedule, command)
  on conflict (jobname, username) do update set schedule = excluded.schedule, command = excluded.command, active = true
  returning jobid into id;
  return id;
end
$$;

create function cron.schedule(schedule text, command text)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  id bigint;
begin
  perform cron.check_schedule(schedule);
  insert into cron.job (schedule, command) values (schedule, command) returning jobid into id;
  return id;
end
$$;

create function cron.unschedule(job_name text)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  delete from cron.job j where j.jobname = job_name and j.username = current_user;
  if not found then
    raise exception 'could not find valid entry for job ''%''', job_name;
  end if;
  return true;
end
$$;

create function cron.unschedule(job_id bigint)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
  delete from cron.job j where j.jobid = job_id and j.username = current_user;
  if not found then
    raise exception 'could not find valid entry for job %', job_id;
  end if;
  return true;
end
$$;

revoke all on schema cron from public;
revoke all on all tables in schema cron from public;
revoke all on all sequences in schema cron from public;
revoke all on all functions in schema cron from public;
