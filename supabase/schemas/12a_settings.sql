-- Settings: the tunables of the schedules, the kick, reclaim and retention,
-- one row that service_role reads and updates. Read by 12c_reclaim,
-- 12d_expiry_and_retention, 12e_schedules and 13_kick; written only by an update.

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

-- Security: only workers (service_role) read and update the one row; no one
-- inserts or deletes it.
alter table supabase_jobs.settings enable row level security;
create policy settings_service_role_reads on supabase_jobs.settings for select to service_role using (true);
create policy settings_service_role_updates on supabase_jobs.settings for update to service_role using (true) with check (true);
revoke all on supabase_jobs.settings from public, anon, authenticated;
grant select, update on supabase_jobs.settings to service_role;
