-- supabase-jobs 0007 — NOTIFY 'supabase_jobs' when a job becomes claimable.
--
-- Purpose: a long-running worker (the Node runner) LISTENs on the channel
-- 'supabase_jobs' and claims as soon as there is something to claim, instead
-- of waiting for its next poll. Two triggers per job table:
--   * notify_inserted: AFTER INSERT ... FOR EACH STATEMENT, one notification
--     per statement and kind (a batch insert of thousands costs a handful);
--   * notify_requeued: AFTER UPDATE ... FOR EACH ROW WHEN running -> queued
--     (retry, release, reclaim). The WHEN clause is evaluated without calling
--     the function, so the frequent progress ticks cost nothing.
-- Payload (JSON text, well under NOTIFY's 8000-byte limit):
--   {"job_table": "jobs"|"<schema>.<name>", "kind": text, "job_id": uuid|null,
--    "count": n, "available_at": timestamptz, "reason": "enqueue"|"requeue"}
--   job_id is set when one job of the kind became claimable, null for a batch.
--   available_at is the earliest moment one of them can be claimed (a retry
--   with backoff notifies now for a job claimable later).
--
-- Invariants:
--   * NOTIFY is a hint only: it is delivered after commit, to whoever listens
--     at that moment; a worker must keep polling as a backstop;
--   * a rolled-back insert or requeue notifies nobody (NOTIFY is transactional);
--   * the trigger functions are SECURITY INVOKER with search_path = '' and do
--     nothing but pg_notify: a user enqueueing through RLS may run them.
-- Breaking: no. Registers the attach_notify installer (the two notify
-- triggers), which add_attachment also runs over every registered job table.

create function supabase_jobs.notify_inserted_jobs()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  -- The same label as supabase_jobs.table_label, from the trigger's own
  -- variables: users fire this trigger and may not call table_label.
  job_table text := case when tg_table_schema = 'public' then tg_table_name else tg_table_schema || '.' || tg_table_name end;
  batch record;
begin
  for batch in
    select i.kind, pg_catalog.count(*)::integer as n, (pg_catalog.array_agg(i.id))[1] as first_id, pg_catalog.min(i.available_at) as available_at
      from inserted i
     where i.status = 'queued'
     group by i.kind
     order by i.kind
  loop
    perform pg_catalog.pg_notify('supabase_jobs', pg_catalog.json_build_object(
      'job_table', job_table, 'kind', batch.kind,
      'job_id', case when batch.n = 1 then batch.first_id end,
      'count', batch.n, 'available_at', batch.available_at, 'reason', 'enqueue')::text);
  end loop;
  return null;
end
$$;
comment on function supabase_jobs.notify_inserted_jobs() is
  'AFTER INSERT statement trigger on every job table: NOTIFY supabase_jobs once per statement and kind (a hint for LISTENing workers).';
revoke all on function supabase_jobs.notify_inserted_jobs() from public, anon;
grant execute on function supabase_jobs.notify_inserted_jobs() to authenticated, service_role;

create function supabase_jobs.notify_requeued_job()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('supabase_jobs', pg_catalog.json_build_object(
    'job_table', case when tg_table_schema = 'public' then tg_table_name else tg_table_schema || '.' || tg_table_name end, 'kind', new.kind, 'job_id', new.id,
    'count', 1, 'available_at', new.available_at, 'reason', 'requeue')::text);
  return null;
end
$$;
comment on function supabase_jobs.notify_requeued_job() is
  'AFTER UPDATE row trigger (WHEN running -> queued) on every job table: NOTIFY supabase_jobs that a retried, released or reclaimed job is claimable again.';
revoke all on function supabase_jobs.notify_requeued_job() from public, anon;
grant execute on function supabase_jobs.notify_requeued_job() to authenticated, service_role;

-- ---------------------------------------------------------------------------
-- Per job table: the NOTIFY triggers (insert, requeue).
create function supabase_jobs.attach_notify(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
begin
  execute format('drop trigger if exists notify_inserted on %s', tbl);
  execute format('create trigger notify_inserted after insert on %s referencing new table as inserted for each statement execute function supabase_jobs.notify_inserted_jobs()', tbl);
  execute format('drop trigger if exists notify_requeued on %s', tbl);
  execute format('create trigger notify_requeued after update of status on %s for each row when (old.status = ''running'' and new.status = ''queued'') execute function supabase_jobs.notify_requeued_job()', tbl);
end
$$;
revoke all on function supabase_jobs.attach_notify(regclass) from public;
select supabase_jobs.add_attachment('notify', 'supabase_jobs.attach_notify(regclass)', 20);
