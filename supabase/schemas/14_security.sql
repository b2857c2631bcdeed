-- Security: who may do what. Signed-in users (authenticated) read, enqueue and
-- cancel their own jobs through RLS and the job_* functions granted to them;
-- workers run as service_role, which bypasses RLS; anon gets nothing. Admins
-- (supabase_jobs.is_admin, in 03_job_table: JWT app_metadata.role = 'admin')
-- read and cancel every job. Every table has RLS and explicit grants; every
-- function's EXECUTE is revoked from PUBLIC and granted by name. Realtime
-- topics: a user reads jobs:<their id>, where every change of their jobs is
-- sent; an admin reads any jobs:<owner> and job:<id>.

create or replace function supabase_jobs.owns_job_topic(topic text)
returns boolean
language plpgsql stable
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  uid uuid := (select auth.uid());
begin
  if uid is null or topic is null then
    return false;
  end if;
  -- A user's jobs (and their children) speak on jobs:<uid> only.
  if topic = 'jobs:' || uid::text then
    return true;
  end if;
  return supabase_jobs.is_admin() and topic ~ '^jobs?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
end
$$;
comment on function supabase_jobs.owns_job_topic is
  'True when the caller (auth.uid()) may read Realtime topic jobs:<uid> (their own jobs, where every change of a job they own is sent), or, for an admin, any jobs:<owner> or job:<id>. Used by the realtime.messages policy supabase_jobs_read_job_topics. Runs as its owner (SECURITY DEFINER): the realtime.messages policy calls it as the joining user, each join; it reads only the caller''s own claims (auth.uid(), is_admin).';

-- Schema and types.
revoke all on schema supabase_jobs from public;
grant usage on schema supabase_jobs to authenticated, service_role;
grant usage on type public.job_status to authenticated, service_role;
grant usage on type supabase_jobs.job_limit_values to authenticated, service_role;
grant usage on type supabase_jobs.job to authenticated, service_role;

-- The job row: users read and cancel their own (admins every one) and insert
-- their own, through the columns an enqueue sets; workers do everything.
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

alter table supabase_jobs.transitions enable row level security;
create policy transitions_readable on supabase_jobs.transitions for select to service_role using (true);
grant select on supabase_jobs.transitions to service_role;

alter table supabase_jobs.job_kinds enable row level security;
create policy job_kinds_readable on supabase_jobs.job_kinds for select to authenticated, service_role using (true);
create policy job_kinds_service_role_writes on supabase_jobs.job_kinds for all to service_role using (true) with check (true);
revoke all on supabase_jobs.job_kinds from public, anon, authenticated;
grant select on supabase_jobs.job_kinds to authenticated;
grant select, insert, update, delete on supabase_jobs.job_kinds to service_role;

alter table supabase_jobs.kind_limits enable row level security;
create policy kind_limits_service_role on supabase_jobs.kind_limits for all to service_role using (true) with check (true);
revoke all on supabase_jobs.kind_limits from public, anon, authenticated;
grant select, insert, update, delete on supabase_jobs.kind_limits to service_role;

alter table supabase_jobs.settings enable row level security;
create policy settings_service_role_reads on supabase_jobs.settings for select to service_role using (true);
create policy settings_service_role_updates on supabase_jobs.settings for update to service_role using (true) with check (true);
revoke all on supabase_jobs.settings from public, anon, authenticated;
grant select, update on supabase_jobs.settings to service_role;

alter table supabase_jobs.schedules enable row level security;
create policy schedules_service_role on supabase_jobs.schedules for all to service_role using (true) with check (true);
revoke all on supabase_jobs.schedules from public, anon, authenticated;
grant select, insert, update, delete on supabase_jobs.schedules to service_role;

alter table supabase_jobs.due_wakeups enable row level security;
create policy due_wakeups_service_role on supabase_jobs.due_wakeups for all to service_role using (true) with check (true);
revoke all on supabase_jobs.due_wakeups from public, anon, authenticated;
grant select, delete on supabase_jobs.due_wakeups to service_role;

alter table supabase_jobs.phase_timings enable row level security;
create policy phase_timings_owner_reads on supabase_jobs.phase_timings for select to authenticated
  using (owner_id = (select auth.uid()));
create policy phase_timings_service_role on supabase_jobs.phase_timings for all to service_role using (true) with check (true);
revoke all on supabase_jobs.phase_timings from public, anon, authenticated;
grant select on supabase_jobs.phase_timings to authenticated;
grant select, insert, update, delete on supabase_jobs.phase_timings to service_role;

-- The operator views run as the caller: an admin sees every job, a user their own.
revoke all on supabase_jobs.job_counts, supabase_jobs.job_throughput_hourly, supabase_jobs.job_latency,
  supabase_jobs.job_failure_rates, supabase_jobs.job_top_errors, supabase_jobs.jobs_overrunning,
  supabase_jobs.jobs_silent, supabase_jobs.owner_usage from public, anon, authenticated;
grant select on supabase_jobs.job_counts, supabase_jobs.job_throughput_hourly, supabase_jobs.job_latency,
  supabase_jobs.job_failure_rates, supabase_jobs.job_top_errors, supabase_jobs.jobs_overrunning,
  supabase_jobs.jobs_silent, supabase_jobs.owner_usage to service_role, authenticated;

-- Realtime: a signed-in user reads the broadcasts of the topics owns_job_topic allows.
create policy supabase_jobs_read_job_topics on realtime.messages
  for select to authenticated
  using (
    extension = 'broadcast'
    and topic = (select realtime.topic())
    and (select supabase_jobs.owns_job_topic((select realtime.topic())))
  );

-- Functions: nobody may call one unless granted below. Those granted to no one
-- (triggers, table setup, the schedule installer, the worker's secret) run as the owner.
revoke all on function
  public.job_cancel, public.job_children, public.job_enqueue, public.job_enqueue_many,
  public.job_enqueue_once, public.job_get, public.job_get_many, public.job_hold_reasons,
  public.job_list_recent, public.job_phase_history, public.job_queue_position,
  public.job_reschedule, public.job_get_status, public.stage_cancel, public.stage_finish,
  public.stage_start, supabase_jobs.uuid_v7, supabase_jobs.batch_max, supabase_jobs.can_transition,
  supabase_jobs.check_attempt, supabase_jobs.check_batch_items, supabase_jobs.check_close_items, supabase_jobs.check_call,
  supabase_jobs.check_job_input, supabase_jobs.check_job_options, supabase_jobs.check_tags, supabase_jobs.check_timings,
  supabase_jobs.check_duration, supabase_jobs.check_item_types, supabase_jobs.check_user_priority,
  supabase_jobs.duration_max_ms, supabase_jobs.name_bad_item, supabase_jobs.priority_min, supabase_jobs.priority_max,
  supabase_jobs.error_max, supabase_jobs.heartbeat_ms_max, supabase_jobs.heartbeat_ms_min,
  supabase_jobs.hold_of_job, supabase_jobs.idempotency_key_max, supabase_jobs.insert_job,
  supabase_jobs.invalid, supabase_jobs.is_admin, supabase_jobs.caller_is_trusted, supabase_jobs.is_terminal,
  supabase_jobs.is_worker, supabase_jobs.job_limits, supabase_jobs.job_row_rules,
  supabase_jobs.job_table_label, supabase_jobs.kind_is_valid, supabase_jobs.kind_max,
  supabase_jobs.kind_pattern, supabase_jobs.label_as_written, supabase_jobs.limits, supabase_jobs.list_max,
  supabase_jobs.locale_is_valid, supabase_jobs.locale_pattern, supabase_jobs.max_attempts_default,
  supabase_jobs.max_attempts_max, supabase_jobs.missed_beats, supabase_jobs.notify_requeued,
  supabase_jobs.owner_for, supabase_jobs.params_max_bytes, supabase_jobs.payload_max_bytes,
  supabase_jobs.raise_not_closable, supabase_jobs.record_column, supabase_jobs.record_table,
  supabase_jobs.require_id, supabase_jobs.resolve_table, supabase_jobs.sentence,
  supabase_jobs.stage_max, supabase_jobs.stage_token_column, supabase_jobs.start_time,
  supabase_jobs.tag_max_length, supabase_jobs.tags_max, supabase_jobs.user_message,
  supabase_jobs.without_payload, public.jobs_admin_overview, supabase_jobs.owns_job_topic,
  public.job_claim, public.job_claim_next, public.job_enqueue_child, public.job_fail,
  public.job_reclaim_silent, public.job_reclaim_stale, public.job_release, public.job_retry,
  public.job_set_concurrency, public.job_succeed, public.job_succeed_many,
  public.job_sync_schedules, public.job_tick, public.job_wait_for_children,
  supabase_jobs.admissible, supabase_jobs.admit, supabase_jobs.backstop,
  supabase_jobs.check_heartbeat_ms, supabase_jobs.cleanup, supabase_jobs.expire_jobs,
  supabase_jobs.hold_of, supabase_jobs.insert_child, supabase_jobs.install_recurring,
  supabase_jobs.kick, supabase_jobs.kick_body, supabase_jobs.reclaim_all,
  supabase_jobs.reclaim_jobs, supabase_jobs.register_job_kind, supabase_jobs.run_schedule,
  supabase_jobs.cron_problem, supabase_jobs.kick_due, supabase_jobs.leave_due_wakeup, supabase_jobs.reclaim_table,
  supabase_jobs.due_wakeups_sent, supabase_jobs.table_label, supabase_jobs.admit_jobs_inserted, supabase_jobs.after_child_changed, supabase_jobs.child_changed,
  supabase_jobs.after_jobs_inserted,
  supabase_jobs.attach_admin_policies, supabase_jobs.attach_admission,
  supabase_jobs.attach_partition, supabase_jobs.cancel_children, supabase_jobs.check_child_insert,
  supabase_jobs.children_progress, supabase_jobs.create_job_table, supabase_jobs.guard_job_update,
  supabase_jobs.install_schedules, supabase_jobs.kick_token,
  supabase_jobs.job_message, supabase_jobs.realtime_probe, supabase_jobs.realtime_ready, supabase_jobs.send_job_messages,
  supabase_jobs.send_statement_messages, supabase_jobs.statement_mark, supabase_jobs.worker_endpoint
  from public, anon, authenticated, service_role;

-- What users call (each checks its caller: RLS, ownership, the attempt).
grant execute on function
  public.job_cancel, public.job_children, public.job_enqueue, public.job_enqueue_many,
  public.job_enqueue_once, public.job_get, public.job_get_many, public.job_hold_reasons,
  public.job_list_recent, public.job_phase_history, public.job_queue_position,
  public.job_reschedule, public.job_get_status, public.stage_cancel, public.stage_finish,
  public.stage_start
  to authenticated, service_role;

-- Helpers those functions, the row rules and the policies call as the caller.
grant execute on function
  supabase_jobs.batch_max, supabase_jobs.can_transition, supabase_jobs.check_attempt,
  supabase_jobs.check_batch_items, supabase_jobs.check_close_items, supabase_jobs.check_call, supabase_jobs.check_job_input,
  supabase_jobs.check_job_options, supabase_jobs.check_duration, supabase_jobs.check_item_types, supabase_jobs.check_user_priority,
  supabase_jobs.duration_max_ms, supabase_jobs.name_bad_item, supabase_jobs.priority_min, supabase_jobs.priority_max,
  supabase_jobs.check_tags, supabase_jobs.check_timings, supabase_jobs.error_max,
  supabase_jobs.heartbeat_ms_max, supabase_jobs.heartbeat_ms_min, supabase_jobs.hold_of_job,
  supabase_jobs.idempotency_key_max, supabase_jobs.insert_job, supabase_jobs.invalid,
  supabase_jobs.is_admin, supabase_jobs.caller_is_trusted, supabase_jobs.is_terminal, supabase_jobs.is_worker,
  supabase_jobs.job_limits, supabase_jobs.job_row_rules, supabase_jobs.job_table_label,
  supabase_jobs.kind_is_valid, supabase_jobs.kind_max, supabase_jobs.kind_pattern,
  supabase_jobs.label_as_written, supabase_jobs.limits, supabase_jobs.list_max, supabase_jobs.locale_is_valid,
  supabase_jobs.locale_pattern, supabase_jobs.max_attempts_default, supabase_jobs.max_attempts_max,
  supabase_jobs.missed_beats, supabase_jobs.owner_for,
  supabase_jobs.params_max_bytes, supabase_jobs.payload_max_bytes,
  supabase_jobs.raise_not_closable, supabase_jobs.record_column, supabase_jobs.record_table,
  supabase_jobs.require_id, supabase_jobs.resolve_table, supabase_jobs.sentence,
  supabase_jobs.stage_max, supabase_jobs.stage_token_column, supabase_jobs.start_time,
  supabase_jobs.tag_max_length, supabase_jobs.tags_max, supabase_jobs.user_message,
  supabase_jobs.uuid_v7, supabase_jobs.without_payload
  to authenticated, service_role;

-- For signed-in users only: the admin overview (it checks is_admin) and the topic policy.
grant execute on function
  public.jobs_admin_overview, supabase_jobs.owns_job_topic
  to authenticated;

-- What workers and the schedules call.
grant execute on function
  public.job_claim, public.job_claim_next, public.job_enqueue_child, public.job_fail,
  public.job_reclaim_silent, public.job_reclaim_stale, public.job_release, public.job_retry,
  public.job_set_concurrency, public.job_succeed, public.job_succeed_many,
  public.job_sync_schedules, public.job_tick, public.job_wait_for_children,
  supabase_jobs.admissible, supabase_jobs.admit, supabase_jobs.backstop,
  supabase_jobs.check_heartbeat_ms, supabase_jobs.cleanup, supabase_jobs.expire_jobs,
  supabase_jobs.hold_of, supabase_jobs.insert_child, supabase_jobs.install_recurring,
  supabase_jobs.kick, supabase_jobs.kick_body, supabase_jobs.reclaim_all,
  supabase_jobs.reclaim_jobs,
  supabase_jobs.register_job_kind, supabase_jobs.run_schedule, supabase_jobs.table_label,
  supabase_jobs.cron_problem, supabase_jobs.kick_due, supabase_jobs.leave_due_wakeup, supabase_jobs.reclaim_table,
  supabase_jobs.send_statement_messages
  to service_role;
