-- supabase-jobs — what an operator reads in Studio, and retention in one place.
--
-- Purpose: an admin opening Supabase Studio found only the raw job table, and
-- finished rows accumulated forever unless someone knew to set a setting that
-- a once-a-day cleanup read and applied in one unbounded DELETE. From here on:
--   * views in supabase_jobs answer the operator's questions (Studio lists
--     them under the supabase_jobs schema; each view and column is commented,
--     so the table editor explains them):
--       job_counts             how many jobs per job table, kind and status;
--       job_throughput_hourly  jobs finished per hour, kind and status (7 days);
--       job_latency            queue wait and run time, p50/p95 per kind (24 h);
--       job_failure_rates      failure rate per kind (7 days);
--       job_top_errors         the most frequent error sentences per kind (7 days);
--       jobs_overrunning       running jobs past what their kind's history predicts;
--       jobs_silent            running jobs whose worker stopped beating;
--       owner_usage            queued + running jobs and payload bytes per owner
--                              and table, against the table's quotas;
--   * retention is settings.finished_retention (null: keep), applied by the
--     supabase-jobs-cleanup schedule, now hourly at minute 17, in batches of
--     settings.cleanup_batch_size rows per statement (FOR UPDATE SKIP LOCKED)
--     within settings.cleanup_time_budget per run. The phase timings of the
--     done jobs it deletes move to supabase_jobs.phase_timings (the newest
--     list_max() per table and kind are kept), and job_phase_history reads
--     both, so PhasePlan.fromHistory fits the same plans after a cleanup.
-- Invariants: the views run as the caller (security_invoker) and never read
-- params or payload (owner_usage measures payload bytes without reading
-- them); only service_role (and the owner, Studio's postgres) may read them,
-- and supabase_jobs is not exposed through the Data API. A cleanup statement
-- touches at most cleanup_batch_size finished rows, never waits for a row
-- another transaction holds, and never touches a queued or running job.
-- Every function keeps a fixed search_path; every new table has RLS and
-- explicit grants.
-- Operator note: this migration builds one partial index on the finished rows
-- of every job table (job_finished_idx), which scans each table once. On job
-- tables of many millions of rows, apply it outside peak hours.
-- Breaks: supabase-jobs-cleanup runs hourly instead of daily at 03:17 UTC
-- (each run bounded by cleanup_time_budget). Rows deleted by cleanup are gone:
-- an installation that must keep every job copies them elsewhere first, or
-- keeps finished_retention null (the default).

-- ---------------------------------------------------------------------------
-- Finished rows in finishing order: what retention deletes first and what the
-- windowed views read. Partial, so queued and running rows never enter it;
-- finishing already changes the status (never a HOT update), so the entry is
-- the only extra write.
create index job_finished_idx on supabase_jobs.job (finished_at) where finished_at is not null;

-- ---------------------------------------------------------------------------
-- Views. All: security_invoker, no params or payload, service_role only.

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
comment on column supabase_jobs.jobs_silent.reclaimable_at is 'From when job_reclaim_silent (the reclaim schedule, every minute) readmits it: last beat + heartbeat_ms x missed_beats().';

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

do $$
declare
  v text;
begin
  foreach v in array array['job_counts', 'job_throughput_hourly', 'job_latency', 'job_failure_rates', 'job_top_errors',
                           'jobs_overrunning', 'jobs_silent', 'owner_usage'] loop
    execute pg_catalog.format('revoke all on supabase_jobs.%I from public, anon, authenticated', v);
    execute pg_catalog.format('grant select on supabase_jobs.%I to service_role', v);
  end loop;
end
$$;

-- ---------------------------------------------------------------------------
-- Retention.

alter table supabase_jobs.settings add column cleanup_batch_size integer not null default 1000;
alter table supabase_jobs.settings add column cleanup_time_budget interval not null default interval '5 seconds';
alter table supabase_jobs.settings add constraint settings_cleanup_batch_size_range check (cleanup_batch_size between 1 and 100000);
alter table supabase_jobs.settings add constraint settings_cleanup_time_budget_range
  check (cleanup_time_budget > interval '0' and cleanup_time_budget <= interval '10 minutes');
comment on column supabase_jobs.settings.finished_retention is
  'Retention, in one place: when set, the hourly cleanup deletes done/failed/cancelled jobs finished longer ago than this (their phase timings are kept in supabase_jobs.phase_timings). Null keeps every job. Change with: update supabase_jobs.settings set finished_retention = ''14 days'';';
comment on column supabase_jobs.settings.cleanup_batch_size is
  'Finished jobs one cleanup statement deletes at most (each statement locks only those rows, skipping any another transaction holds).';
comment on column supabase_jobs.settings.cleanup_time_budget is
  'How long one cleanup run keeps deleting batches (each job table gets at least one); what is left waits for the next run (hourly). A run is one transaction: keep it short on a busy table.';

-- The timings of done jobs cleanup deleted: what job_phase_history reads
-- besides the job tables. Bounded: cleanup keeps the newest list_max() per
-- table and kind (no call asks for more).
create table supabase_jobs.phase_timings (
  id uuid primary key,
  job_table text not null,
  kind text not null,
  owner_id uuid references auth.users (id) on delete cascade,
  finished_at timestamptz not null,
  timings jsonb not null,
  constraint phase_timings_object check (jsonb_typeof(timings) = 'object')
);
comment on table supabase_jobs.phase_timings is
  'Phase timings of done jobs that retention deleted, so PhasePlan.fromHistory (public.job_phase_history) still fits plans from them. Written by supabase_jobs.cleanup(); the newest 1000 per job table and kind are kept.';
comment on column supabase_jobs.phase_timings.id is 'The deleted job''s id.';
comment on column supabase_jobs.phase_timings.job_table is 'The job table it belonged to.';
comment on column supabase_jobs.phase_timings.kind is 'The kind of work.';
comment on column supabase_jobs.phase_timings.owner_id is 'The user who enqueued it: they read their own, as they read their jobs.';
comment on column supabase_jobs.phase_timings.finished_at is 'When it finished done.';
comment on column supabase_jobs.phase_timings.timings is 'Seconds (and input size) per phase, as the job recorded them.';
create index phase_timings_kind_idx on supabase_jobs.phase_timings (job_table, kind, finished_at desc, id desc);
create index phase_timings_owner_idx on supabase_jobs.phase_timings (owner_id);
alter table supabase_jobs.phase_timings enable row level security;
create policy phase_timings_owner_reads on supabase_jobs.phase_timings for select to authenticated
  using (owner_id = (select auth.uid()));
create policy phase_timings_service_role on supabase_jobs.phase_timings for all to service_role using (true) with check (true);
revoke all on supabase_jobs.phase_timings from public, anon, authenticated;
grant select on supabase_jobs.phase_timings to authenticated;
grant select, insert, update, delete on supabase_jobs.phase_timings to service_role;

create or replace function public.job_phase_history(kind text, "limit" integer default 50, job_table text default 'jobs')
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
  select h.timings, h.finished_at from (
    (select t.timings, t.finished_at, t.id from supabase_jobs.job as t
      where t.job_table = label and t.kind = job_phase_history.kind and t.status = 'done' and t.timings is not null and t.is_active
      order by t.finished_at desc, t.id desc
      limit "limit")
    union all
    (select p.timings, p.finished_at, p.id from supabase_jobs.phase_timings as p
      where p.job_table = label and p.kind = job_phase_history.kind
      order by p.finished_at desc, p.id desc
      limit "limit")
  ) as h
  order by h.finished_at desc, h.id desc
  limit "limit";
end
$$;
comment on function public.job_phase_history(text, integer, text) is
  'Phase timings of the latest done jobs of a kind, newest first, including those retention deleted (supabase_jobs.phase_timings): what PhasePlan.fromHistory fits medians and per-kilochar slopes from.';

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
comment on function supabase_jobs.cleanup() is
  'The supabase-jobs-cleanup schedule (hourly): deletes cron.job_run_details older than settings.cron_history_retention and, when settings.finished_retention is set, finished jobs older than that, in statements of settings.cleanup_batch_size rows (FOR UPDATE SKIP LOCKED) for at most settings.cleanup_time_budget; the timings of deleted done jobs are kept in supabase_jobs.phase_timings. One row per job table: how many it deleted.';
revoke all on function supabase_jobs.cleanup() from public, anon, authenticated;
grant execute on function supabase_jobs.cleanup() to service_role;

-- Hourly: a run is bounded by its time budget, so it runs often rather than long.
create or replace function supabase_jobs.install_schedules()
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
  perform cron.schedule('supabase-jobs-cleanup', '17 * * * *',
    'select * from supabase_jobs.cleanup()');
  return 3 + supabase_jobs.install_recurring();
end
$$;
comment on function supabase_jobs.install_schedules() is
  'Creates or replaces the pg_cron schedules supabase-jobs-backstop (every minute), supabase-jobs-reclaim (every minute), supabase-jobs-cleanup (hourly at minute 17) and one supabase-jobs-schedule:<name> per recurring schedule. Returns how many; 0 with a notice when pg_cron is not enabled.';

select supabase_jobs.install_schedules();
