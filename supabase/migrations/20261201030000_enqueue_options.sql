-- Queue features users bring from pg-boss / graphile-worker / BullMQ /
-- Trigger.dev, chosen at enqueue: scheduled runs (run_at / delay, reschedule),
-- priority, expiry before start, idempotency keys, and tags.
--
-- Invariants:
--   * A job is claimable from available_at on (the claim already waits for it):
--     run_at / delay set it at enqueue, job_reschedule moves it while the job
--     is queued (its owner or a worker); nothing else moves it but retry.
--   * Per job table and owner, at most one job per idempotency key is live
--     (queued or running) or within the key's time-to-live: job_enqueue_once
--     with a key that matches one returns that job (existing = true) and writes
--     nothing. Enqueues of one key are serialised by a transaction lock on the
--     key, so racing enqueues cannot both write. Keys of different owners never
--     meet (nothing of one user's jobs is visible to another).
--   * Claims take the highest priority first (then the oldest available_at):
--     priority is an integer, default 0; no aging: a low-priority job waits as
--     long as higher ones keep coming (give it its own kind and worker if that
--     is not what you want).
--   * A queued job past expires_at is never claimed; the reclaim schedule closes
--     it as failed ('expired', a sentence in the job's language).
--   * tags is a set of short labels (at most 10, each 1..64 characters) chosen
--     at enqueue; job_list_recent filters on them (rows having every tag asked)
--     through a GIN index; Realtime messages carry them, so a list subscribed
--     by tag filters without a query.
--
-- The state machine gains queued -> failed (expiry only).
-- Breaks: job_enqueue, job_enqueue_many and job_list_recent gain trailing
-- arguments (callers by name are unaffected). Realtime messages gain
-- available_at and tags. A user may now change available_at of their own
-- queued job (through job_reschedule); nothing else of it.

alter table supabase_jobs.job add column tags text[] not null default '{}';
alter table supabase_jobs.job add column idempotency_key text;
alter table supabase_jobs.job add column idempotency_expires_at timestamptz;
alter table supabase_jobs.job add column priority smallint not null default 0;
alter table supabase_jobs.job add column expires_at timestamptz;
alter table supabase_jobs.job add column concurrency_key text;
comment on column supabase_jobs.job.concurrency_key is 'Jobs of one kind sharing this key run at most supabase_jobs.kind_limits.max_running_per_key at a time (e.g. the owner: one export per user).';
comment on column supabase_jobs.job.priority is 'Claims take the highest first (then the oldest available_at); default 0. No aging.';
comment on column supabase_jobs.job.expires_at is 'A queued job not started by then is never claimed and is closed as failed (error_code expired).';
comment on column supabase_jobs.job.tags is 'Labels chosen at enqueue (at most 10, 1..64 characters each); job_list_recent filters on them.';
comment on column supabase_jobs.job.idempotency_key is 'Set by job_enqueue_once: no other job of this table with this key is created while this one is live or finished before idempotency_expires_at.';
comment on column supabase_jobs.job.idempotency_expires_at is 'After this (and once the job finished), its idempotency_key no longer stands in for a new job.';

create function supabase_jobs.tags_max() returns int language plpgsql immutable parallel safe set search_path = '' as $$ begin return 10; end $$;
create function supabase_jobs.tag_max_length() returns int language plpgsql immutable parallel safe set search_path = '' as $$ begin return 64; end $$;
create function supabase_jobs.idempotency_key_max() returns int language plpgsql immutable parallel safe set search_path = '' as $$ begin return 200; end $$;
revoke all on function supabase_jobs.tags_max(), supabase_jobs.tag_max_length(), supabase_jobs.idempotency_key_max() from public;
grant execute on function supabase_jobs.tags_max(), supabase_jobs.tag_max_length(), supabase_jobs.idempotency_key_max() to authenticated, service_role;
do $$
begin
  execute pg_catalog.format('alter table supabase_jobs.job add constraint job_tags_shape check (pg_catalog.cardinality(tags) <= %s and pg_catalog.array_position(tags, null) is null)',
    supabase_jobs.tags_max());
  execute pg_catalog.format('alter table supabase_jobs.job add constraint job_idempotency_key_length check (idempotency_key is null or pg_catalog.char_length(idempotency_key) between 1 and %s)',
    supabase_jobs.idempotency_key_max());
  execute pg_catalog.format('alter table supabase_jobs.job add constraint job_concurrency_key_length check (concurrency_key is null or pg_catalog.char_length(concurrency_key) between 1 and %s)',
    supabase_jobs.idempotency_key_max());
end
$$;

-- Claim order: priority first.
drop index supabase_jobs.job_claim_idx;
create index job_claim_idx on supabase_jobs.job (job_table, priority desc, available_at, created_at, id) where status = 'queued';

create index job_tags_idx on supabase_jobs.job using gin (tags) where tags <> '{}';
create index job_idempotency_key_idx on supabase_jobs.job (job_table, idempotency_key) where idempotency_key is not null;

-- Users write the new columns of their own jobs through the job_* functions
-- (SECURITY INVOKER): the schedule at enqueue and of their queued jobs
-- (job_reschedule), tags, and the key of job_enqueue_once.
grant insert (available_at, tags, idempotency_key, idempotency_expires_at, priority, expires_at, concurrency_key) on supabase_jobs.job to authenticated;
grant update (available_at) on supabase_jobs.job to authenticated;

-- The checks of the new arguments, once.
create function supabase_jobs.check_tags(tags text[], prefix text default '')
returns void
language plpgsql immutable
set search_path = ''
as $$
declare
  t text;
begin
  if tags is null then
    return;
  end if;
  if pg_catalog.cardinality(tags) > supabase_jobs.tags_max() then
    perform supabase_jobs.invalid(prefix || 'tags', pg_catalog.format('at most %s tags; got %s', supabase_jobs.tags_max(), pg_catalog.cardinality(tags)));
  end if;
  foreach t in array tags loop
    if t is null or pg_catalog.char_length(t) not between 1 and supabase_jobs.tag_max_length() then
      perform supabase_jobs.invalid(prefix || 'tags', pg_catalog.format('a tag is 1 to %s characters; got %L', supabase_jobs.tag_max_length(), left(t, 100)));
    end if;
  end loop;
end
$$;
revoke all on function supabase_jobs.check_tags(text[], text) from public;
grant execute on function supabase_jobs.check_tags(text[], text) to authenticated, service_role;

-- When a new job becomes claimable: run_at, or now() + delay, or now().
create function supabase_jobs.start_time(run_at timestamptz, delay interval, prefix text default '')
returns timestamptz
language plpgsql stable
set search_path = ''
as $$
begin
  if run_at is not null and delay is not null then
    perform supabase_jobs.invalid(prefix || 'run_at', 'give run_at or delay, not both');
  end if;
  if delay is not null and delay < interval '0' then
    perform supabase_jobs.invalid(prefix || 'delay', pg_catalog.format('delay cannot be negative; got %s', delay));
  end if;
  if run_at = 'infinity'::timestamptz or run_at = '-infinity'::timestamptz then
    perform supabase_jobs.invalid(prefix || 'run_at', 'run_at must be a finite time');
  end if;
  return coalesce(run_at, now() + delay, now());
end
$$;
revoke all on function supabase_jobs.start_time(timestamptz, interval, text) from public;
grant execute on function supabase_jobs.start_time(timestamptz, interval, text) to authenticated, service_role;

-- The one insert of a single job, shared by job_enqueue and job_enqueue_once.
create function supabase_jobs.insert_job(
  label text, kind text, params jsonb, payload bytea, max_attempts integer, locale text, owner_id uuid,
  run_at timestamptz, delay interval, tags text[], priority smallint default null, expire_after interval default null,
  concurrency_key text default null, idempotency_key text default null, key_ttl interval default null)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  result supabase_jobs.job;
  starts timestamptz := now();
begin
  perform supabase_jobs.check_job_input(kind, params, payload, max_attempts, locale);
  -- The common enqueue names none of these: no call for them (each call costs on the hot path).
  if run_at is not null or delay is not null then
    starts := supabase_jobs.start_time(run_at, delay);
  end if;
  if tags is not null then
    perform supabase_jobs.check_tags(tags);
  end if;
  if expire_after is not null and expire_after <= interval '0' then
    perform supabase_jobs.invalid('expire_after', pg_catalog.format('expire_after must be positive; got %s', expire_after));
  end if;
  if concurrency_key is not null and pg_catalog.char_length(concurrency_key) not between 1 and supabase_jobs.idempotency_key_max() then
    perform supabase_jobs.invalid('concurrency_key', pg_catalog.format('concurrency_key is 1 to %s characters', supabase_jobs.idempotency_key_max()));
  end if;
  insert into supabase_jobs.job as t (job_table, kind, params, payload, max_attempts, locale, owner_id, available_at, tags,
                                      priority, expires_at, concurrency_key, idempotency_key, idempotency_expires_at)
  values (label, kind, coalesce(params, '{}'::jsonb), payload,
          coalesce(max_attempts, supabase_jobs.max_attempts_default()), locale, owner_id,
          starts, coalesce(tags, '{}'), coalesce(priority, 0), starts + expire_after, concurrency_key, idempotency_key, now() + key_ttl)
  returning t.* into result;
  result.payload := null;
  return result;
end
$$;
revoke all on function supabase_jobs.insert_job(text, text, jsonb, bytea, integer, text, uuid, timestamptz, interval, text[], smallint, interval, text, text, interval) from public;
grant execute on function supabase_jobs.insert_job(text, text, jsonb, bytea, integer, text, uuid, timestamptz, interval, text[], smallint, interval, text, text, interval) to authenticated, service_role;

-- ---------------------------------------------------------------------------
drop function public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text);
create function public.job_enqueue(
  kind text,
  params jsonb default '{}'::jsonb,
  payload bytea default null,
  max_attempts integer default null,
  locale text default null,
  owner_id uuid default null,
  job_table text default 'jobs',
  run_at timestamptz default null,
  delay interval default null,
  tags text[] default null,
  priority smallint default null,
  expire_after interval default null,
  concurrency_key text default null
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return supabase_jobs.insert_job(supabase_jobs.job_table_label(job_table), kind, params, payload, max_attempts, locale,
    supabase_jobs.owner_for(owner_id), run_at, delay, tags, priority, expire_after, concurrency_key);
end
$$;
comment on function public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text, timestamptz, interval, text[], smallint, interval, text) is
  'Writes a queued job row and returns it (payload omitted). run_at or delay: not claimable before then. tags: labels to filter by. priority: higher is claimed first. expire_after: closed as failed (expired) if not started that long after its start. Bad input raises 22023 naming the field and writes nothing.';

-- The same, once per idempotency key (per job table and owner): a live job
-- with the key, or one created within key_ttl, is returned instead (existing = true).
create function public.job_enqueue_once(
  kind text,
  idempotency_key text,
  params jsonb default '{}'::jsonb,
  payload bytea default null,
  max_attempts integer default null,
  locale text default null,
  owner_id uuid default null,
  job_table text default 'jobs',
  run_at timestamptz default null,
  delay interval default null,
  tags text[] default null,
  key_ttl interval default interval '24 hours',
  priority smallint default null,
  expire_after interval default null,
  concurrency_key text default null
)
returns table (existing boolean, job jsonb)
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  owner uuid := supabase_jobs.owner_for(owner_id);
  found_job supabase_jobs.job;
begin
  if idempotency_key is null or pg_catalog.char_length(idempotency_key) not between 1 and supabase_jobs.idempotency_key_max() then
    perform supabase_jobs.invalid('idempotency_key', pg_catalog.format('idempotency_key is 1 to %s characters', supabase_jobs.idempotency_key_max()));
  end if;
  if key_ttl is null or key_ttl < interval '0' then
    perform supabase_jobs.invalid('key_ttl', 'key_ttl is a non-negative interval');
  end if;
  -- One writer per key at a time: the second waits, then finds the first's job.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(
    'supabase_jobs.key:' || label || ':' || coalesce(owner::text, '') || ':' || idempotency_key, 0));
  select t.* into found_job
    from supabase_jobs.job t
   where t.job_table = label and t.idempotency_key = job_enqueue_once.idempotency_key
     and t.owner_id is not distinct from owner
     and (t.status in ('queued', 'running') or t.idempotency_expires_at > now())
   order by t.created_at desc
   limit 1;
  if found_job.id is not null then
    found_job.payload := null;
    return query select true, pg_catalog.to_jsonb(found_job);
    return;
  end if;
  return query select false, pg_catalog.to_jsonb(supabase_jobs.insert_job(
    label, kind, params, payload, max_attempts, locale, owner, run_at, delay, tags, priority, expire_after, concurrency_key, idempotency_key, key_ttl));
end
$$;
comment on function public.job_enqueue_once(text, text, jsonb, bytea, integer, text, uuid, text, timestamptz, interval, text[], interval, smallint, interval, text) is
  'job_enqueue once per idempotency_key, job table and owner: a queued/running job with the key, or one created within key_ttl (default 24 h), is returned (existing = true) instead of a new one. A double click or a retried form post never starts the work twice. Racing calls with one key are serialised.';

-- items also take run_at (ISO time), delay_ms (integer) and tags (array of text).
drop function public.job_enqueue_many(text, jsonb, text);
create function public.job_enqueue_many(kind text, items jsonb, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  item record;
  worker boolean := supabase_jobs.is_worker();
  uid uuid := (select auth.uid());
  bytes bytea;
  attempts integer;
  owner uuid;
  starts timestamptz;
  item_tags text[];
begin
  if items is null or pg_catalog.jsonb_typeof(items) <> 'array' or pg_catalog.jsonb_array_length(items) = 0 then
    perform supabase_jobs.invalid('items', 'items is a non-empty JSON array of {params, payload, max_attempts, locale, owner_id, run_at, delay_ms, tags}');
  elsif pg_catalog.jsonb_array_length(items) > supabase_jobs.batch_max() then
    perform supabase_jobs.invalid('items', pg_catalog.format('at most %s items per call; got %s', supabase_jobs.batch_max(), pg_catalog.jsonb_array_length(items)));
  end if;
  perform supabase_jobs.check_job_input(kind, null, null, null, null);
  begin
    if not worker and exists (
      select 1 from pg_catalog.jsonb_array_elements(items) e
       where e.value ->> 'owner_id' is not null and (e.value ->> 'owner_id')::uuid is distinct from uid) then
      raise exception using errcode = '42501', message = 'a user can only enqueue jobs of their own';
    end if;
    return query
    with added as (
      insert into supabase_jobs.job as t (job_table, kind, params, payload, max_attempts, locale, owner_id, available_at, tags, priority, expires_at, concurrency_key)
      select label, kind, coalesce(e.value -> 'params', '{}'::jsonb),
             pg_catalog.decode(e.value ->> 'payload', 'base64'),
             coalesce((e.value ->> 'max_attempts')::integer, supabase_jobs.max_attempts_default()),
             e.value ->> 'locale',
             case when worker then (e.value ->> 'owner_id')::uuid else uid end,
             coalesce((e.value ->> 'run_at')::timestamptz,
                      now() + pg_catalog.make_interval(secs => ((e.value ->> 'delay_ms')::bigint / 1000.0)::double precision),
                      now()),
             coalesce(array(select pg_catalog.jsonb_array_elements_text(e.value -> 'tags')), '{}'),
             coalesce((e.value ->> 'priority')::smallint, 0),
             coalesce((e.value ->> 'run_at')::timestamptz,
                      now() + pg_catalog.make_interval(secs => ((e.value ->> 'delay_ms')::bigint / 1000.0)::double precision),
                      now())
               + pg_catalog.make_interval(secs => ((e.value ->> 'expire_after_ms')::bigint / 1000.0)::double precision),
             e.value ->> 'concurrency_key'
        from pg_catalog.jsonb_array_elements(items) with ordinality e
       order by e.ordinality
      returning t as j)
    -- The payload blanked by a plain function call per row, expanded outside (offset 0
    -- keeps it one call per row): no set-returning call per row (20261201010000).
    select (w.j).* from (
      select pg_catalog.jsonb_populate_record(added.j, '{"payload": null}'::jsonb) as j from added offset 0) as w;
  exception when others then
    -- All or nothing: find the first bad item and name it.
    for item in select e.value, e.ordinality - 1 as i from pg_catalog.jsonb_array_elements(items) with ordinality e loop
      if pg_catalog.jsonb_typeof(item.value) <> 'object' then
        perform supabase_jobs.invalid(pg_catalog.format('items[%s]', item.i), 'each item is a JSON object');
      end if;
      begin
        bytes := pg_catalog.decode(item.value ->> 'payload', 'base64');
        attempts := (item.value ->> 'max_attempts')::integer;
        owner := (item.value ->> 'owner_id')::uuid;
        starts := (item.value ->> 'run_at')::timestamptz;
        if item.value ? 'tags' and pg_catalog.jsonb_typeof(item.value -> 'tags') not in ('array', 'null') then
          raise exception 'tags is not an array';
        end if;
        item_tags := array(select pg_catalog.jsonb_array_elements_text(coalesce(item.value -> 'tags', '[]')));
        perform (item.value ->> 'delay_ms')::bigint, (item.value ->> 'priority')::smallint;
        if (item.value ->> 'expire_after_ms')::bigint <= 0 then
          raise exception 'expire_after_ms must be positive';
        end if;
      exception when others then
        perform supabase_jobs.invalid(pg_catalog.format('items[%s]', item.i),
          pg_catalog.format('items[%s] has a value of the wrong type (payload is base64, max_attempts an integer, owner_id a uuid, run_at a time, delay_ms an integer, tags an array of text, priority a small integer, expire_after_ms a positive integer): %s', item.i, sqlerrm));
      end;
      perform supabase_jobs.check_job_input(kind, item.value -> 'params', bytes, attempts,
        item.value ->> 'locale', pg_catalog.format('items[%s].', item.i));
      perform supabase_jobs.check_tags(item_tags, pg_catalog.format('items[%s].', item.i));
      if pg_catalog.char_length(item.value ->> 'concurrency_key') not between 1 and supabase_jobs.idempotency_key_max() then
        perform supabase_jobs.invalid(pg_catalog.format('items[%s].concurrency_key', item.i),
          pg_catalog.format('items[%s]: concurrency_key is 1 to %s characters', item.i, supabase_jobs.idempotency_key_max()));
      end if;
      perform supabase_jobs.start_time(starts,
        case when item.value ? 'delay_ms' then pg_catalog.make_interval(secs => ((item.value ->> 'delay_ms')::bigint / 1000.0)::double precision) end,
        pg_catalog.format('items[%s].', item.i));
      if not worker and owner is distinct from uid and owner is not null then
        raise exception using errcode = '42501', message = pg_catalog.format('items[%s]: a user can only enqueue jobs of their own', item.i);
      end if;
    end loop;
    raise;
  end;
end
$$;
comment on function public.job_enqueue_many(text, jsonb, text) is
  'Writes many queued jobs of one kind in one statement (all or nothing) and returns them in order (payload omitted). Items: {params, payload (base64), max_attempts, locale, owner_id, run_at, delay_ms, tags, priority, expire_after_ms, concurrency_key}. A bad item raises 22023 naming it (DETAIL field=items[<i>].<field>) and writes nothing.';

-- Moves a queued job's start; its owner or a worker. A job that started,
-- finished or was cancelled cannot be rescheduled.
create function public.job_reschedule(id uuid, run_at timestamptz default null, delay interval default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  starts timestamptz := supabase_jobs.start_time(run_at, delay);
  result supabase_jobs.job;
  current_status public.job_status;
begin
  perform supabase_jobs.check_call(id);
  update supabase_jobs.job as t set available_at = starts
   where t.job_table = label and t.id = job_reschedule.id and t.status = 'queued'
  returning t.* into result;
  if result.id is not null then
    result.payload := null;
    return result;
  end if;
  select j.status into current_status from supabase_jobs.job j where j.job_table = label and j.id = job_reschedule.id;
  if current_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  elsif current_status = 'cancelled' then
    raise exception using errcode = 'PT410', message = pg_catalog.format('job %s was cancelled; it cannot be rescheduled', id);
  end if;
  raise exception using errcode = 'PT409',
    message = pg_catalog.format('job %s is %s: only a queued job can be rescheduled', id, current_status);
end
$$;
comment on function public.job_reschedule(uuid, timestamptz, interval, text) is
  'Moves a queued job''s start to run_at (or now() + delay, or now()). Its owner or a worker; PT409 once it started or finished, PT410 when cancelled, PT404 when unknown.';

drop function public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text);
create function public.job_list_recent(
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
     and (after_created is null or (t.created_at, t.id) < (after_created, after_id))
   order by t.created_at desc, t.id desc
   limit "limit" offset 0) as w;
end
$$;
comment on function public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text, text[]) is
  'Newest jobs first, filtered by kind, status(es) and tags (rows having every tag given), keyset-paginated: pass "<created_at>~<id>" of the last row as cursor. [] when nothing matches.';

-- ---------------------------------------------------------------------------
-- The claims take priority first and never an expired job: written in
-- 20261201055000_concurrency_limits.sql with the limits they also enforce.


-- The sentence of an expired job (the other sentences unchanged).
create or replace function supabase_jobs.user_message(key text, locale text, n int default null)
returns text
language sql immutable parallel safe
set search_path = ''
as $$
  select case
    when coalesce(lower(locale), '') like 'pt%' then
      case key
        when 'worker_lost' then format('O processamento parou inesperadamente %s vez(es) e não foi concluído. Tente novamente mais tarde.', n)
        when 'cancelled' then 'Cancelado a pedido do usuário.'
        when 'expired' then 'Expirou antes de poder começar. Tente novamente.'
        else key
      end
    else
      case key
        when 'worker_lost' then format('The work stopped unexpectedly %s time(s) and could not finish. Please try again later.', n)
        when 'cancelled' then 'Cancelled at the user''s request.'
        when 'expired' then 'It expired before it could start. Please try again.'
        else key
      end
  end
$$;

-- A queued job that expired before it could start ends failed: a new edge of
-- the state machine (the table docs and tests read, and the expression the guard runs).
insert into supabase_jobs.transitions (from_status, to_status, via) values
  ('queued', 'failed', 'expiry: the reclaim schedule closes a queued job past expires_at');
create or replace function supabase_jobs.can_transition(from_status public.job_status, to_status public.job_status)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  return case from_status
    when 'queued' then to_status in ('running', 'cancelled', 'failed')
    when 'running' then to_status in ('done', 'failed', 'cancelled', 'queued')
    else false
  end;
end
$$;

-- Expired queued jobs are closed by the reclaim schedule, table by table.
create function supabase_jobs.expire_jobs(label text)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query
  with expired as (
    update supabase_jobs.job as t
       set status = 'failed', error = supabase_jobs.user_message('expired', t.locale), error_code = 'expired'
     where t.job_table = label and t.status = 'queued' and t.expires_at <= now()
    returning t as j)
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(expired.j, '{"payload": null}'::jsonb) as j from expired offset 0) as w;
end
$$;
revoke all on function supabase_jobs.expire_jobs(text) from public, anon, authenticated;
grant execute on function supabase_jobs.expire_jobs(text) to service_role;
create index job_expiry_idx on supabase_jobs.job (job_table, expires_at) where status = 'queued' and expires_at is not null;

create or replace function supabase_jobs.reclaim_all(stale_after interval)
returns table (job_table text, id uuid, status public.job_status)
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass;
  label text;
begin
  if stale_after is not null and stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', pg_catalog.format('stale_after must be positive; got %s', stale_after));
  end if;
  for tbl in select t.table_name from supabase_jobs.job_tables t order by t.table_name::text loop
    label := supabase_jobs.table_label(tbl);
    return query
      select label, r.id, r.status from supabase_jobs.reclaim_jobs(label, stale_after) r
      union all
      select label, x.id, x.status from supabase_jobs.expire_jobs(label) x;
  end loop;
end
$$;
comment on function supabase_jobs.reclaim_all(interval) is
  'The supabase-jobs-reclaim schedule, on every registered job table: readmits jobs whose worker missed its declared heartbeat, and (only when stale_after is not null) jobs silent that long; closes queued jobs past expires_at as failed (expired). One row per job readmitted (queued) or closed (failed).';

-- Grants and plans, as the function list of the partitioned layer sets them.
do $$
declare
  f record;
begin
  for f in select * from (values
      ('public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text, timestamptz, interval, text[], smallint, interval, text)', true, true),
      ('public.job_enqueue_once(text, text, jsonb, bytea, integer, text, uuid, text, timestamptz, interval, text[], interval, smallint, interval, text)', true, true),
      ('public.job_enqueue_many(text, jsonb, text)', true, true),
      ('public.job_reschedule(uuid, timestamptz, interval, text)', true, true),
      ('public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text, text[])', true, false)
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

-- ---------------------------------------------------------------------------
-- The guard lets a user reschedule their own queued job (job_reschedule), as
-- well as cancel it. Unchanged otherwise.
create or replace function supabase_jobs.guard_job_update()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  restricted boolean := pg_catalog.row_security_active(tg_relid);
begin
  if supabase_jobs.is_terminal(old.status) then
    if (pg_catalog.to_jsonb(new) - 'is_active' - 'updated_at') is distinct from (pg_catalog.to_jsonb(old) - 'is_active' - 'updated_at') then
      raise exception using errcode = 'SJ001',
        message = pg_catalog.format('job %s is %s, a terminal state: it cannot change', old.id, old.status),
        hint = 'Enqueue a new job to run the work again.';
    end if;
    new.updated_at := now();
    return new;
  end if;

  if restricted then
    -- A user cancels their job, or moves the start of one still queued; nothing else.
    if not ((new.status = 'cancelled'
             and (pg_catalog.to_jsonb(new) - 'status' - 'error' - 'updated_at') is not distinct from (pg_catalog.to_jsonb(old) - 'status' - 'error' - 'updated_at'))
         or (old.status = 'queued' and new.status = 'queued'
             and (pg_catalog.to_jsonb(new) - 'available_at' - 'updated_at') is not distinct from (pg_catalog.to_jsonb(old) - 'available_at' - 'updated_at'))) then
      raise exception using errcode = '42501',
        message = 'a user can only cancel their own jobs or reschedule them while queued; every other change is the worker''s';
    end if;
  end if;

  if new.status is distinct from old.status then
    if not supabase_jobs.can_transition(old.status, new.status) then
      raise exception using errcode = 'SJ001',
        message = pg_catalog.format('illegal transition for job %s: %s -> %s', old.id, old.status, new.status),
        hint = 'See docs/state-machine.md for the transitions and the job_* function that makes each.';
    end if;
    case new.status
      when 'running' then
        new.started_at := now();
        new.heartbeat_at := now();
        new.progress := 0;
        new.stage := null;
      when 'queued' then
        new.started_at := null;
        new.heartbeat_at := null;
        new.progress := 0;
        new.stage := null;
      when 'done' then
        new.finished_at := now();
        new.payload := null;
        new.progress := 100;
        new.error := null;
        new.error_code := null;
      when 'failed' then
        new.finished_at := now();
        new.payload := null;
        new.error_code := coalesce(new.error_code, 'failed');
      when 'cancelled' then
        new.finished_at := now();
        new.payload := null;
        new.error_code := 'cancelled';
        new.error := coalesce(nullif(btrim(supabase_jobs.sentence(new.error)), ''), supabase_jobs.user_message('cancelled', old.locale));
      else
        null;
    end case;
  elsif old.status = 'queued' and not restricted then
    -- A queued row has nothing a worker may touch but its schedule.
    if (pg_catalog.to_jsonb(new) - 'available_at' - 'updated_at' - 'is_active') is distinct from (pg_catalog.to_jsonb(old) - 'available_at' - 'updated_at' - 'is_active') then
      raise exception using errcode = 'SJ001', message = pg_catalog.format('job %s is queued: claim it before writing progress or results', old.id);
    end if;
  end if;
  new.updated_at := now();
  return new;
end
$$;

-- Messages carry the schedule (a queued job says when it will start) and the
-- tags (a list subscribed by tag filters without a query).
create or replace function supabase_jobs.send_job_messages(ids uuid[], to_job_topic boolean)
returns void
language plpgsql
set search_path = ''
as $$
begin
  insert into realtime.messages (payload, event, topic, private, extension)
  with changed as materialized (
    select pg_catalog.jsonb_build_object(
             'id', j.id, 'kind', j.kind, 'status', j.status, 'progress', j.progress, 'stage', j.stage,
             'error', j.error, 'error_code', j.error_code, 'result_id', j.result_id,
             'attempts', j.attempts, 'max_attempts', j.max_attempts,
             'created_at', j.created_at, 'updated_at', j.updated_at, 'started_at', j.started_at, 'finished_at', j.finished_at,
             'heartbeat_ms', j.heartbeat_ms, 'available_at', j.available_at, 'tags', j.tags,
             'locale', j.locale, 'owner_id', j.owner_id, 'job_table', j.job_table) as message,
           j.id, j.owner_id, j.job_table,
           pg_catalog.count(*) over (partition by j.owner_id) as of_owner,
           (pg_catalog.row_number() over (partition by j.owner_id order by j.id) - 1) / 100 as chunk
      from supabase_jobs.job as j
     where j.id = any (ids))
  select c.message, 'job', 'job:' || c.id, true, 'broadcast' from changed c where to_job_topic
  union all
  select c.message, 'job', 'jobs:' || c.owner_id, true, 'broadcast' from changed c
   where c.owner_id is not null and c.of_owner = 1
  union all
  select pg_catalog.jsonb_build_object('job_table', pg_catalog.min(c.job_table), 'jobs', pg_catalog.jsonb_agg(c.message order by c.id)),
         'jobs', 'jobs:' || c.owner_id, true, 'broadcast'
    from changed c
   where c.owner_id is not null and c.of_owner > 1
   group by c.owner_id, c.chunk;
exception when others then
  raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
end
$$;
-- A redefinition resets the function's settings: plan once per session again.
alter function supabase_jobs.send_job_messages(uuid[], boolean) set plan_cache_mode = force_generic_plan;
