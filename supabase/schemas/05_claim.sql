-- Claim: a worker takes a queued job, by id (job_claim, as the edge function
-- runs) or the next ones in claim order (job_claim_next, as runWorkers does).
-- A claim starts an attempt: attempts + 1, and the attempt number is what every
-- later write of that worker must present (06_close). Kinds with concurrency
-- limits are claimed through supabase_jobs.admit (10_kinds_and_quotas).

create or replace function public.job_claim(
  id uuid,
  job_table text default 'jobs',
  heartbeat_ms integer default null
)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  -- The label as the caller wrote it: a table that does not exist holds no row
  -- to claim, and only a claim that finds none checks the name
  -- (job_table_label), so a claim that lands pays no lookup of the registry.
  label text := case when job_table like 'public.%' then pg_catalog.substr(job_table, 8) else job_table end;
begin
  if id is null then
    perform supabase_jobs.check_call(id);
  end if;
  if heartbeat_ms is not null then
    perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  end if;
  if exists (select 1 from supabase_jobs.kind_limits l where l.job_table = label) then
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.claim:' || label, 0));
    if not exists (select 1 from supabase_jobs.admissible(label, array[job_claim.id])) then
      return;
    end if;
  end if;
  -- This statement does the guard's work and sends its message itself (docs/architecture.md,
  -- "Guarantees once per statement"): the row triggers skip it (their WHEN reads this mark).
  perform pg_catalog.set_config('supabase_jobs.handled',
    pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' sent'), true);
  -- The status in a subquery, which the planner cannot match to the claim index's predicate:
  -- the job is read by id through the primary key (docs/architecture.md, "By-id statements").
  -- The columns a claim sets as the guard would (queued -> running); its message in the statement.
  return query
  with claimed as (
    update supabase_jobs.job as t
       set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim.heartbeat_ms,
           started_at = now(), heartbeat_at = now(), expected_end_at = null, stage = null,
           progress = case when t.resumed_at is not null then t.progress else 0 end,
           updated_at = greatest(now(), t.updated_at + interval '1 microsecond')
     where t.job_table = label and t.id = job_claim.id and t.status = (select 'queued'::public.job_status)
       and t.available_at <= now() and t.attempts < t.max_attempts
       and (t.expires_at is null or t.expires_at > now())
    returning t.*)
  select c.* from claimed as c
   where (select supabase_jobs.send_statement_messages(label, pg_catalog.array_agg(x.id)) from claimed as x) is not null;
  if not found then
    perform pg_catalog.set_config('supabase_jobs.handled', '', true), pg_catalog.set_config('supabase_jobs.statement_messages', '', true);
    perform supabase_jobs.job_table_label(job_table);
    return;
  end if;
  perform pg_catalog.set_config('supabase_jobs.handled', '', true), pg_catalog.set_config('supabase_jobs.statement_messages', '', true);
end
$$;
comment on function public.job_claim is
  'queued -> running for one job, returning the row with its payload; no row when the job is not yours to run (claimed by another worker, unknown, not yet available). heartbeat_ms: how often this worker promises to beat (job_tick); without it the job is reclaimed only by an explicit stale_after.';

create or replace function public.job_claim_next(
  kinds text[] default null,
  "limit" integer default 1,
  job_table text default 'jobs',
  heartbeat_ms integer default null
)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  -- The label as the caller wrote it: a claim in a table that does not exist
  -- finds no row, and only then is the name checked (job_table_label), so the
  -- claim a NOTIFY sets off pays no lookup of the registry.
  label text := case when job_table like 'public.%' then pg_catalog.substr(job_table, 8) else job_table end;
begin
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  if heartbeat_ms is not null then
    perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  end if;
  if not exists (select 1 from supabase_jobs.kind_limits l where l.job_table = label) then
    -- The picked ids as an array: the update probes the primary key for each
    -- (docs/architecture.md, "Picked ids as an array"). The claimed rows'
    -- Realtime messages in one insert (send_statement_messages, an initplan:
    -- once, before the first row comes back), not one per row by the trigger.
    perform pg_catalog.set_config('supabase_jobs.handled',
      pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' sent'), true);
    return query
    with claimed as (
      update supabase_jobs.job as t
         set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms,
             started_at = now(), heartbeat_at = now(), expected_end_at = null, stage = null,
             progress = case when t.resumed_at is not null then t.progress else 0 end,
             updated_at = greatest(now(), t.updated_at + interval '1 microsecond')
       where t.job_table = label
         and t.id = any (array(
           select n.id from supabase_jobs.job as n
            where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
              and (kinds is null or n.kind = any (kinds))
              and (n.expires_at is null or n.expires_at > now())
            order by n.priority desc, n.available_at, n.created_at, n.id
            limit "limit"
            for update skip locked))
      returning t.*)
    select c.* from claimed as c
     where (select supabase_jobs.send_statement_messages(label, pg_catalog.array_agg(x.id)) from claimed as x) is not null;
    if not found then
      perform pg_catalog.set_config('supabase_jobs.handled', '', true), pg_catalog.set_config('supabase_jobs.statement_messages', '', true);
      perform supabase_jobs.job_table_label(job_table);
      return;
    end if;
    perform pg_catalog.set_config('supabase_jobs.handled', '', true), pg_catalog.set_config('supabase_jobs.statement_messages', '', true);
    return;
  end if;
  -- Limited: one claimer of this table at a time; admit() takes the jobs that
  -- may start, locked, in claim order. The status in a subquery: each admitted
  -- id through the primary key, never the claim index (docs/architecture.md, "By-id statements").
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.claim:' || label, 0));
  perform pg_catalog.set_config('supabase_jobs.handled',
    pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' sent'), true);
  return query
  with claimed as (
    update supabase_jobs.job as t
       set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms,
           started_at = now(), heartbeat_at = now(), expected_end_at = null, stage = null,
           progress = case when t.resumed_at is not null then t.progress else 0 end,
           updated_at = greatest(now(), t.updated_at + interval '1 microsecond')
      from supabase_jobs.admit(label, job_claim_next.kinds, "limit") as a(id)
     where t.job_table = label and t.id = a.id and t.status = (select 'queued'::public.job_status)
    returning t.*)
  select c.* from claimed as c
   where (select supabase_jobs.send_statement_messages(label, pg_catalog.array_agg(x.id)) from claimed as x) is not null;
  perform pg_catalog.set_config('supabase_jobs.handled', '', true), pg_catalog.set_config('supabase_jobs.statement_messages', '', true);
end
$$;
comment on function public.job_claim_next is
  'Claims up to limit queued jobs of the given kinds (all kinds when null), oldest first, skipping rows other workers hold (FOR UPDATE SKIP LOCKED). heartbeat_ms as in job_claim.';

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  public.job_claim, public.job_claim_next
  from public, anon, authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  public.job_claim, public.job_claim_next
  to service_role;
