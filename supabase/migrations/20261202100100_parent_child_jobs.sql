-- Parent and child jobs, part 2: children, waiting without a slot, resume,
-- cancel cascade, the parent's progress and the tree on Realtime.
--
-- Purpose (issue 15, item 8; the peers: BullMQ flows / moveToWaitingChildren,
-- Trigger.dev triggerAndWait):
--   * a running job enqueues children (job_enqueue_child): rows of the same job
--     table and the same owner, with parent_id;
--   * job_wait_for_children parks the parent: running -> waiting, the worker's
--     slot is free. When the last child ends (done, failed or cancelled) the
--     parent goes back to queued (its attempt given back, resumed_at set) and is
--     claimed again like any job; job_children gives the handler their outcomes;
--   * cancelling a job cancels its children that have not ended (and theirs),
--     whoever cancels and however (job_cancel, a user's REST update);
--   * while its children work, the parent's progress is their weighted mean
--     (weight: the child's expected_seconds from its kind's plan, else 1),
--     never backwards, at most 99 until the parent itself is done;
--   * every change of a child is also sent to its parent's topic job:<parent>
--     (event 'job', with parent_id): the parent's watcher sees the tree.
--   * a queued job held back by a concurrency limit says why (job_hold_reasons):
--     how many of its kind (or its key) run; a user is answered only for their
--     own jobs (hold_of_job), never for a key they name.
-- Invariants:
--   * a child belongs to its parent's owner and job table, and is enqueued by a
--     worker while the parent runs: checked on insert for every caller (users
--     cannot write parent_id at all: no column grant);
--   * the resume happens exactly once: the child-side check and the parent's
--     wait take one transaction lock per parent, then count the live children
--     in a fresh snapshot, so of children ending concurrently the last to commit
--     resumes, and a wait racing the last child either sees it ended (no park)
--     or is seen waiting by it;
--   * the child-side writes to the parent take its row FOR UPDATE SKIP LOCKED:
--     a parent locked by its own cancel is not waited for (it is ending), so a
--     child closing while its parent is cancelled cannot deadlock with the
--     cascade. A progress write skipped this way is made by the next change.
-- Breaks: nothing for jobs without children (their rows, claims and messages
-- are unchanged; the new triggers' WHEN clauses stop at parent_id is null).

-- ---------------------------------------------------------------------------
-- The state machine: three new edges (table, expression, docs, src/lib/state.ts).
insert into supabase_jobs.transitions (from_status, to_status, via) values
  ('running', 'waiting', 'job_wait_for_children (the parent frees its worker slot)'),
  ('waiting', 'queued', 'resume: its last child ended (the attempt is given back)'),
  ('waiting', 'cancelled', 'job_cancel (cascades to the children)');

create or replace function supabase_jobs.can_transition(from_status public.job_status, to_status public.job_status)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  return case from_status
    when 'queued' then to_status in ('running', 'cancelled', 'failed')
    when 'running' then to_status in ('done', 'failed', 'cancelled', 'queued', 'waiting')
    when 'waiting' then to_status in ('queued', 'cancelled')
    else false
  end;
end
$$;

-- ---------------------------------------------------------------------------
-- The columns.
alter table supabase_jobs.job add column parent_id uuid;
alter table supabase_jobs.job add column expected_seconds real;
alter table supabase_jobs.job add column resumed_at timestamptz;
alter table supabase_jobs.job add constraint job_parent_not_self check (parent_id is distinct from id);
alter table supabase_jobs.job add constraint job_expected_seconds_positive
  check (expected_seconds is null or (expected_seconds > 0 and expected_seconds < 'Infinity'::real));
comment on column supabase_jobs.job.parent_id is 'The job that enqueued this one (job_enqueue_child): same job table, same owner. Cancelling the parent cancels it; its end may resume the parent.';
comment on column supabase_jobs.job.expected_seconds is 'What the kind''s plan predicts for this job, in seconds: its weight in its parent''s progress (null weighs 1).';
comment on column supabase_jobs.job.resumed_at is 'When this parent last came back from waiting (its last child ended): its handler runs again and reads its children''s outcomes.';
create index job_parent_idx on supabase_jobs.job (job_table, parent_id, created_at, id) where parent_id is not null;

-- ---------------------------------------------------------------------------
-- A child is attached only to a running job of the same table and owner. Row
-- trigger, for every caller (users cannot write parent_id, a worker may err).
create function supabase_jobs.check_child_insert()
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
revoke all on function supabase_jobs.check_child_insert() from public, anon, authenticated;
create trigger check_child_insert before insert on supabase_jobs.job for each row
  when (new.parent_id is not null)
  execute function supabase_jobs.check_child_insert();

-- ---------------------------------------------------------------------------
-- A resumed parent keeps the progress its children earned: the guard zeroes
-- progress on entering queued and running; this runs after it (trigger names
-- fire in order) only on those two steps of a parent's way back.
create function supabase_jobs.keep_parent_progress()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.progress := old.progress;
  return new;
end
$$;
revoke all on function supabase_jobs.keep_parent_progress() from public, anon, authenticated;
create trigger keep_parent_progress before update on supabase_jobs.job for each row
  when ((old.status = 'waiting' and new.status = 'queued')
        or (old.status = 'queued' and new.status = 'running' and new.resumed_at is not null))
  execute function supabase_jobs.keep_parent_progress();

-- ---------------------------------------------------------------------------
-- The weighted mean of the children's progress (an ended child counts whole).
create function supabase_jobs.children_progress(label text, parent uuid)
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
revoke all on function supabase_jobs.children_progress(text, uuid) from public, anon, authenticated;

-- After a child is inserted or changes (status, progress, stage): its message
-- to the parent's topic, the parent's progress, and, when it ended and was the
-- last one live, the parent's resume. SECURITY DEFINER: a user cancelling their
-- child moves the parent the way a worker would, and writes realtime.messages.
create function supabase_jobs.after_child_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  ended boolean := new.status in ('done', 'failed', 'cancelled')
    and (tg_op = 'INSERT' or old.status not in ('done', 'failed', 'cancelled'));
  parent supabase_jobs.job;
  mean real;
begin
  begin
    insert into realtime.messages (payload, event, topic, private, extension)
    values (pg_catalog.jsonb_build_object(
              'id', new.id, 'kind', new.kind, 'status', new.status, 'progress', new.progress, 'stage', new.stage,
              'error', new.error, 'error_code', new.error_code, 'result_id', new.result_id,
              'attempts', new.attempts, 'max_attempts', new.max_attempts,
              'created_at', new.created_at, 'updated_at', new.updated_at, 'started_at', new.started_at, 'finished_at', new.finished_at,
              'heartbeat_ms', new.heartbeat_ms, 'available_at', new.available_at, 'tags', new.tags,
              'expected_end_at', new.expected_end_at,
              'locale', new.locale, 'owner_id', new.owner_id, 'job_table', new.job_table,
              'parent_id', new.parent_id, 'expected_seconds', new.expected_seconds),
            'job', 'job:' || new.parent_id, true, 'broadcast');
  exception when others then
    raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;

  if ended then
    -- Siblings ending at once (and the parent's own wait) take turns here; the
    -- count below then sees every one committed before.
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.family:' || new.parent_id::text, 0));
  end if;
  select p.* into parent from supabase_jobs.job p
   where p.job_table = new.job_table and p.id = new.parent_id and p.status in ('running', 'waiting')
   for update skip locked;
  if parent.id is null then
    return null;
  end if;
  mean := least(99, supabase_jobs.children_progress(new.job_table, new.parent_id));
  if ended and parent.status = 'waiting'
     and not exists (select 1 from supabase_jobs.job c
                      where c.job_table = new.job_table and c.parent_id = new.parent_id
                        and c.status not in ('done', 'failed', 'cancelled')) then
    update supabase_jobs.job as t
       set status = 'queued', attempts = t.attempts - 1, available_at = now(), resumed_at = now(),
           progress = greatest(t.progress, coalesce(mean, 0))
     where t.job_table = parent.job_table and t.id = parent.id;
  elsif mean > parent.progress then
    update supabase_jobs.job as t set progress = mean
     where t.job_table = parent.job_table and t.id = parent.id;
  end if;
  return null;
end
$$;
revoke all on function supabase_jobs.after_child_changed() from public, anon, authenticated;
create trigger after_child_inserted after insert on supabase_jobs.job for each row
  when (new.parent_id is not null)
  execute function supabase_jobs.after_child_changed();
create trigger after_child_changed after update on supabase_jobs.job for each row
  when (new.parent_id is not null
        and (old.status is distinct from new.status or old.progress is distinct from new.progress or old.stage is distinct from new.stage))
  execute function supabase_jobs.after_child_changed();

-- A resumed parent is claimable again: listening workers hear it as they hear a retry.
create trigger notify_resumed after update of status on supabase_jobs.job for each row
  when (old.status = 'waiting' and new.status = 'queued')
  execute function supabase_jobs.notify_requeued_job();

-- Cancelling a job cancels its children that have not ended, as the caller
-- (a user cancels their own children, within RLS); each child's own cancel
-- cascades further down.
create function supabase_jobs.cancel_children()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  update supabase_jobs.job as c set status = 'cancelled', error = new.error
   where c.job_table = new.job_table and c.parent_id = new.id and c.status in ('queued', 'running', 'waiting');
  return null;
end
$$;
revoke all on function supabase_jobs.cancel_children() from public, anon, authenticated;
create trigger cancel_children after update on supabase_jobs.job for each row
  when (new.status = 'cancelled' and old.status <> 'cancelled')
  execute function supabase_jobs.cancel_children();

-- job_cancel stops a waiting parent too (restated from
-- 20261201010000_batch_rows_without_copies.sql: only the statuses it stops change).
create or replace function public.job_cancel(id uuid, reason text default null, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  return query
  with cancelled as (
    update supabase_jobs.job as t set status = 'cancelled', error = supabase_jobs.sentence(reason)
     where t.job_table = label and t.id = job_cancel.id and t.status in ('queued', 'running', 'waiting')
    returning t.*)
  -- cancelled rows hold no payload (CHECK job_terminal_has_no_payload): returned as they are.
  select c.* from cancelled as c;
end
$$;

-- ---------------------------------------------------------------------------
-- The API.

-- A running job enqueues a child: same table, same owner, same language
-- unless given. Workers only (the handler runs as the worker).
create function public.job_enqueue_child(
  parent_id uuid,
  kind text,
  params jsonb default '{}'::jsonb,
  payload bytea default null,
  max_attempts integer default null,
  locale text default null,
  job_table text default 'jobs',
  expected_seconds real default null,
  priority smallint default null,
  tags text[] default null,
  concurrency_key text default null,
  owner_id uuid default null
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
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
comment on function public.job_enqueue_child(uuid, text, jsonb, bytea, integer, text, text, real, smallint, text[], text, uuid) is
  'A running job enqueues a child: a queued job of the same table and owner (and language unless given) with parent_id set. expected_seconds weighs it in the parent''s progress. Workers only; 22023 names the field, PT404 when the parent is unknown, PT409 when it is not running.';

create function supabase_jobs.insert_child(
  label text, parent supabase_jobs.job, kind text, params jsonb, payload bytea, max_attempts integer, locale text,
  owner_id uuid, expected_seconds real, priority smallint, tags text[], concurrency_key text)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_job_input(kind, params, payload, max_attempts, locale);
  if tags is not null then
    perform supabase_jobs.check_tags(tags);
  end if;
  if concurrency_key is not null and pg_catalog.char_length(concurrency_key) not between 1 and supabase_jobs.idempotency_key_max() then
    perform supabase_jobs.invalid('concurrency_key', pg_catalog.format('concurrency_key is 1 to %s characters', supabase_jobs.idempotency_key_max()));
  end if;
  insert into supabase_jobs.job as t (job_table, kind, params, payload, max_attempts, locale, owner_id, tags, priority,
                                      concurrency_key, parent_id, expected_seconds)
  values (label, kind, coalesce(params, '{}'::jsonb), payload, coalesce(max_attempts, supabase_jobs.max_attempts_default()),
          locale, owner_id, coalesce(tags, '{}'), coalesce(priority, 0), concurrency_key, parent.id, expected_seconds)
  returning t.* into result;
  result.payload := null;
  return result;
end
$$;
revoke all on function supabase_jobs.insert_child(text, supabase_jobs.job, text, jsonb, bytea, integer, text, uuid, real, smallint, text[], text) from public, anon, authenticated;
grant execute on function supabase_jobs.insert_child(text, supabase_jobs.job, text, jsonb, bytea, integer, text, uuid, real, smallint, text[], text) to service_role;

-- A job's children, oldest first (payload omitted). As the caller: a user sees
-- the children of their own jobs only.
create function public.job_children(parent_id uuid, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql stable
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(parent_id);
  return query
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(c, '{"payload": null}'::jsonb) as j from supabase_jobs.job as c
     where c.job_table = label and c.parent_id = job_children.parent_id
     order by c.created_at, c.id
     limit supabase_jobs.list_max() offset 0) as w;
end
$$;
comment on function public.job_children(uuid, text) is
  'The children of a job (job_enqueue_child), oldest first, without payloads; [] when it has none. As the caller: a user sees their own jobs'' children only.';

-- The running parent parks until its children have ended: 'waiting' when it
-- did (its slot is free; the last child to end queues it again), 'running'
-- when none is left to wait for (read them with job_children and go on).
create function public.job_wait_for_children(id uuid, attempt integer default null, job_table text default 'jobs')
returns public.job_status
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  parked uuid;
begin
  perform supabase_jobs.check_call(id, attempt);
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.family:' || id::text, 0));
  if not exists (select 1 from supabase_jobs.job c
                  where c.job_table = label and c.parent_id = job_wait_for_children.id
                    and c.status not in ('done', 'failed', 'cancelled')) then
    -- Nothing to wait for: still this attempt's (or say why not).
    if exists (select 1 from supabase_jobs.job t where t.job_table = label and t.id = job_wait_for_children.id
                  and t.status = 'running' and (attempt is null or t.attempts = attempt)) then
      return 'running';
    end if;
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'wait for the children of');
  end if;
  update supabase_jobs.job as t set status = 'waiting', stage = null
   where t.job_table = label and t.id = job_wait_for_children.id and t.status = 'running'
     and (attempt is null or t.attempts = attempt)
  returning t.id into parked;
  if parked is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'wait for the children of');
  end if;
  return 'waiting';
end
$$;
comment on function public.job_wait_for_children(uuid, integer, text) is
  'A running parent frees its worker slot until its children end: running -> waiting, returns ''waiting''; the last child to end queues it again (resumed_at set, attempt given back). Returns ''running'' (nothing changed) when no child is left to wait for. Workers only.';

-- ---------------------------------------------------------------------------
-- Issue 15, item 4: why a queued job is not starting. A job held by a
-- concurrency limit says which limit and how many jobs hold it.

-- Counts running jobs across owners (the caller may not see them): SECURITY
-- DEFINER in the unexposed schema; it returns counts, never a job.
create function supabase_jobs.hold_of(label text, kind text, concurrency_key text)
returns table (held_by text, running integer, max_running integer)
language plpgsql stable
security definer
set search_path = ''
as $$
declare
  lim supabase_jobs.kind_limits;
  n integer;
begin
  select l.* into lim from supabase_jobs.kind_limits l where l.job_table = label and l.kind = hold_of.kind;
  if lim.kind is null then
    return;
  end if;
  if lim.max_running_per_key is not null and concurrency_key is not null then
    select pg_catalog.count(*) into n from supabase_jobs.job s
     where s.job_table = label and s.status = 'running' and s.kind = hold_of.kind and s.concurrency_key = hold_of.concurrency_key;
    if n >= lim.max_running_per_key then
      return query select 'key'::text, n, lim.max_running_per_key;
      return;
    end if;
  end if;
  if lim.max_running is not null then
    select pg_catalog.count(*) into n from supabase_jobs.job s
     where s.job_table = label and s.status = 'running' and s.kind = hold_of.kind;
    if n >= lim.max_running then
      return query select 'kind'::text, n, lim.max_running;
    end if;
  end if;
end
$$;
revoke all on function supabase_jobs.hold_of(text, text, text) from public, anon, authenticated;
grant execute on function supabase_jobs.hold_of(text, text, text) to service_role;

-- Users reach the counts only for a job of their own (or as an admin): hold_of
-- with a key they name would let them probe whether another user's job with a
-- guessed key (say, that user's id) is running.
create function supabase_jobs.hold_of_job(job_id uuid)
returns table (held_by text, running integer, max_running integer)
language sql stable
security definer
set search_path = ''
as $$
  select h.held_by, h.running, h.max_running
    from supabase_jobs.job j
    cross join lateral supabase_jobs.hold_of(j.job_table, j.kind, j.concurrency_key) h
   where j.id = job_id
     and (j.owner_id = (select auth.uid()) or supabase_jobs.is_admin())
$$;
comment on function supabase_jobs.hold_of_job(uuid) is
  'What holds one queued job back (see hold_of), answered only for the caller''s own job or for an admin.';
revoke all on function supabase_jobs.hold_of_job(uuid) from public, anon, authenticated;
grant execute on function supabase_jobs.hold_of_job(uuid) to authenticated, service_role;

create function public.job_hold_reasons(ids uuid[], job_table text default 'jobs')
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
     where j.job_table = label and j.id = any (ids) and j.status = 'queued' and j.available_at <= now();
  else
    return query
    select j.id, j.kind, h.held_by, h.running, h.max_running
      from supabase_jobs.job j
      cross join lateral supabase_jobs.hold_of_job(j.id) h
     where j.job_table = label and j.id = any (ids) and j.status = 'queued' and j.available_at <= now();
  end if;
end
$$;
comment on function public.job_hold_reasons(uuid[], text) is
  'For each queued job of ids (that the caller can see) held back by a concurrency limit: which limit (kind: max_running; key: max_running_per_key), how many of its kind (or key) run, and the limit. Jobs not held are left out.';

-- ---------------------------------------------------------------------------
-- Grants and plans.
do $$
declare
  f record;
begin
  for f in select * from (values
      ('public.job_enqueue_child(uuid, text, jsonb, bytea, integer, text, text, real, smallint, text[], text, uuid)', false, true),
      ('public.job_children(uuid, text)', true, true),
      ('public.job_wait_for_children(uuid, integer, text)', false, true),
      ('public.job_hold_reasons(uuid[], text)', true, false)
    ) as v(fn, users, generic)
  loop
    execute pg_catalog.format('revoke all on function %s from public, anon, authenticated', f.fn);
    execute pg_catalog.format('grant execute on function %s to service_role', f.fn);
    if f.users then
      execute pg_catalog.format('grant execute on function %s to authenticated', f.fn);
    end if;
    if f.generic then
      execute pg_catalog.format('alter function %s set plan_cache_mode = force_generic_plan', f.fn);
    end if;
  end loop;
end
$$;
