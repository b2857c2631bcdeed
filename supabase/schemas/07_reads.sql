-- Reads: one job, many by id, its status (what a worker polls to learn of a
-- cancellation), keyset listings, the queue position and hold reasons a screen
-- shows for a queued job, and the phase history PhasePlan.fromHistory fits
-- plans from. Each runs as the caller: RLS decides what a user sees.

create or replace function public.job_get(id uuid, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id);
  select t.* into result from supabase_jobs.job as t where t.job_table = label and t.id = job_get.id;
  if result.id is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  result.payload := null;
  return result;
end
$$;
comment on function public.job_get is
  'One job (payload omitted). PT404 when it does not exist or is not yours.';

create or replace function public.job_get_many(ids uuid[], job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if ids is null then
    perform supabase_jobs.invalid('ids', 'ids is required: an array of job ids');
  elsif pg_catalog.cardinality(ids) > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('ids', pg_catalog.format('at most %s ids per call; got %s', supabase_jobs.list_max(), pg_catalog.cardinality(ids)));
  end if;
  -- Terminal rows hold no payload (CHECK); queued and running rows are blanked
  -- with a scalar call per row (a function in FROM would copy the row type's
  -- descriptor per row: docs/architecture.md, "Row type descriptors").
  return query
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(t, '{"payload": null}'::jsonb) as j
      from supabase_jobs.job as t
     where t.job_table = label and t.id = any (ids)
    offset 0) as w;
end
$$;
comment on function public.job_get_many is
  'The jobs of the given ids that the caller may read (payload omitted), in no particular order; unknown or unreadable ids are absent. At most list_max() ids.';

create or replace function public.job_get_status(id uuid, attempt integer default null, job_table text default 'jobs')
returns public.job_status
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  found_status public.job_status;
  found_attempts integer;
begin
  perform supabase_jobs.check_call(id, attempt);
  select t.status, t.attempts into found_status, found_attempts
    from supabase_jobs.job as t where t.job_table = label and t.id = job_get_status.id;
  if found_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  if attempt is not null and found_status = 'running' and found_attempts <> attempt then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'watch');
  end if;
  return found_status;
end
$$;
comment on function public.job_get_status is
  'The status of one job (PT404 when it does not exist or is not yours); with attempt, PT409 once another attempt owns it. What a worker reads between writes to learn of a cancellation.';

create or replace function public.job_list_recent(
  kind text default null,
  status public.job_status default null,
  statuses public.job_status[] default null,
  "limit" integer default 20,
  cursor text default null,
  job_table text default 'jobs',
  tags text[] default null
)
returns setof supabase_jobs.job
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  wanted public.job_status[];
  after_created timestamptz;
  after_id uuid;
  parts text[];
begin
  if status is not null and statuses is not null then
    perform supabase_jobs.invalid('statuses', 'give status or statuses, not both');
  end if;
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  perform supabase_jobs.check_tags(tags);
  wanted := case when status is not null then array[status] else statuses end;
  if cursor is not null then
    parts := pg_catalog.regexp_match(cursor, '^(.{10,40})~([0-9a-fA-F-]{36})$');
    if parts is null then
      perform supabase_jobs.invalid('cursor', 'cursor is not one this function returned (expected <created_at>~<id>)');
    end if;
    begin
      after_created := parts[1]::timestamptz;
      after_id := parts[2]::uuid;
    exception when others then
      perform supabase_jobs.invalid('cursor', 'cursor is not one this function returned (expected <created_at>~<id>)');
    end;
  end if;
  return query
  select (w.j).* from (
  select pg_catalog.jsonb_populate_record(t, '{"payload": null}'::jsonb) as j from supabase_jobs.job as t
   where t.job_table = label and t.is_active
     and (job_list_recent.kind is null or t.kind = job_list_recent.kind)
     and (wanted is null or t.status = any (wanted))
     and (job_list_recent.tags is null or job_list_recent.tags = '{}' or (t.tags <> '{}' and t.tags @> job_list_recent.tags))
     and (after_id is null or t.id < after_id)
   order by t.id desc
   limit "limit" offset 0) as w;
end
$$;
comment on function public.job_list_recent is
  'Newest jobs first (by id: ids are time-ordered UUIDv7), filtered by kind, status(es) and tags (rows having every tag given), keyset-paginated: pass "<created_at>~<id>" of the last row as cursor (the id is the key). [] when nothing matches.';

create or replace function public.job_queue_position(id uuid, job_table text default 'jobs')
returns integer
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  me record;
  ahead integer;
begin
  perform supabase_jobs.check_call(id, null);
  select j.status, j.priority, j.available_at, j.created_at, j.owner_id into me
    from supabase_jobs.job j where j.job_table = label and j.id = job_queue_position.id;
  if not found then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  if me.status <> 'queued' then
    return null;
  end if;
  select pg_catalog.count(*)::integer into ahead
    from supabase_jobs.job j
   where j.job_table = label and j.status = 'queued'
     and j.owner_id is not distinct from me.owner_id
     and (j.priority > me.priority
          or (j.priority = me.priority
              and (j.available_at, j.created_at, j.id) < (me.available_at, me.created_at, job_queue_position.id)));
  return ahead;
end
$$;
comment on function public.job_queue_position is
  'How many of the same owner''s queued jobs (same job table) a claim takes before this queued job; null when it is not queued. Counts nobody else''s jobs. PT404 when the caller cannot see it.';

create or replace function public.job_hold_reasons(ids uuid[], job_table text default 'jobs')
returns table (id uuid, kind text, held_by text, running integer, max_running integer)
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if ids is null or pg_catalog.cardinality(ids) > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('ids', pg_catalog.format('ids is an array of at most %s job ids', supabase_jobs.list_max()));
  end if;
  if pg_catalog.has_function_privilege('supabase_jobs.hold_of(text, text, text)', 'execute') then
    return query
    select j.id, j.kind, h.held_by, h.running, h.max_running
      from supabase_jobs.job j
      cross join lateral supabase_jobs.hold_of(label, j.kind, j.concurrency_key) h
     where j.job_table = label and j.id = any (ids) and j.status = (select 'queued'::public.job_status)
       and j.available_at <= now();
  else
    return query
    select j.id, j.kind, h.held_by, h.running, h.max_running
      from supabase_jobs.job j
      cross join lateral supabase_jobs.hold_of_job(j.id) h
     where j.job_table = label and j.id = any (ids) and j.status = (select 'queued'::public.job_status)
       and j.available_at <= now();
  end if;
end
$$;
comment on function public.job_hold_reasons is
  'For each queued job of ids (that the caller can see) held back: by a concurrency limit (held_by kind: max_running; key: max_running_per_key; running: how many of its kind or key run), a pause of its kind (paused), or its kind''s rate limit (rate; running: starts in the window, max_running: starts allowed). Jobs not held are left out.';

create or replace function public.job_phase_history(kind text, "limit" integer default 50, job_table text default 'jobs')
returns table (timings jsonb, finished_at timestamptz)
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if kind is null or kind = '' then
    perform supabase_jobs.invalid('kind', 'kind is required: a phase history is per kind of work');
  end if;
  if "limit" is null or "limit" < 1 or "limit" > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.list_max(), "limit"));
  end if;
  return query
  select h.timings, h.finished_at from (
    (select t.timings, t.finished_at, t.id from supabase_jobs.job as t
      where t.job_table = label and t.kind = job_phase_history.kind and t.status = 'done' and t.timings is not null and t.is_active
      order by t.finished_at desc, t.id desc
      limit "limit")
    union all
    (select p.timings, p.finished_at, p.id from supabase_jobs.phase_timings as p
      where p.job_table = label and p.kind = job_phase_history.kind
      order by p.finished_at desc, p.id desc
      limit "limit")
  ) as h
  order by h.finished_at desc, h.id desc
  limit "limit";
end
$$;
comment on function public.job_phase_history is
  'Phase timings of the latest done jobs of a kind, newest first, including those retention deleted (supabase_jobs.phase_timings): what PhasePlan.fromHistory fits medians and per-kilochar slopes from.';

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  public.job_get, public.job_get_many, public.job_get_status, public.job_list_recent,
  public.job_queue_position, public.job_hold_reasons, public.job_phase_history
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  public.job_get, public.job_get_many, public.job_get_status, public.job_list_recent,
  public.job_queue_position, public.job_hold_reasons, public.job_phase_history
  to authenticated, service_role;
