-- Parent and child jobs: a running job enqueues children in its own table
-- (job_enqueue_child), may wait for them without holding a worker
-- (job_wait_for_children: running -> waiting), and is queued again when its
-- last child ends. Its progress follows its children's, weighted by their
-- expected_seconds; cancelling it cancels them. Row triggers fire only for
-- rows with a parent, so jobs without one pay nothing for this.

create or replace function supabase_jobs.insert_child(
  label text,
  parent supabase_jobs.job,
  kind text,
  params jsonb,
  payload bytea,
  max_attempts integer,
  locale text,
  owner_id uuid,
  expected_seconds real,
  priority integer,
  tags text[],
  concurrency_key text
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_job_input(kind, params, payload, max_attempts, locale);
  perform supabase_jobs.check_job_options(tags, priority, concurrency_key);
  insert into supabase_jobs.job as t (job_table, kind, params, payload, max_attempts, locale, owner_id, tags, priority,
                                      concurrency_key, parent_id, expected_seconds)
  values (label, kind, coalesce(params, '{}'::jsonb), payload, coalesce(max_attempts, supabase_jobs.max_attempts_default()),
          locale, owner_id, coalesce(tags, '{}'), coalesce(priority, 0), concurrency_key, parent.id, expected_seconds)
  returning t.* into result;
  result.payload := null;
  return result;
end
$$;

create or replace function public.job_enqueue_child(
  parent_id uuid,
  kind text,
  params jsonb default '{}'::jsonb,
  payload bytea default null,
  max_attempts integer default null,
  locale text default null,
  job_table text default 'jobs',
  expected_seconds real default null,
  priority integer default null,
  tags text[] default null,
  concurrency_key text default null,
  owner_id uuid default null
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  parent supabase_jobs.job;
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(parent_id);
  if expected_seconds is not null and not (expected_seconds > 0 and expected_seconds < 'Infinity'::real) then
    perform supabase_jobs.invalid('expected_seconds', pg_catalog.format('expected_seconds is a positive number of seconds; got %s', expected_seconds));
  end if;
  select p.* into parent from supabase_jobs.job p where p.job_table = label and p.id = job_enqueue_child.parent_id;
  if parent.id is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', job_enqueue_child.parent_id);
  end if;
  -- The owner is the parent's: one given must be that one (check_child_insert says so).
  result := supabase_jobs.insert_child(label, parent, kind, params, payload, max_attempts, coalesce(locale, parent.locale),
    coalesce(owner_id, parent.owner_id), expected_seconds, priority, tags, concurrency_key);
  return result;
end
$$;
comment on function public.job_enqueue_child is
  'A running job enqueues a child: a queued job of the same table and owner (and language unless given) with parent_id set. expected_seconds weighs it in the parent''s progress. Workers only; 22023 names the field, PT404 when the parent is unknown, PT409 when it is not running.';

create or replace function public.job_children(parent_id uuid, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(parent_id);
  return query
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(c, '{"payload": null}'::jsonb) as j from supabase_jobs.job as c
     where c.job_table = label and c.parent_id = job_children.parent_id
     order by c.id
     limit supabase_jobs.list_max() offset 0) as w;
end
$$;
comment on function public.job_children is
  'The children of a job (job_enqueue_child), oldest first, without payloads; [] when it has none. As the caller: a user sees their own jobs'' children only.';

create or replace function supabase_jobs.children_progress(label text, parent uuid)
returns real
language plpgsql stable
set search_path = ''
as $$
declare
  mean real;
begin
  select (pg_catalog.sum(coalesce(c.expected_seconds, 1) * case when c.status in ('done', 'failed', 'cancelled') then 100 else c.progress end)
          / pg_catalog.sum(coalesce(c.expected_seconds, 1)))::real into mean
    from supabase_jobs.job c where c.job_table = label and c.parent_id = parent;
  return mean;
end
$$;

create or replace function supabase_jobs.check_child_insert()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  parent record;
begin
  select p.status, p.owner_id into parent
    from supabase_jobs.job p where p.job_table = new.job_table and p.id = new.parent_id;
  if not found then
    perform supabase_jobs.invalid('parent_id', pg_catalog.format('no job %s in %s to attach a child to', new.parent_id, new.job_table));
  end if;
  if parent.owner_id is distinct from new.owner_id then
    perform supabase_jobs.invalid('owner_id', pg_catalog.format('a child belongs to its parent''s owner; job %s is not %s''s', new.parent_id, coalesce(new.owner_id::text, 'the service''s')));
  end if;
  if parent.status <> 'running' then
    raise exception using errcode = 'PT409',
      message = pg_catalog.format('job %s is %s: only a running job enqueues children', new.parent_id, parent.status);
  end if;
  return new;
end
$$;

-- What a child's insert or change (status, progress, stage) does to its
-- parent; run as the owner of the tables, by after_child_changed (an insert)
-- and after_jobs_updated (an update, 19_job_updated).
create or replace function supabase_jobs.child_changed(child supabase_jobs.job, ended boolean)
returns void
language plpgsql
set search_path = ''
as $$
declare
  parent supabase_jobs.job;
  mean real;
begin
  if ended then
    -- Siblings ending at once (and the parent's own wait) take turns here; the
    -- count below then sees every one committed before.
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.family:' || child.parent_id::text, 0));
  end if;
  select p.* into parent from supabase_jobs.job p
   where p.job_table = child.job_table and p.id = child.parent_id and p.status in ('running', 'waiting')
   for update skip locked;
  if parent.id is null then
    return;
  end if;
  mean := least(99, supabase_jobs.children_progress(child.job_table, child.parent_id));
  if ended and parent.status = 'waiting'
     and not exists (select 1 from supabase_jobs.job c
                      where c.job_table = child.job_table and c.parent_id = child.parent_id
                        and c.status not in ('done', 'failed', 'cancelled')) then
    update supabase_jobs.job as t
       set status = 'queued', attempts = t.attempts - 1, available_at = now(), resumed_at = now(),
           progress = greatest(t.progress, coalesce(mean, 0))
     where t.job_table = parent.job_table and t.id = parent.id;
  elsif mean > parent.progress then
    update supabase_jobs.job as t set progress = mean
     where t.job_table = parent.job_table and t.id = parent.id;
  end if;
end
$$;

create or replace function supabase_jobs.after_child_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform supabase_jobs.child_changed(row(new.*)::supabase_jobs.job, new.status in ('done', 'failed', 'cancelled'));
  return null;
end
$$;
comment on function supabase_jobs.after_child_changed is
  'AFTER INSERT row trigger (WHEN parent_id is set) on supabase_jobs.job: a new child weighs in its parent''s progress (child_changed). A child''s update reaches child_changed through after_jobs_updated. Runs as its owner (SECURITY DEFINER): the child''s change moves its parent, a row the child''s owner (or the worker that inserted it) may not update directly.';

create or replace function supabase_jobs.cancel_children()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- Only the step into cancelled: hiding a cancelled row is no cancel.
  if old.status = 'cancelled' then
    return null;
  end if;
  update supabase_jobs.job as c set status = 'cancelled', error = new.error
   where c.job_table = new.job_table and c.parent_id = new.id and c.status in ('queued', 'running', 'waiting');
  return null;
end
$$;

-- Parking: a running job frees its worker slot (running -> waiting, stage
-- cleared) until something queues it again; job_wait_for_children (waits for
-- its children) and job_ask (for an answer) both park through this. Only the
-- attempt that holds the job may; any other is told why by raise_not_closable.
-- With park false it only checks that the attempt still holds the job running.
create or replace function supabase_jobs.park_job(label text, id uuid, attempt integer, waits_for text, park boolean default true)
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  action text := case waits_for when 'children' then 'wait for the children of' when 'answer' then 'ask a question for' end;
  parked supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt);
  if action is null then
    perform supabase_jobs.invalid('waits_for', pg_catalog.format('waits_for is children or answer; got %s', left(waits_for, 100)));
  end if;
  if label is null then
    perform supabase_jobs.invalid('label', 'label names the job table');
  end if;
  if park is null then
    perform supabase_jobs.invalid('park', 'park is true (park the job) or false (only check that it runs)');
  end if;
  if not park then
    if not exists (select 1 from supabase_jobs.job t where t.job_table = label and t.id = park_job.id
                      and t.status = 'running' and (attempt is null or t.attempts = attempt)) then
      perform supabase_jobs.raise_not_closable(label, id, attempt, action);
    end if;
    return null;
  end if;
  update supabase_jobs.job as t set status = 'waiting', stage = null
   where t.job_table = label and t.id = park_job.id and t.status = 'running'
     and (attempt is null or t.attempts = attempt)
  returning t.* into parked;
  if parked.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, action);
  end if;
  return parked;
end
$$;
comment on function supabase_jobs.park_job is
  'Parks the running job this attempt holds (running -> waiting, stage cleared, its worker slot free) and returns its row; with park false only checks that the attempt still holds it running (returns null, nothing changes). Anything else raises what raise_not_closable says (PT404, PT409, PT410, 55000). What job_wait_for_children (waits_for children) and job_ask (waits_for answer) call; workers only; 22023 names the field.';
revoke all on function supabase_jobs.park_job from public, anon, authenticated, service_role;
grant execute on function supabase_jobs.park_job to service_role;

create or replace function public.job_wait_for_children(id uuid, attempt integer default null, job_table text default 'jobs')
returns public.job_status
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id, attempt);
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.family:' || id::text, 0));
  if not exists (select 1 from supabase_jobs.job c
                  where c.job_table = label and c.parent_id = job_wait_for_children.id
                    and c.status not in ('done', 'failed', 'cancelled')) then
    -- Nothing to wait for: still this attempt's (or say why not).
    perform supabase_jobs.park_job(label, id, attempt, 'children', park => false);
    return 'running';
  end if;
  perform supabase_jobs.park_job(label, id, attempt, 'children');
  return 'waiting';
end
$$;
comment on function public.job_wait_for_children is
  'A running parent frees its worker slot until its children end: running -> waiting, returns ''waiting''; the last child to end queues it again (resumed_at set, attempt given back). Returns ''running'' (nothing changed) when no child is left to wait for. Workers only.';

create trigger check_child_insert before insert on supabase_jobs.job for each row
  when (new.parent_id is not null) execute function supabase_jobs.check_child_insert();
create trigger after_child_inserted after insert on supabase_jobs.job for each row
  when (new.parent_id is not null) execute function supabase_jobs.after_child_changed();
create trigger cancel_children after update on supabase_jobs.job for each row
  when (new.status = 'cancelled') execute function supabase_jobs.cancel_children();

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.insert_child, public.job_enqueue_child, public.job_children, supabase_jobs.children_progress,
  supabase_jobs.check_child_insert, supabase_jobs.child_changed, supabase_jobs.after_child_changed,
  supabase_jobs.cancel_children, public.job_wait_for_children
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  public.job_children
  to authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.insert_child, public.job_enqueue_child, public.job_wait_for_children
  to service_role;
