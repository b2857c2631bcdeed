-- Concurrency limits, enforced where jobs are claimed: per kind (at most N
-- running across every worker) and per key (jobs of a kind sharing
-- concurrency_key, e.g. the owner: one export per user at a time).
--
-- Invariants:
--   * supabase_jobs.kind_limits holds the limits of a (job table, kind); a kind
--     without a row is not limited, and a table without any row claims exactly
--     as before (one extra primary-key probe, no lock).
--   * Claims of a table with limits are serialised by a transaction lock on the
--     table, so two workers racing cannot both take the last slot; within that
--     lock the candidates are still taken FOR UPDATE SKIP LOCKED, in claim order
--     (priority, then the oldest), and a candidate is passed over — not claimed,
--     not written — while its kind or key is at its limit. Running jobs count
--     until they end (a reclaimed job stops counting once it is queued again).
--   * job_claim(id) honours the same limits: no row when the job's kind or key
--     is full.
--
-- Breaks nothing: no limits, no change.

create table supabase_jobs.kind_limits (
  job_table text not null,
  kind text not null,
  max_running integer,
  max_running_per_key integer,
  updated_at timestamptz not null default now(),
  primary key (job_table, kind),
  constraint kind_limits_max_running_positive check (max_running is null or max_running > 0),
  constraint kind_limits_max_running_per_key_positive check (max_running_per_key is null or max_running_per_key > 0)
);
comment on table supabase_jobs.kind_limits is
  'Concurrency limits per job table and kind: max_running across all workers, max_running_per_key per concurrency_key. Set with job_set_concurrency(kind, max_running, max_running_per_key).';
alter table supabase_jobs.kind_limits enable row level security;
create policy kind_limits_service_role on supabase_jobs.kind_limits for all to service_role using (true) with check (true);
revoke all on supabase_jobs.kind_limits from public, anon, authenticated;
grant select, insert, update, delete on supabase_jobs.kind_limits to service_role;

create function public.job_set_concurrency(kind text, max_running integer default null, max_running_per_key integer default null, job_table text default 'jobs')
returns void
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if not supabase_jobs.kind_is_valid(kind) then
    perform supabase_jobs.invalid('kind', pg_catalog.format('not a kind: %L', left(kind, 100)));
  end if;
  if max_running is not null and max_running < 1 then
    perform supabase_jobs.invalid('max_running', pg_catalog.format('max_running is at least 1; got %s', max_running));
  end if;
  if max_running_per_key is not null and max_running_per_key < 1 then
    perform supabase_jobs.invalid('max_running_per_key', pg_catalog.format('max_running_per_key is at least 1; got %s', max_running_per_key));
  end if;
  if max_running is null and max_running_per_key is null then
    delete from supabase_jobs.kind_limits l where l.job_table = label and l.kind = job_set_concurrency.kind;
    return;
  end if;
  insert into supabase_jobs.kind_limits as l (job_table, kind, max_running, max_running_per_key)
  values (label, job_set_concurrency.kind, job_set_concurrency.max_running, job_set_concurrency.max_running_per_key)
  on conflict on constraint kind_limits_pkey do update
     set max_running = excluded.max_running, max_running_per_key = excluded.max_running_per_key, updated_at = now();
end
$$;
comment on function public.job_set_concurrency(text, integer, integer, text) is
  'Limits how many jobs of a kind run at once: max_running across all workers, max_running_per_key per concurrency_key (null: no limit; both null removes the limits). Service role.';
revoke all on function public.job_set_concurrency(text, integer, integer, text) from public, anon, authenticated;
grant execute on function public.job_set_concurrency(text, integer, integer, text) to service_role;

-- Which of these candidate jobs (in claim order) may start now, given what runs.
-- Called under the table's claim lock only.
create function supabase_jobs.admissible(label text, candidates uuid[])
returns setof uuid
language plpgsql stable
set search_path = ''
as $$
begin
  return query
  with c as (
    select j.id, j.kind, j.concurrency_key, x.ord
      from pg_catalog.unnest(candidates) with ordinality as x(id, ord)
      join supabase_jobs.job j on j.job_table = label and j.id = x.id),
  ranked as (
    select c.*,
           pg_catalog.row_number() over (partition by c.kind order by c.ord) as kind_rank,
           pg_catalog.row_number() over (partition by c.kind, c.concurrency_key order by c.ord) as key_rank
      from c)
  select r.id
    from ranked r
    left join supabase_jobs.kind_limits l on l.job_table = label and l.kind = r.kind
   where l.kind is null
      or ((l.max_running is null
           or r.kind_rank + (select pg_catalog.count(*) from supabase_jobs.job s
                              where s.job_table = label and s.status = 'running' and s.kind = r.kind) <= l.max_running)
          and (l.max_running_per_key is null or r.concurrency_key is null
           or r.key_rank + (select pg_catalog.count(*) from supabase_jobs.job s
                             where s.job_table = label and s.status = 'running' and s.kind = r.kind
                               and s.concurrency_key = r.concurrency_key) <= l.max_running_per_key))
   order by r.ord;
end
$$;
revoke all on function supabase_jobs.admissible(text, uuid[]) from public, anon, authenticated;
grant execute on function supabase_jobs.admissible(text, uuid[]) to service_role;

create or replace function public.job_claim(id uuid, job_table text default 'jobs', heartbeat_ms integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  if heartbeat_ms is not null then
    perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  end if;
  if exists (select 1 from supabase_jobs.kind_limits l where l.job_table = label) then
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.claim:' || label, 0));
    if not exists (select 1 from supabase_jobs.admissible(label, array[job_claim.id])) then
      return;
    end if;
  end if;
  return query
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim.heartbeat_ms
   where t.job_table = label and t.id = job_claim.id and t.status = 'queued'
     and t.available_at <= now() and t.attempts < t.max_attempts
     and (t.expires_at is null or t.expires_at > now())
  returning t.*;
end
$$;

create or replace function public.job_claim_next(kinds text[] default null, "limit" integer default 1, job_table text default 'jobs', heartbeat_ms integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  picked uuid[];
begin
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  if heartbeat_ms is not null then
    perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  end if;
  if not exists (select 1 from supabase_jobs.kind_limits l where l.job_table = label) then
    return query
    with next as (
      select n.id from supabase_jobs.job as n
       where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
         and (kinds is null or n.kind = any (kinds))
         and (n.expires_at is null or n.expires_at > now())
       order by n.priority desc, n.available_at, n.created_at, n.id
       limit "limit"
       for update skip locked)
    update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms
      from next where t.job_table = label and t.id = next.id
    returning t.*;
    return;
  end if;
  -- Limited: one claimer of this table at a time; a window of candidates in
  -- claim order, of which the admissible ones start.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.claim:' || label, 0));
  select pg_catalog.array_agg(c.id order by c.priority desc, c.available_at, c.created_at, c.id) into picked
    from (select n.id, n.priority, n.available_at, n.created_at from supabase_jobs.job as n
           where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
             and (kinds is null or n.kind = any (kinds))
             and (n.expires_at is null or n.expires_at > now())
           order by n.priority desc, n.available_at, n.created_at, n.id
           limit greatest("limit" * 20, 200)
           for update skip locked) c;
  return query
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms
    from (select a.id from supabase_jobs.admissible(label, coalesce(picked, '{}')) as a(id) limit "limit") as next
   where t.job_table = label and t.id = next.id
  returning t.*;
end
$$;

alter function public.job_claim(uuid, text, integer) set plan_cache_mode = force_generic_plan;
alter function public.job_claim_next(text[], integer, text, integer) set plan_cache_mode = force_generic_plan;
