-- supabase-jobs: claims of a table with concurrency limits stop at the jobs
-- they take, count the running jobs once, and lock only the rows they claim.
--
-- Purpose: with a kind limited (job_set_concurrency), every job_claim_next on
-- its table took the table's claim lock, then locked a window of up to 200
-- candidates FOR UPDATE SKIP LOCKED (a tuple lock, written and logged, per
-- candidate, for a claim of 1 to 8 jobs), then, in admissible(), looked each
-- candidate up again by id and counted the running jobs of its kind and of its
-- key with two subqueries per candidate. The bench's "claim + complete with
-- priority and concurrency keys in use" ran at ~0.2x the same drain without.
-- Now admit() counts the running jobs once (grouped by kind and by kind and
-- key), walks the candidates in claim order and stops as soon as it has taken
-- `limit` of them: a claim of 8 that nothing holds back reads and locks
-- (FOR UPDATE SKIP LOCKED, as before) 8 candidates, not 200.
--
-- Invariants (20261201055000, unchanged): a kind without a limit row is not
-- limited; claims of a table with limits are serialised by a transaction lock
-- on the table, so two workers racing cannot both take the last slot; the
-- candidates are considered in claim order (priority, then the oldest) within
-- a window of greatest(limit x 20, 200), taken FOR UPDATE SKIP LOCKED (a row
-- another transaction holds locked is skipped), and a candidate is passed
-- over (not claimed, not written) while its kind or key is at its limit.
-- job_claim(id) honours the same limits
-- through admissible(), whose signature stays. One refinement: a candidate
-- passed over no longer counts against the candidates behind it (it will not
-- run), so a blocked key at the head of the queue no longer holds back jobs of
-- other keys within the window.
--
-- Also, on every table: the unlimited job_claim_next joined its picked ids (a
-- CTE with LIMIT "limit") to the table, and its generic plan, which cannot
-- know "limit", hash-joined a sequential scan of the whole partition below
-- some 30,000 rows. The ids now reach the update as an array: one
-- primary-key probe each. Its rows come back in no particular order (as
-- with the hash join).
--
-- New: supabase_jobs.admit(label, kinds, limit, ids), the admission rule
-- written once. Redefined: supabase_jobs.admissible (now asks admit),
-- public.job_claim_next (SET clauses repeated as they were: search_path, and
-- plan_cache_mode on the claim).
--
-- Breaks nothing: same signatures, same grants.

create function supabase_jobs.admit(label text, kinds text[], "limit" integer, ids uuid[] default null)
returns setof uuid
language plpgsql
-- A claim's worth of rows, not the default 1000: the claim then probes its
-- primary key per admitted id instead of scanning the queue.
rows 10
set search_path = ''
as $$
declare
  limits jsonb;
  kind_n jsonb;
  key_n jsonb;
  candidates refcursor;
  c record;
  lim jsonb;
  ahead integer;
  key_of text;
  taken integer := 0;
begin
  -- In one statement: the table's limits, and its running jobs counted once
  -- per kind and per kind and key (a handful of rows: the partial index on
  -- running jobs). A key's entry is "<kind> <key>": a kind never holds a space.
  select coalesce((select pg_catalog.jsonb_object_agg(l.kind, pg_catalog.jsonb_build_array(l.max_running, l.max_running_per_key))
                     from supabase_jobs.kind_limits l where l.job_table = label), '{}'),
         coalesce(pg_catalog.jsonb_object_agg(g.kind, g.n) filter (where g.by_kind), '{}'),
         coalesce(pg_catalog.jsonb_object_agg(g.kind || ' ' || g.concurrency_key, g.n)
                    filter (where not g.by_kind and g.concurrency_key is not null), '{}')
    into limits, kind_n, key_n
    from (select s.kind, s.concurrency_key, pg_catalog.count(*) as n, grouping(s.concurrency_key) = 1 as by_kind
            from supabase_jobs.job s
           where s.job_table = label and s.status = 'running'
           group by grouping sets ((s.kind), (s.kind, s.concurrency_key))) g;
  if ids is null then
    open candidates for
      select n.id, n.kind, n.concurrency_key from supabase_jobs.job as n
       where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
         and (admit.kinds is null or n.kind = any (admit.kinds))
         and (n.expires_at is null or n.expires_at > now())
       order by n.priority desc, n.available_at, n.created_at, n.id
       limit greatest(admit."limit" * 20, 200)
       -- Each candidate is locked as it is read: the loop stops at the jobs it takes.
       for update skip locked;
  else
    open candidates for
      select j.id, j.kind, j.concurrency_key
        from pg_catalog.unnest(ids) with ordinality as x(id, ord)
        join supabase_jobs.job j on j.job_table = label and j.id = x.id
       order by x.ord;
  end if;
  while taken < admit."limit" loop
    fetch candidates into c;
    exit when not found;
    lim := limits -> c.kind;
    if lim is not null then
      ahead := coalesce((kind_n ->> c.kind)::integer, 0);
      continue when lim ->> 0 is not null and ahead + 1 > (lim ->> 0)::integer;
      key_of := c.kind || ' ' || c.concurrency_key;
      continue when lim ->> 1 is not null and key_of is not null
        and coalesce((key_n ->> key_of)::integer, 0) + 1 > (lim ->> 1)::integer;
      -- Taken: it counts against its kind and key for the candidates behind it.
      kind_n := kind_n || pg_catalog.jsonb_build_object(c.kind, ahead + 1);
      if key_of is not null then
        key_n := key_n || pg_catalog.jsonb_build_object(key_of, coalesce((key_n ->> key_of)::integer, 0) + 1);
      end if;
    end if;
    taken := taken + 1;
    return next c.id;
  end loop;
  close candidates;
end
$$;
comment on function supabase_jobs.admit(text, text[], integer, uuid[]) is
  'Up to "limit" jobs that may start now under the table''s kind_limits, in claim order: from the queue (kinds null: any kind) or, given ids, from those jobs in that order.';
revoke all on function supabase_jobs.admit(text, text[], integer, uuid[]) from public, anon, authenticated;
grant execute on function supabase_jobs.admit(text, text[], integer, uuid[]) to service_role;

create or replace function supabase_jobs.admissible(label text, candidates uuid[])
returns setof uuid
language plpgsql
stable
set search_path = ''
as $$
begin
  return query
  select a.id from supabase_jobs.admit(label, null, coalesce(pg_catalog.cardinality(candidates), 0), candidates) as a(id);
end
$$;

create or replace function public.job_claim_next(kinds text[] default null, "limit" integer default 1, job_table text default 'jobs', heartbeat_ms integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  if heartbeat_ms is not null then
    perform supabase_jobs.check_heartbeat_ms(heartbeat_ms);
  end if;
  if not exists (select 1 from supabase_jobs.kind_limits l where l.job_table = label) then
    -- The picked ids as an array: the update probes the primary key for each.
    -- (Joined to the pick, the generic plan, which cannot know "limit", chose a
    -- hash join over a sequential scan of the table below some 30,000 rows.)
    return query
    update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms
     where t.job_table = label
       and t.id = any (array(
         select n.id from supabase_jobs.job as n
          where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
            and (kinds is null or n.kind = any (kinds))
            and (n.expires_at is null or n.expires_at > now())
          order by n.priority desc, n.available_at, n.created_at, n.id
          limit "limit"
          for update skip locked))
    returning t.*;
    return;
  end if;
  -- Limited: one claimer of this table at a time; admit() takes the jobs that
  -- may start, locked, in claim order.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.claim:' || label, 0));
  return query
  update supabase_jobs.job as t set status = 'running', attempts = t.attempts + 1, heartbeat_ms = job_claim_next.heartbeat_ms
    from supabase_jobs.admit(label, job_claim_next.kinds, "limit") as a(id)
   where t.job_table = label and t.id = a.id and t.status = 'queued'
  returning t.*;
end
$$;
