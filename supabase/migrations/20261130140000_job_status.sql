-- supabase-jobs 0001 — the job status type and the state machine.
--
-- Purpose: one status enum for every job table, and the one table of legal
-- transitions that the guard trigger (next migration) enforces for every caller.
-- Invariants:
--   * queued -> running | cancelled; running -> done | failed | cancelled | queued.
--   * done, failed and cancelled are terminal: nothing leaves them.
--   * cancelled is terminal but not a failure.
-- The same machine is drawn in docs/state-machine.md and mirrored in
-- src/lib/state.ts; change all three together.
-- Breaking: no (first migration). Creates schema supabase_jobs, which is NOT
-- exposed through the Data API: it holds internals, never a public interface.

create schema if not exists supabase_jobs;
comment on schema supabase_jobs is
  'supabase-jobs internals (registry, guards, helpers). Not exposed through the Data API; the public interface is the job_* functions in public.';
revoke all on schema supabase_jobs from public;
-- The job_* functions run as their caller (SECURITY INVOKER), so callers need to
-- resolve the helpers that live here. anon gets nothing at all.
grant usage on schema supabase_jobs to authenticated, service_role;

create type public.job_status as enum ('queued', 'running', 'done', 'failed', 'cancelled');
comment on type public.job_status is
  'Where a job is in its life: queued -> running -> done | failed | cancelled (cancelled is terminal, not a failure). See docs/state-machine.md.';
grant usage on type public.job_status to authenticated, service_role;

create table supabase_jobs.transitions (
  from_status public.job_status not null,
  to_status public.job_status not null,
  via text not null,
  primary key (from_status, to_status)
);
comment on table supabase_jobs.transitions is
  'Every legal status change and the function that makes it. The guard trigger refuses any other (SQLSTATE SJ001).';
alter table supabase_jobs.transitions enable row level security;
create policy transitions_readable on supabase_jobs.transitions for select to authenticated, service_role using (true);
grant select on supabase_jobs.transitions to authenticated, service_role;

insert into supabase_jobs.transitions (from_status, to_status, via) values
  ('queued',  'running',   'job_claim / job_claim_next'),
  ('queued',  'cancelled', 'job_cancel'),
  ('running', 'done',      'job_succeed'),
  ('running', 'failed',    'job_fail / job_retry (attempts spent) / job_reclaim_stale (attempts spent)'),
  ('running', 'cancelled', 'job_cancel'),
  ('running', 'queued',    'job_reclaim_stale / job_retry / job_release');

create function supabase_jobs.is_terminal(status public.job_status)
returns boolean
language sql immutable parallel safe
set search_path = ''
as $$ select status in ('done', 'failed', 'cancelled') $$;
comment on function supabase_jobs.is_terminal(public.job_status) is
  'done, failed and cancelled: the watch ends, the payload is gone, nothing changes afterwards.';
revoke all on function supabase_jobs.is_terminal(public.job_status) from public;
grant execute on function supabase_jobs.is_terminal(public.job_status) to authenticated, service_role;
