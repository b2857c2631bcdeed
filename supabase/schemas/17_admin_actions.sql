-- Admin actions: what an admin does from a dashboard. Admins (JWT
-- app_metadata.role = 'admin', supabase_jobs.is_admin) and the service role
-- cancel jobs in bulk (each through job_cancel, so children and Realtime follow
-- as for one), pause and resume a kind, limit a kind's starts per interval,
-- delete finished jobs, and read every kind's figures at once. Each function
-- runs as its caller: an admin acts through the policies at the end of this
-- file, anyone else is refused with 42501. Pause and rate are kept in
-- kind_limits and enforced by admit() (10_kinds_and_quotas).

create or replace function supabase_jobs.rate_starts_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 100000; end $$;

create or replace function supabase_jobs.rate_per_ms_min()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 100; end $$;

create or replace function supabase_jobs.rate_per_ms_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 86400000; end $$;

create or replace function supabase_jobs.require_admin(action text)
returns void
language plpgsql stable
set search_path = ''
as $$
begin
  if not (supabase_jobs.is_admin() or supabase_jobs.is_worker()) then
    raise exception using errcode = '42501',
      message = pg_catalog.format('%s is for admins only', action),
      hint = 'An admin is a user whose app_metadata.role is ''admin'' (set with the service role: Auth admin API or dashboard); the claim reaches the JWT at the next sign-in or refresh.';
  end if;
end
$$;
comment on function supabase_jobs.require_admin is
  'Raises 42501 unless the caller is an admin (supabase_jobs.is_admin()) or the service role: the first step of every admin action.';

create or replace function supabase_jobs.check_kind_arg(kind text)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if kind is null or not supabase_jobs.kind_is_valid(kind) then
    perform supabase_jobs.invalid('kind', pg_catalog.format('a kind is 1 to %s letters, digits and _ . : / - (starting with a letter or digit); got %L',
      supabase_jobs.kind_max(), left(kind, 100)));
  end if;
end
$$;

create or replace function supabase_jobs.check_statuses(statuses public.job_status[], allowed public.job_status[])
returns public.job_status[]
language plpgsql immutable
set search_path = ''
as $$
begin
  if statuses is null then
    return allowed;
  end if;
  if pg_catalog.cardinality(statuses) = 0 or pg_catalog.array_position(statuses, null) is not null or not statuses <@ allowed then
    perform supabase_jobs.invalid('statuses', pg_catalog.format('statuses are some of %s; got %s', allowed, statuses));
  end if;
  return statuses;
end
$$;

create or replace function public.job_cancel_many(
  kind text default null,
  statuses public.job_status[] default null,
  created_after timestamptz default null,
  created_before timestamptz default null,
  owner_id uuid default null,
  reason text default null,
  "limit" integer default 1000,
  job_table text default 'jobs'
)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  label text;
  wanted public.job_status[];
  target uuid;
  n integer := 0;
begin
  perform supabase_jobs.require_admin('job_cancel_many');
  label := supabase_jobs.job_table_label(job_table);
  if kind is not null then
    perform supabase_jobs.check_kind_arg(kind);
  end if;
  wanted := supabase_jobs.check_statuses(statuses, array['queued', 'running', 'waiting']::public.job_status[]);
  if not pg_catalog.isfinite(coalesce(created_after, now())) then
    perform supabase_jobs.invalid('created_after', 'created_after is a moment in time, not infinity');
  end if;
  if not pg_catalog.isfinite(coalesce(created_before, now())) then
    perform supabase_jobs.invalid('created_before', 'created_before is a moment in time, not infinity');
  end if;
  if created_after is not null and created_before is not null and created_after >= created_before then
    perform supabase_jobs.invalid('created_before', pg_catalog.format('created_before (%s) must be later than created_after (%s)', created_before, created_after));
  end if;
  if kind is null and statuses is null and created_after is null and created_before is null and owner_id is null then
    perform supabase_jobs.invalid('kind', 'name at least one of kind, statuses, created_after, created_before or owner_id: a bulk cancel never means every job');
  end if;
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  -- Oldest first; each through job_cancel, the one cancel path (its children
  -- follow, one Realtime message per job). A job a cascade already cancelled
  -- is not counted twice.
  for target in
    select j.id from supabase_jobs.job j
     where j.job_table = label and j.status = any (wanted)
       and (job_cancel_many.kind is null or j.kind = job_cancel_many.kind)
       and (created_after is null or j.created_at >= created_after)
       and (created_before is null or j.created_at < created_before)
       and (job_cancel_many.owner_id is null or j.owner_id = job_cancel_many.owner_id)
     order by j.created_at, j.id
     limit "limit"
  loop
    perform 1 from public.job_cancel(target, reason, label);
    if found then
      n := n + 1;
    end if;
  end loop;
  return n;
end
$$;
comment on function public.job_cancel_many is
  'Admins and the service role: cancels up to "limit" (at most list_max()) unfinished jobs matching every filter given (kind, statuses among queued/running/waiting, created_after inclusive, created_before exclusive, owner_id; at least one), oldest first, each through job_cancel (children cascade, one Realtime message per job). Returns how many it cancelled; call again while it returns "limit".';

create or replace function public.job_pause_kind(kind text, job_table text default 'jobs')
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  label text;
  paused boolean;
begin
  perform supabase_jobs.require_admin('job_pause_kind');
  label := supabase_jobs.job_table_label(job_table);
  perform supabase_jobs.check_kind_arg(kind);
  insert into supabase_jobs.kind_limits as l (job_table, kind, paused_at)
  values (label, job_pause_kind.kind, now())
  on conflict on constraint kind_limits_pkey do update
     set paused_at = now(), updated_at = now()
   where l.paused_at is null
  returning true into paused;
  return coalesce(paused, false);
end
$$;
comment on function public.job_pause_kind is
  'Admins and the service role: no job of this kind is claimed (by id or next, by any worker) until job_resume_kind; running jobs run on, and the screen of a queued one says the kind is paused. True when this call paused it, false when it already was.';

create or replace function public.job_resume_kind(kind text, job_table text default 'jobs')
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  label text;
  resumed boolean;
begin
  perform supabase_jobs.require_admin('job_resume_kind');
  label := supabase_jobs.job_table_label(job_table);
  perform supabase_jobs.check_kind_arg(kind);
  -- The row's update wakes the workers (trigger wake_resumed_kind).
  update supabase_jobs.kind_limits as l set paused_at = null, updated_at = now()
   where l.job_table = label and l.kind = job_resume_kind.kind and l.paused_at is not null
  returning true into resumed;
  perform supabase_jobs.drop_empty_kind_limits(label, kind);
  return coalesce(resumed, false);
end
$$;
comment on function public.job_resume_kind is
  'Admins and the service role: undoes job_pause_kind and wakes the workers (NOTIFY and pg_net, reason resume) when jobs of the kind are waiting. True when this call resumed it, false when it was not paused.';

create or replace function public.job_set_rate_limit(
  kind text,
  starts integer default null,
  per_ms integer default null,
  job_table text default 'jobs'
)
returns void
language plpgsql
set search_path = ''
as $$
declare
  label text;
begin
  perform supabase_jobs.require_admin('job_set_rate_limit');
  label := supabase_jobs.job_table_label(job_table);
  perform supabase_jobs.check_kind_arg(kind);
  if (starts is null) <> (per_ms is null) then
    perform supabase_jobs.invalid(case when starts is null then 'starts' else 'per_ms' end,
      'give starts and per_ms together (both null removes the rate limit)');
  end if;
  if starts is not null and (starts < 1 or starts > supabase_jobs.rate_starts_max()) then
    perform supabase_jobs.invalid('starts', pg_catalog.format('starts is between 1 and %s; got %s', supabase_jobs.rate_starts_max(), starts));
  end if;
  if per_ms is not null and (per_ms < supabase_jobs.rate_per_ms_min() or per_ms > supabase_jobs.rate_per_ms_max()) then
    perform supabase_jobs.invalid('per_ms', pg_catalog.format('per_ms is between %s and %s milliseconds; got %s',
      supabase_jobs.rate_per_ms_min(), supabase_jobs.rate_per_ms_max(), per_ms));
  end if;
  if starts is null then
    update supabase_jobs.kind_limits as l set rate_starts = null, rate_per_ms = null, updated_at = now()
     where l.job_table = label and l.kind = job_set_rate_limit.kind;
    perform supabase_jobs.drop_empty_kind_limits(label, kind);
    return;
  end if;
  insert into supabase_jobs.kind_limits as l (job_table, kind, rate_starts, rate_per_ms)
  values (label, job_set_rate_limit.kind, starts, per_ms)
  on conflict on constraint kind_limits_pkey do update
     set rate_starts = excluded.rate_starts, rate_per_ms = excluded.rate_per_ms, updated_at = now();
end
$$;
comment on function public.job_set_rate_limit is
  'Admins and the service role: at most "starts" jobs of this kind start in any per_ms milliseconds (a sliding window, enforced at claim across every worker), for work that calls an API answering 429. Both null removes the limit.';

create or replace function public.job_delete_finished(
  ended_before timestamptz,
  kind text default null,
  statuses public.job_status[] default null,
  "limit" integer default 1000,
  job_table text default 'jobs'
)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  label text;
  wanted public.job_status[];
  n integer;
begin
  perform supabase_jobs.require_admin('job_delete_finished');
  label := supabase_jobs.job_table_label(job_table);
  if ended_before is null or not pg_catalog.isfinite(ended_before) then
    perform supabase_jobs.invalid('ended_before', 'ended_before is required, a moment in time (not infinity): the jobs that finished before it are deleted');
  end if;
  if kind is not null then
    perform supabase_jobs.check_kind_arg(kind);
  end if;
  wanted := supabase_jobs.check_statuses(statuses, array['done', 'failed', 'cancelled']::public.job_status[]);
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.batch_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.batch_max(), "limit"));
  end if;
  -- As the cleanup does: rows another transaction holds are skipped, and the
  -- timings of done jobs are kept for PhasePlan.fromHistory.
  with batch as (
    select b.id from supabase_jobs.job as b
     where b.job_table = label and b.finished_at < ended_before and b.status = any (wanted)
       and (job_delete_finished.kind is null or b.kind = job_delete_finished.kind)
     order by b.finished_at
     limit "limit"
     for update skip locked
  ), gone as (
    delete from supabase_jobs.job as j using batch
     where j.job_table = label and j.id = batch.id
    returning j.id, j.job_table, j.kind, j.owner_id, j.finished_at, j.timings, j.status, j.is_active
  ), kept as (
    insert into supabase_jobs.phase_timings as p (id, job_table, kind, owner_id, finished_at, timings)
    select g.id, g.job_table, g.kind, g.owner_id, g.finished_at, g.timings from gone as g
     where g.status = 'done' and g.timings is not null and g.is_active
    -- No ON CONFLICT: it would read the new row through the SELECT policy (the
    -- owner's); a deleted job's id is never kept twice.
  )
  select pg_catalog.count(*)::integer into n from gone;
  return n;
end
$$;
comment on function public.job_delete_finished is
  'Admins and the service role: deletes up to "limit" (at most batch_max()) finished jobs (statuses among done/failed/cancelled, all by default; kind if given) that finished before ended_before, oldest first, skipping rows another transaction holds; the timings of done ones are kept in phase_timings. Returns how many it deleted.';

create or replace function public.job_admin_kinds(job_table text default 'jobs')
returns table (
  kind text,
  queued integer,
  running integer,
  waiting integer,
  done integer,
  failed integer,
  cancelled integer,
  done_last_hour integer,
  failed_last_hour integer,
  paused_at timestamptz,
  rate_starts integer,
  rate_per_ms integer,
  max_running integer,
  max_running_per_key integer
)
language plpgsql stable
set search_path = ''
as $$
declare
  label text;
begin
  perform supabase_jobs.require_admin('job_admin_kinds');
  label := supabase_jobs.job_table_label(job_table);
  return query
  with counts as (
    select j.kind as k,
           pg_catalog.count(*) filter (where j.status = 'queued')::integer as queued,
           pg_catalog.count(*) filter (where j.status = 'running')::integer as running,
           pg_catalog.count(*) filter (where j.status = 'waiting')::integer as waiting,
           pg_catalog.count(*) filter (where j.status = 'done')::integer as done,
           pg_catalog.count(*) filter (where j.status = 'failed')::integer as failed,
           pg_catalog.count(*) filter (where j.status = 'cancelled')::integer as cancelled,
           pg_catalog.count(*) filter (where j.status = 'done' and j.finished_at >= now() - interval '1 hour')::integer as done_last_hour,
           pg_catalog.count(*) filter (where j.status = 'failed' and j.finished_at >= now() - interval '1 hour')::integer as failed_last_hour
      from supabase_jobs.job as j
     where j.job_table = label
     group by j.kind
  ), kinds as (
    select c.k from counts c
    union select l.kind from supabase_jobs.kind_limits l where l.job_table = label
    union select r.kind from supabase_jobs.job_kinds r where r.job_table = label and r.kind <> '*'
  )
  select n.k, coalesce(c.queued, 0), coalesce(c.running, 0), coalesce(c.waiting, 0), coalesce(c.done, 0),
         coalesce(c.failed, 0), coalesce(c.cancelled, 0), coalesce(c.done_last_hour, 0), coalesce(c.failed_last_hour, 0),
         l.paused_at, l.rate_starts, l.rate_per_ms, l.max_running, l.max_running_per_key
    from kinds as n
    left join counts as c on c.k = n.k
    left join supabase_jobs.kind_limits as l on l.job_table = label and l.kind = n.k
   order by n.k;
end
$$;
comment on function public.job_admin_kinds is
  'Admins and the service role, for a dashboard: one row per kind of the job table (with jobs, limits, or registered): its jobs by status, done and failed in the last hour, when it was paused (null: not paused), its rate limit (rate_starts per rate_per_ms) and concurrency limits (max_running, max_running_per_key).';

create or replace function supabase_jobs.wake_resumed_kind()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  n integer;
begin
  select pg_catalog.count(*)::integer into n
    from (select 1 from supabase_jobs.job j
           where j.job_table = old.job_table and j.kind = old.kind and j.status = 'queued' and j.available_at <= now()
           limit supabase_jobs.list_max()) q;
  if n > 0 then
    perform pg_catalog.pg_notify('supabase_jobs', pg_catalog.json_build_object(
      'job_table', old.job_table, 'kind', old.kind, 'kinds', pg_catalog.json_build_array(old.kind),
      'count', n, 'available_at', now(), 'reason', 'resume')::text);
    perform supabase_jobs.kick_body(pg_catalog.jsonb_build_object(
      'job_table', old.job_table, 'kind', old.kind, 'kinds', pg_catalog.jsonb_build_array(old.kind),
      'count', n, 'reason', 'resume'));
  end if;
  return null;
end
$$;
comment on function supabase_jobs.wake_resumed_kind is
  'AFTER UPDATE / DELETE row trigger on kind_limits when a pause ends: NOTIFY supabase_jobs and wake the worker through pg_net (reason resume) when jobs of the kind are claimable. Runs as its owner (SECURITY DEFINER): an admin''s resume (under RLS) wakes the worker through kick_body, which reads Vault.';

create trigger wake_resumed_kind after update of paused_at on supabase_jobs.kind_limits for each row
  when (old.paused_at is not null and new.paused_at is null)
  execute function supabase_jobs.wake_resumed_kind();
create trigger wake_deleted_pause after delete on supabase_jobs.kind_limits for each row
  when (old.paused_at is not null)
  execute function supabase_jobs.wake_resumed_kind();

-- Security. Admins act through policies (the service role bypasses RLS); the
-- job tables exposed to the Data API (public.jobs, ...) gain no privilege:
-- deletes go through supabase_jobs.job, which PostgREST does not expose.
create policy kind_limits_admins on supabase_jobs.kind_limits for all to authenticated
  using ((select supabase_jobs.is_admin())) with check ((select supabase_jobs.is_admin()));
grant select, insert, update, delete on supabase_jobs.kind_limits to authenticated;

create policy admins_delete_finished on supabase_jobs.job for delete to authenticated
  using ((select supabase_jobs.is_admin()) and finished_at is not null);
grant delete on supabase_jobs.job to authenticated;

create policy phase_timings_admins_keep on supabase_jobs.phase_timings for insert to authenticated
  with check ((select supabase_jobs.is_admin()));
grant insert on supabase_jobs.phase_timings to authenticated;

revoke all on function
  public.job_cancel_many, public.job_pause_kind, public.job_resume_kind, public.job_set_rate_limit,
  public.job_delete_finished, public.job_admin_kinds, supabase_jobs.require_admin, supabase_jobs.check_kind_arg,
  supabase_jobs.check_statuses, supabase_jobs.rate_starts_max, supabase_jobs.rate_per_ms_min,
  supabase_jobs.rate_per_ms_max, supabase_jobs.drop_empty_kind_limits, supabase_jobs.wake_resumed_kind
  from public, anon, authenticated, service_role;

-- Each action checks its caller (require_admin); the helpers run as the caller.
grant execute on function
  public.job_cancel_many, public.job_pause_kind, public.job_resume_kind, public.job_set_rate_limit,
  public.job_delete_finished, public.job_admin_kinds, supabase_jobs.require_admin, supabase_jobs.check_kind_arg,
  supabase_jobs.check_statuses, supabase_jobs.rate_starts_max, supabase_jobs.rate_per_ms_min,
  supabase_jobs.rate_per_ms_max, supabase_jobs.drop_empty_kind_limits
  to authenticated, service_role;
