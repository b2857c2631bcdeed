-- The job state machine: the schema that holds supabase-jobs' internals, the
-- status type, and every legal status change. docs/state-machine.md draws it;
-- src/lib/state.ts mirrors it for TypeScript. The guard trigger (03_job_table)
-- refuses any change not listed here, whoever makes it.

create schema if not exists supabase_jobs;
comment on schema supabase_jobs is
  'supabase-jobs internals (registry, guards, helpers). Not exposed through the Data API; the public interface is the job_* functions in public.';

create type public.job_status as enum ('queued', 'running', 'waiting', 'done', 'failed', 'cancelled');
comment on type public.job_status is
  'Where a job is in its life: queued -> running -> done | failed | cancelled (cancelled is terminal, not a failure); running -> waiting -> queued while a parent waits for its children or a job waits for its owner''s answer (waiting -> failed when that answer never comes). See docs/state-machine.md.';

create table supabase_jobs.transitions (
  from_status public.job_status not null,
  to_status public.job_status not null,
  via text not null,
  primary key (from_status, to_status)
);
comment on table supabase_jobs.transitions is
  'Every legal status change and the function that makes it. The guard trigger refuses any other (SQLSTATE SJ001).';

insert into supabase_jobs.transitions (from_status, to_status, via) values
  ('queued',  'running',   'job_claim / job_claim_next'),
  ('queued',  'cancelled', 'job_cancel'),
  ('running', 'done',      'job_succeed'),
  ('running', 'failed',    'job_fail / job_retry (attempts spent) / job_reclaim_stale (attempts spent)'),
  ('running', 'cancelled', 'job_cancel'),
  ('running', 'queued',    'job_reclaim_stale / job_retry / job_release'),
  ('queued',  'failed',    'expiry: the reclaim schedule closes a queued job past expires_at'),
  ('running', 'waiting',   'job_wait_for_children (the parent frees its worker slot)'),
  ('waiting', 'queued',    'resume: its last child ended (the attempt is given back)'),
  ('waiting', 'cancelled', 'job_cancel (cascades to the children)'),
  ('waiting', 'failed',    'expiry: the reclaim schedule closes a job whose question went unanswered past its deadline');

create or replace function supabase_jobs.can_transition(from_status public.job_status, to_status public.job_status)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  return case from_status
    when 'queued' then to_status in ('running', 'cancelled', 'failed')
    when 'running' then to_status in ('done', 'failed', 'cancelled', 'queued', 'waiting')
    when 'waiting' then to_status in ('queued', 'cancelled', 'failed')
    else false
  end;
end
$$;

create or replace function supabase_jobs.is_terminal(status public.job_status)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return status in ('done', 'failed', 'cancelled'); end $$;
comment on function supabase_jobs.is_terminal is
  'done, failed and cancelled: the watch ends, the payload is gone, nothing changes afterwards.';

-- Security: the schema is used by signed-in users and workers only (anon gets
-- nothing); the legal transitions are for workers to read.
revoke all on schema supabase_jobs from public;
grant usage on schema supabase_jobs to authenticated, service_role;
grant usage on type public.job_status to authenticated, service_role;

alter table supabase_jobs.transitions enable row level security;
create policy transitions_readable on supabase_jobs.transitions for select to service_role using (true);
grant select on supabase_jobs.transitions to service_role;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.can_transition, supabase_jobs.is_terminal
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  supabase_jobs.can_transition, supabase_jobs.is_terminal
  to authenticated, service_role;
