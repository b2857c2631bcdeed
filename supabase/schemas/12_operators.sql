-- Operators: the tunables (settings, one row), the views an admin reads in
-- Studio, the admin overview, reclaiming jobs whose worker went silent,
-- expiry, retention (cleanup, which keeps the phase timings of deleted jobs)
-- and the recurring schedules declared in code. The pg_cron entries are
-- installed by supabase_jobs.install_schedules (99_install).

create table supabase_jobs.settings (
  id                     boolean primary key default true,
  stale_after            interval,
  backstop_after         interval not null default interval '30 seconds',
  kick_timeout_ms        integer not null default 5000,
  finished_retention     interval,
  cron_history_retention interval not null default interval '7 days',
  updated_at             timestamptz not null default now(),
  cleanup_batch_size     integer not null default 1000,
  cleanup_time_budget    interval not null default interval '5 seconds',
  constraint settings_single_row check (id),
  constraint settings_stale_after_positive check (stale_after > interval '0'),
  constraint settings_backstop_after_not_negative check (backstop_after >= interval '0'),
  constraint settings_kick_timeout_range check (kick_timeout_ms between 100 and 60000),
  constraint settings_finished_retention_positive check (finished_retention is null or finished_retention > interval '0'),
  constraint settings_cron_history_retention_positive check (cron_history_retention > interval '0'),
  constraint settings_cleanup_batch_size_range check (cleanup_batch_size between 1 and 100000),
  constraint settings_cleanup_time_budget_range check (cleanup_time_budget > interval '0' and cleanup_time_budget <= interval '10 minutes')
);
comment on table supabase_jobs.settings is
  'Tunables of the schedules and the kick (one row). Change with: update supabase_jobs.settings set stale_after = ''10 minutes'';';
comment on column supabase_jobs.settings.stale_after is
  'Null (the default): the supabase-jobs-reclaim schedule readmits only jobs whose worker missed its declared heartbeat. Set it to also readmit jobs claimed without one after this much silence.';
comment on column supabase_jobs.settings.backstop_after is
  'The supabase-jobs-backstop schedule wakes the worker when a job has been claimable for this long.';
comment on column supabase_jobs.settings.kick_timeout_ms is
  'timeout_milliseconds of every wake-up request (the worker answers at once and works in the background).';
comment on column supabase_jobs.settings.finished_retention is
  'Retention, in one place: when set, the hourly cleanup deletes done/failed/cancelled jobs finished longer ago than this (their phase timings are kept in supabase_jobs.phase_timings). Null keeps every job. Change with: update supabase_jobs.settings set finished_retention = ''14 days'';';
comment on column supabase_jobs.settings.cron_history_retention is
  'The daily cleanup deletes cron.job_run_details older than this (pg_cron never does).';
comment on column supabase_jobs.settings.cleanup_batch_size is
  'Finished jobs one cleanup statement deletes at most (each statement locks only those rows, skipping any another transaction holds).';
comment on column supabase_jobs.settings.cleanup_time_budget is
  'How long one cleanup run keeps deleting batches (each job table gets at least one); what is left waits for the next run (hourly). A run is one transaction: keep it short on a busy table.';
insert into supabase_jobs.settings default values;

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

create table supabase_jobs.phase_timings (
  id          uuid primary key,
  job_table   text not null,
  kind        text not null,
  owner_id    uuid references auth.users (id) on delete cascade,
  finished_at timestamptz not null,
  timings     jsonb not null,
  constraint phase_timings_object check (jsonb_typeof(timings) = 'object')
);
comment on table supabase_jobs.phase_timings is
  'Phase timings of done jobs that retention deleted, so PhasePlan.fromHistory (public.job_phase_history) still fits plans from them. Written by supabase_jobs.cleanup(); the newest 1000 per job table and kind are kept.';
comment on column supabase_jobs.phase_timings.id is
  'The deleted job''s id.';
comment on column supabase_jobs.phase_timings.job_table is
  'The job table it belonged to.';
comment on column supabase_jobs.phase_timings.kind is
  'The kind of work.';
comment on column supabase_jobs.phase_timings.owner_id is
  'The user who enqueued it: they read their own, as they read their jobs.';
comment on column supabase_jobs.phase_timings.finished_at is
  'When it finished done.';
comment on column supabase_jobs.phase_timings.timings is
  'Seconds (and input size) per phase, as the job recorded them.';
create index phase_timings_kind_idx on supabase_jobs.phase_timings (job_table, kind, finished_at desc, id desc);
create index phase_timings_owner_idx on supabase_jobs.phase_timings (owner_id);

-- Views: all run as the caller (security_invoker), never read params or payload,
-- and are granted to service_role only (14_security).

create view supabase_jobs.job_counts with (security_invoker = true) as
select j.job_table, j.kind, j.status,
       pg_catalog.count(*) as jobs,
       pg_catalog.min(j.created_at) as oldest_created_at,
       pg_catalog.max(j.updated_at) as last_change_at
  from supabase_jobs.job as j
 group by j.job_table, j.kind, j.status
 order by j.job_table, j.kind, j.status;
comment on view supabase_jobs.job_counts is
  'How many jobs each job table holds, per kind and status (all rows kept; see settings.finished_retention).';
comment on column supabase_jobs.job_counts.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.job_counts.kind is 'The kind of work.';
comment on column supabase_jobs.job_counts.status is 'queued, running, done, failed or cancelled.';
comment on column supabase_jobs.job_counts.jobs is 'How many jobs of this table, kind and status.';
comment on column supabase_jobs.job_counts.oldest_created_at is 'When the oldest of them was enqueued (for queued: how far behind the queue is).';
comment on column supabase_jobs.job_counts.last_change_at is 'The latest change to any of them, heartbeats included.';

create view supabase_jobs.job_throughput_hourly with (security_invoker = true) as
select pg_catalog.date_trunc('hour', j.finished_at) as hour, j.job_table, j.kind, j.status,
       pg_catalog.count(*) as jobs
  from supabase_jobs.job as j
 where j.finished_at >= now() - interval '7 days'
 group by 1, j.job_table, j.kind, j.status
 order by 1 desc, j.job_table, j.kind, j.status;
comment on view supabase_jobs.job_throughput_hourly is
  'Jobs finished per hour over the last 7 days, per job table, kind and final status (hours with none are absent).';
comment on column supabase_jobs.job_throughput_hourly.hour is 'The hour the jobs finished in (start of the hour, in the session time zone).';
comment on column supabase_jobs.job_throughput_hourly.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.job_throughput_hourly.kind is 'The kind of work.';
comment on column supabase_jobs.job_throughput_hourly.status is 'How they ended: done, failed or cancelled.';
comment on column supabase_jobs.job_throughput_hourly.jobs is 'How many finished in that hour.';

create view supabase_jobs.job_latency with (security_invoker = true) as
select j.job_table, j.kind,
       pg_catalog.count(*) filter (where j.started_at >= now() - interval '24 hours') as started,
       pg_catalog.percentile_cont(0.5) within group (
         order by case when j.started_at >= now() - interval '24 hours' then j.started_at - j.available_at end) as wait_p50,
       pg_catalog.percentile_cont(0.95) within group (
         order by case when j.started_at >= now() - interval '24 hours' then j.started_at - j.available_at end) as wait_p95,
       pg_catalog.count(*) filter (where j.status = 'done' and j.finished_at >= now() - interval '24 hours') as done,
       pg_catalog.percentile_cont(0.5) within group (
         order by case when j.status = 'done' and j.finished_at >= now() - interval '24 hours' then j.finished_at - j.started_at end) as run_p50,
       pg_catalog.percentile_cont(0.95) within group (
         order by case when j.status = 'done' and j.finished_at >= now() - interval '24 hours' then j.finished_at - j.started_at end) as run_p95
  from supabase_jobs.job as j
 where j.started_at >= now() - interval '24 hours'
    or (j.status = 'done' and j.finished_at >= now() - interval '24 hours')
 group by j.job_table, j.kind
 order by j.job_table, j.kind;
comment on view supabase_jobs.job_latency is
  'Queue wait and run time per job table and kind over the last 24 hours, as medians (p50) and 95th percentiles (p95, interpolated: percentile_cont).';
comment on column supabase_jobs.job_latency.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.job_latency.kind is 'The kind of work.';
comment on column supabase_jobs.job_latency.started is 'Jobs whose current attempt a worker claimed in the last 24 hours (what the wait is measured over).';
comment on column supabase_jobs.job_latency.wait_p50 is 'Median queue wait: from available (enqueued, or its retry backoff over) to claimed (started_at - available_at).';
comment on column supabase_jobs.job_latency.wait_p95 is '95th percentile of the queue wait: 1 job in 20 waited longer.';
comment on column supabase_jobs.job_latency.done is 'Jobs that finished done in the last 24 hours (what the run time is measured over).';
comment on column supabase_jobs.job_latency.run_p50 is 'Median run time of the successful attempt (finished_at - started_at).';
comment on column supabase_jobs.job_latency.run_p95 is '95th percentile of the run time: 1 successful job in 20 ran longer.';

create view supabase_jobs.job_failure_rates with (security_invoker = true) as
select j.job_table, j.kind,
       pg_catalog.count(*) as finished,
       pg_catalog.count(*) filter (where j.status = 'done') as done,
       pg_catalog.count(*) filter (where j.status = 'failed') as failed,
       pg_catalog.count(*) filter (where j.status = 'cancelled') as cancelled,
       pg_catalog.round(pg_catalog.count(*) filter (where j.status = 'failed')::numeric
         / nullif(pg_catalog.count(*) filter (where j.status in ('done', 'failed')), 0), 4) as failure_rate
  from supabase_jobs.job as j
 where j.finished_at >= now() - interval '7 days'
 group by j.job_table, j.kind
 order by j.job_table, j.kind;
comment on view supabase_jobs.job_failure_rates is
  'How often each kind fails: jobs finished in the last 7 days per job table and kind, by outcome. See job_top_errors for why.';
comment on column supabase_jobs.job_failure_rates.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.job_failure_rates.kind is 'The kind of work.';
comment on column supabase_jobs.job_failure_rates.finished is 'Jobs that finished in the last 7 days, however they ended.';
comment on column supabase_jobs.job_failure_rates.done is 'Of those, finished done.';
comment on column supabase_jobs.job_failure_rates.failed is 'Of those, finished failed (retries spent, or failed outright).';
comment on column supabase_jobs.job_failure_rates.cancelled is 'Of those, cancelled by their owner (not a failure).';
comment on column supabase_jobs.job_failure_rates.failure_rate is 'failed / (done + failed), 0 to 1, four decimals; cancelled jobs count neither way. Null when none finished done or failed.';

create view supabase_jobs.job_top_errors with (security_invoker = true) as
select e.job_table, e.kind, e.rank, e.error_code, e.error, e.jobs, e.last_seen_at
  from (
    select j.job_table, j.kind, j.error_code, j.error,
           pg_catalog.count(*) as jobs,
           pg_catalog.max(j.finished_at) as last_seen_at,
           pg_catalog.row_number() over (partition by j.job_table, j.kind
             order by pg_catalog.count(*) desc, pg_catalog.max(j.finished_at) desc, j.error_code, j.error) as rank
      from supabase_jobs.job as j
     where j.status = 'failed' and j.finished_at >= now() - interval '7 days'
     group by j.job_table, j.kind, j.error_code, j.error
  ) as e
 where e.rank <= 10
 order by e.job_table, e.kind, e.rank;
comment on view supabase_jobs.job_top_errors is
  'Why jobs failed: the 10 most frequent error sentences per job table and kind among jobs that failed in the last 7 days.';
comment on column supabase_jobs.job_top_errors.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.job_top_errors.kind is 'The kind of work.';
comment on column supabase_jobs.job_top_errors.rank is '1 = the most frequent error of this kind (ties: the most recent first).';
comment on column supabase_jobs.job_top_errors.error_code is 'The stable code: worker_lost, expired, failed, or the handler''s own.';
comment on column supabase_jobs.job_top_errors.error is 'The sentence the user was shown (one row per language it was written in).';
comment on column supabase_jobs.job_top_errors.jobs is 'How many jobs failed with this code and sentence.';
comment on column supabase_jobs.job_top_errors.last_seen_at is 'When the latest of them failed.';

-- The history a running job is compared with: done jobs of its table and kind
-- in the last 7 days, at least 5 of them (fewer predict nothing).
create view supabase_jobs.jobs_overrunning with (security_invoker = true) as
with history as (
  select d.job_table, d.kind,
         pg_catalog.count(*) as history_jobs,
         pg_catalog.percentile_cont(0.5) within group (order by d.finished_at - d.started_at) as run_p50,
         pg_catalog.percentile_cont(0.95) within group (order by d.finished_at - d.started_at) as run_p95
    from supabase_jobs.job as d
   where d.status = 'done' and d.finished_at >= now() - interval '7 days'
   group by d.job_table, d.kind
  having pg_catalog.count(*) >= 5
)
select r.id, r.job_table, r.kind, r.owner_id, r.attempts, r.started_at,
       now() - r.started_at as running_for,
       greatest(h.run_p95, h.run_p50 * 2) as expected_within,
       h.run_p50, h.run_p95, h.history_jobs,
       r.progress, r.stage, r.heartbeat_at
  from supabase_jobs.job as r
  join history as h on h.job_table = r.job_table and h.kind = r.kind
 where r.status = 'running' and now() - r.started_at > greatest(h.run_p95, h.run_p50 * 2)
 order by now() - r.started_at desc;
comment on view supabase_jobs.jobs_overrunning is
  'Running jobs that have run longer than their kind''s history predicts: past both the p95 and twice the median run time of the kind''s done jobs of the last 7 days (at least 5 of them). Stuck, or given unusually large input.';
comment on column supabase_jobs.jobs_overrunning.id is 'The job.';
comment on column supabase_jobs.jobs_overrunning.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.jobs_overrunning.kind is 'The kind of work.';
comment on column supabase_jobs.jobs_overrunning.owner_id is 'The user who enqueued it.';
comment on column supabase_jobs.jobs_overrunning.attempts is 'Which attempt is running (1 = the first).';
comment on column supabase_jobs.jobs_overrunning.started_at is 'When this attempt was claimed.';
comment on column supabase_jobs.jobs_overrunning.running_for is 'How long this attempt has been running.';
comment on column supabase_jobs.jobs_overrunning.expected_within is 'The run time it has exceeded: the larger of run_p95 and twice run_p50.';
comment on column supabase_jobs.jobs_overrunning.run_p50 is 'Median run time of the kind''s done jobs (last 7 days).';
comment on column supabase_jobs.jobs_overrunning.run_p95 is '95th percentile run time of the kind''s done jobs (last 7 days).';
comment on column supabase_jobs.jobs_overrunning.history_jobs is 'How many done jobs the prediction is made from.';
comment on column supabase_jobs.jobs_overrunning.progress is 'The percent the worker last reported.';
comment on column supabase_jobs.jobs_overrunning.stage is 'The phase the worker last reported.';
comment on column supabase_jobs.jobs_overrunning.heartbeat_at is 'The worker''s last tick: recent means it is alive and slow, old means it may be gone (see jobs_silent).';

create view supabase_jobs.jobs_silent with (security_invoker = true) as
select j.id, j.job_table, j.kind, j.owner_id, j.attempts, j.max_attempts, j.heartbeat_ms,
       coalesce(j.heartbeat_at, j.started_at) as last_beat_at,
       now() - coalesce(j.heartbeat_at, j.started_at) as silent_for,
       pg_catalog.floor(extract(epoch from now() - coalesce(j.heartbeat_at, j.started_at)) * 1000 / j.heartbeat_ms)::integer as beats_missed,
       coalesce(j.heartbeat_at, j.started_at)
         + pg_catalog.make_interval(secs => j.heartbeat_ms * supabase_jobs.missed_beats() / 1000.0) as reclaimable_at
  from supabase_jobs.job as j
 where j.status = 'running' and j.heartbeat_ms is not null
   and coalesce(j.heartbeat_at, j.started_at) < now() - pg_catalog.make_interval(secs => j.heartbeat_ms * 2.5 / 1000.0)
 order by coalesce(j.heartbeat_at, j.started_at);
comment on view supabase_jobs.jobs_silent is
  'Running jobs whose worker went silent: it declared a heartbeat (heartbeat_ms) at claim and nothing has arrived for 2.5 intervals. The reclaim schedule readmits them once supabase_jobs.missed_beats() beats are missed (reclaimable_at).';
comment on column supabase_jobs.jobs_silent.id is 'The job.';
comment on column supabase_jobs.jobs_silent.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.jobs_silent.kind is 'The kind of work.';
comment on column supabase_jobs.jobs_silent.owner_id is 'The user who enqueued it.';
comment on column supabase_jobs.jobs_silent.attempts is 'Which attempt went silent; when it equals max_attempts the reclaim closes the job failed (worker_lost) instead of requeueing it.';
comment on column supabase_jobs.jobs_silent.max_attempts is 'Claims allowed.';
comment on column supabase_jobs.jobs_silent.heartbeat_ms is 'The interval (ms) the worker promised to beat at.';
comment on column supabase_jobs.jobs_silent.last_beat_at is 'The last heartbeat (or the claim, if it never beat).';
comment on column supabase_jobs.jobs_silent.silent_for is 'How long nothing has arrived.';
comment on column supabase_jobs.jobs_silent.beats_missed is 'Whole heartbeat intervals since the last beat.';
comment on column supabase_jobs.jobs_silent.reclaimable_at is 'From when job_reclaim_silent (the reclaim schedule, every 5 seconds; every minute before pg_cron 1.5) readmits it: last beat + heartbeat_ms x missed_beats().';

create view supabase_jobs.owner_usage with (security_invoker = true) as
select a.owner_id, a.job_table,
       pg_catalog.count(*) filter (where a.status = 'queued') as queued,
       pg_catalog.count(*) filter (where a.status = 'running') as running,
       pg_catalog.count(*) as active_jobs,
       t.max_active_per_owner,
       pg_catalog.round(100.0 * pg_catalog.count(*) / t.max_active_per_owner, 1) as active_pct,
       coalesce(pg_catalog.sum(pg_catalog.octet_length(a.payload)), 0)::bigint as payload_bytes,
       t.max_payload_bytes_per_owner,
       pg_catalog.round(100.0 * coalesce(pg_catalog.sum(pg_catalog.octet_length(a.payload)), 0) / t.max_payload_bytes_per_owner, 1) as payload_pct
  from supabase_jobs.job as a
  join supabase_jobs.job_tables as t on t.label = a.job_table
 where a.status in ('queued', 'running')
 group by a.owner_id, a.job_table, t.max_active_per_owner, t.max_payload_bytes_per_owner
 order by pg_catalog.count(*) desc, a.job_table, a.owner_id;
comment on view supabase_jobs.owner_usage is
  'Who is using the queue: each owner''s queued and running jobs and their payload bytes per job table, against the table''s per-owner quotas (supabase_jobs.job_tables; past either, enqueue answers 429).';
comment on column supabase_jobs.owner_usage.owner_id is 'The user (auth.users.id); null for jobs a worker enqueued without an owner.';
comment on column supabase_jobs.owner_usage.job_table is 'The job table: jobs, or <schema>.<name>.';
comment on column supabase_jobs.owner_usage.queued is 'Their jobs waiting to be claimed.';
comment on column supabase_jobs.owner_usage.running is 'Their jobs being worked on.';
comment on column supabase_jobs.owner_usage.active_jobs is 'queued + running: what max_active_per_owner limits.';
comment on column supabase_jobs.owner_usage.max_active_per_owner is 'The table''s limit on active jobs per owner (null: none). A kind may have a tighter one (supabase_jobs.job_kinds).';
comment on column supabase_jobs.owner_usage.active_pct is 'active_jobs as a percent of max_active_per_owner (null: no limit).';
comment on column supabase_jobs.owner_usage.payload_bytes is 'Bytes of payload their active jobs hold (payloads are dropped when jobs finish).';
comment on column supabase_jobs.owner_usage.max_payload_bytes_per_owner is 'The table''s limit on those bytes per owner (null: none).';
comment on column supabase_jobs.owner_usage.payload_pct is 'payload_bytes as a percent of max_payload_bytes_per_owner (null: no limit).';

create or replace function supabase_jobs.attach_admin_policies(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
begin
  execute pg_catalog.format('drop policy if exists owner_reads on %s', tbl);
  execute pg_catalog.format('create policy owner_reads on %s for select to authenticated using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()))', tbl);
  execute pg_catalog.format('drop policy if exists owner_cancels on %s', tbl);
  execute pg_catalog.format('create policy owner_cancels on %s for update to authenticated using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin())) with check (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()))', tbl);
end
$$;

create or replace function public.jobs_admin_overview()
returns jsonb
language plpgsql stable
set search_path = ''
as $$
begin
  if not supabase_jobs.is_admin() then
    raise exception 'the jobs overview is for admins only'
      using errcode = '42501',
            hint = 'An admin is a user whose app_metadata.role is ''admin'' (set with the service role: Auth admin API or dashboard); the claim reaches the JWT at the next sign-in or refresh.';
  end if;
  return pg_catalog.jsonb_build_object(
    'generated_at', now(),
    'job_counts', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_counts as v),
    'job_throughput_hourly', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_throughput_hourly as v),
    'job_latency', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_latency as v),
    'job_failure_rates', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_failure_rates as v),
    'job_top_errors', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_top_errors as v),
    'jobs_overrunning', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.jobs_overrunning as v),
    'jobs_silent', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.jobs_silent as v),
    'owner_usage', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.owner_usage as v)
  );
end
$$;
comment on function public.jobs_admin_overview is
  'For admins (supabase_jobs.is_admin(): app_metadata.role = ''admin''): the operator views of supabase_jobs (job_counts, job_throughput_hourly, job_latency, job_failure_rates, job_top_errors, jobs_overrunning, jobs_silent, owner_usage) as one JSON object keyed by view name, each an array of its rows. Anyone else: 42501.';

create or replace function supabase_jobs.reclaim_jobs(label text, stale_after interval)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  if stale_after is not null and stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  return query
  with stale as (
    select s.id, s.attempts from supabase_jobs.job as s
     where s.job_table = label and s.status = 'running'
       and ((s.heartbeat_ms is not null
             and coalesce(s.heartbeat_at, s.started_at) < now() - pg_catalog.make_interval(secs => s.heartbeat_ms * supabase_jobs.missed_beats() / 1000.0))
         or (stale_after is not null and coalesce(s.heartbeat_at, s.started_at) < now() - stale_after)))
  , reclaimed as (
  update supabase_jobs.job as t
     set status = (case when t.attempts >= t.max_attempts then 'failed' else 'queued' end)::public.job_status,
         error = case when t.attempts >= t.max_attempts then supabase_jobs.user_message('worker_lost', t.locale, t.attempts) else t.error end,
         error_code = case when t.attempts >= t.max_attempts then 'worker_lost' else t.error_code end
    from stale
   where t.job_table = label and t.id = stale.id and t.status = 'running' and t.attempts = stale.attempts
     and ((t.heartbeat_ms is not null
           and coalesce(t.heartbeat_at, t.started_at) < now() - pg_catalog.make_interval(secs => t.heartbeat_ms * supabase_jobs.missed_beats() / 1000.0))
       or (stale_after is not null and coalesce(t.heartbeat_at, t.started_at) < now() - stale_after))
  returning t as j)
  -- No set-returning call per row (docs/architecture.md, "Row type descriptors"): the payload blanked by a scalar call.
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(reclaimed.j, '{"payload": null}'::jsonb) as j from reclaimed offset 0) as w;
end
$$;

create or replace function supabase_jobs.reclaim_all(stale_after interval)
returns table (job_table text, id uuid, status public.job_status)
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass;
  label text;
begin
  if stale_after is not null and stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  for tbl in select t.table_name from supabase_jobs.job_tables t order by t.table_name::text loop
    label := supabase_jobs.table_label(tbl);
    return query select label, r.id, r.status from supabase_jobs.reclaim_table(label, stale_after) r;
  end loop;
end
$$;
comment on function supabase_jobs.reclaim_all is
  'The supabase-jobs-reclaim schedule: supabase_jobs.reclaim_table on every registered job table. One row per job readmitted (queued) or closed (failed).';

create or replace function supabase_jobs.reclaim_table(label text, stale_after interval)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query
    select * from supabase_jobs.reclaim_jobs(label, stale_after)
    union all
    select * from supabase_jobs.expire_jobs(label)
    union all
    select * from supabase_jobs.expire_questions(label);
end
$$;
comment on function supabase_jobs.reclaim_table is
  'One reclaim pass over one job table, the one both the reclaim schedule (reclaim_all) and public.job_reclaim_silent run: readmits jobs whose worker missed its declared heartbeat, and (only when stale_after is not null) jobs silent that long; closes queued jobs past expires_at as failed (expired) and waiting jobs whose question went unanswered past its deadline (question_unanswered).';

create or replace function public.job_reclaim_stale(stale_after interval, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if stale_after is null then
    raise exception using errcode = '22004',
      message = 'stale_after is required: reclaim_stale will not guess how long a silent worker is dead (job_reclaim_silent applies the heartbeats workers declared)',
      detail = 'field=stale_after';
  end if;
  if stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  return query select * from supabase_jobs.reclaim_jobs(label, stale_after);
end
$$;
comment on function public.job_reclaim_stale is
  'Readmits running jobs silent for stale_after (last heartbeat, else started_at), and those that broke their declared heartbeat: back to queued, or failed with a sentence for the user once max_attempts is spent. Refuses without stale_after (22004).';

create or replace function public.job_reclaim_silent(job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query select * from supabase_jobs.reclaim_table(supabase_jobs.job_table_label(job_table),
    (select s.stale_after from supabase_jobs.settings s where s.id));
end
$$;
comment on function public.job_reclaim_silent is
  'What the reclaim schedule does, on one job table (supabase_jobs.reclaim_table with settings.stale_after): readmits running jobs whose worker missed supabase_jobs.missed_beats() of the heartbeats it declared at claim (heartbeat_ms), and jobs silent for settings.stale_after when that is set: back to queued, or failed with a sentence once max_attempts is spent; and closes queued jobs past expires_at as failed (expired). With settings.stale_after null (the default) a job claimed without a declared heartbeat is never touched: nothing is guessed.';

create or replace function supabase_jobs.expire_jobs(label text)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query
  with expired as (
    update supabase_jobs.job as t
       set status = 'failed', error = supabase_jobs.user_message('expired', t.locale), error_code = 'expired'
     where t.job_table = label and t.status = 'queued' and t.expires_at <= now()
    returning t as j)
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(expired.j, '{"payload": null}'::jsonb) as j from expired offset 0) as w;
end
$$;

create or replace function supabase_jobs.cleanup()
returns table (what text, deleted bigint)
language plpgsql
set search_path = ''
as $$
declare
  settings supabase_jobs.settings;
  deadline timestamptz;
  cutoff timestamptz;
  n bigint;
  total bigint;
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
  if settings.finished_retention is null then
    return;
  end if;
  deadline := pg_catalog.clock_timestamp() + settings.cleanup_time_budget;
  cutoff := now() - settings.finished_retention;
  for t in select r.label from supabase_jobs.job_tables r order by r.label loop
    total := 0;
    loop
      -- One batch: the oldest finished rows past the cutoff (finished_at is
      -- set only on terminal rows), skipping any row another transaction
      -- holds; the timings of the done ones move to phase_timings.
      with batch as (
        select b.id from supabase_jobs.job as b
         where b.job_table = t.label and b.finished_at < cutoff
         order by b.finished_at
         limit settings.cleanup_batch_size
         for update skip locked
      ), gone as (
        delete from supabase_jobs.job as j using batch
         where j.job_table = t.label and j.id = batch.id
        returning j.id, j.job_table, j.kind, j.owner_id, j.finished_at, j.timings, j.status, j.is_active
      ), kept as (
        insert into supabase_jobs.phase_timings as p (id, job_table, kind, owner_id, finished_at, timings)
        select g.id, g.job_table, g.kind, g.owner_id, g.finished_at, g.timings from gone as g
         where g.status = 'done' and g.timings is not null and g.is_active
        on conflict (id) do nothing
      )
      select pg_catalog.count(*) into n from gone;
      total := total + n;
      -- At least one batch per table and run, so every table makes progress.
      exit when n < settings.cleanup_batch_size or pg_catalog.clock_timestamp() >= deadline;
    end loop;
    what := t.label;
    deleted := total;
    return next;
  end loop;
  -- Keep the newest list_max() timings per table and kind: no history call asks for more.
  delete from supabase_jobs.phase_timings as p
   using (select h.id from (
            select k.id, pg_catalog.row_number() over (partition by k.job_table, k.kind order by k.finished_at desc, k.id desc) as n
              from supabase_jobs.phase_timings as k) as h
           where h.n > supabase_jobs.list_max()) as old
   where p.id = old.id;
end
$$;
comment on function supabase_jobs.cleanup is
  'The supabase-jobs-cleanup schedule (hourly): deletes cron.job_run_details older than settings.cron_history_retention and, when settings.finished_retention is set, finished jobs older than that, in statements of settings.cleanup_batch_size rows (FOR UPDATE SKIP LOCKED) for at most settings.cleanup_time_budget; the timings of deleted done jobs are kept in supabase_jobs.phase_timings. One row per job table: how many it deleted.';

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
