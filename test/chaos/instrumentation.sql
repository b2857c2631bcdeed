-- What the chaos run records in its own database, next to the product's
-- tables, so the end-of-run checks read facts and not the test's beliefs:
--   chaos.runs   one row per handler run (written by the handler itself):
--                job, worker incarnation, attempt, start, end (null when the
--                process died mid-run)
--   chaos.audit  every committed change of a job row (status, progress,
--                attempts, payload present) with the statement that made it,
--                in commit order per job (a row lock orders the writes of one job)
-- Test-only: never a migration.
create schema chaos;

create table chaos.runs (
  id bigint generated always as identity primary key,
  job_id uuid not null,
  worker text not null,
  attempt integer not null,
  started_at timestamptz not null default clock_timestamp(),
  ended_at timestamptz,
  outcome text
);
create index on chaos.runs (job_id);

create table chaos.audit (
  seq bigint generated always as identity primary key,
  job_id uuid not null,
  at timestamptz not null default clock_timestamp(),
  old_status text,
  new_status text not null,
  old_progress real,
  new_progress real,
  attempts integer not null,
  max_attempts integer not null,
  has_payload boolean not null,
  query text not null
);
create index on chaos.audit (job_id, seq);

-- Security definer: users' own writes (cancel through REST) are audited too,
-- and they have no grant on the chaos schema.
create function chaos.audit_job() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  insert into chaos.audit (job_id, old_status, new_status, old_progress, new_progress, attempts, max_attempts, has_payload, query)
  values (new.id, case when tg_op = 'UPDATE' then old.status::text end, new.status::text,
          case when tg_op = 'UPDATE' then old.progress end, new.progress,
          new.attempts, new.max_attempts, new.payload is not null, left(pg_catalog.current_query(), 200));
  -- The test's waits on the jobs (every job terminal) wake on this, not on a timer.
  perform pg_catalog.pg_notify('chaos_job_changed', '');
  return null;
end $$;
revoke all on function chaos.audit_job() from public;

create trigger chaos_audit after insert or update on public.jobs
  for each row execute function chaos.audit_job();
