-- Admin views: what the people who run the queue read in Studio (job counts,
-- throughput, latency, failure rates, top errors, overrunning and silent jobs,
-- owner usage), the admin overview that returns them as one object, and the
-- admin read and cancel policies every job table gets. The views run as the
-- caller, so an admin sees every job and a user their own.

-- Views: all run as the caller (security_invoker), never read params or payload,
-- and are granted to service_role and authenticated (the grants at the end).

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
  'For admins (supabase_jobs.is_admin(): app_metadata.role = ''admin''): the admin views of supabase_jobs (job_counts, job_throughput_hourly, job_latency, job_failure_rates, job_top_errors, jobs_overrunning, jobs_silent, owner_usage) as one JSON object keyed by view name, each an array of its rows. Anyone else: 42501.';

-- Security. The admin views run as the caller: an admin sees every job, a user their own.
revoke all on supabase_jobs.job_counts, supabase_jobs.job_throughput_hourly, supabase_jobs.job_latency,
  supabase_jobs.job_failure_rates, supabase_jobs.job_top_errors, supabase_jobs.jobs_overrunning,
  supabase_jobs.jobs_silent, supabase_jobs.owner_usage from public, anon, authenticated;
grant select on supabase_jobs.job_counts, supabase_jobs.job_throughput_hourly, supabase_jobs.job_latency,
  supabase_jobs.job_failure_rates, supabase_jobs.job_top_errors, supabase_jobs.jobs_overrunning,
  supabase_jobs.jobs_silent, supabase_jobs.owner_usage to service_role, authenticated;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.attach_admin_policies, public.jobs_admin_overview
  from public, anon, authenticated, service_role;

-- Signed-in users only: the overview checks is_admin itself.
grant execute on function
  public.jobs_admin_overview
  to authenticated;
