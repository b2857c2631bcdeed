-- Enqueue: the one insert path every entry point shares (supabase_jobs.insert_job),
-- and the public functions on it: job_enqueue (one job), job_enqueue_once (one
-- job per idempotency key) and job_enqueue_many (a batch in one statement).
-- Users may also insert into a job table directly; the row rules, the guard
-- and the admission trigger (10_kinds_and_quotas) hold either way.

create or replace function supabase_jobs.insert_job(
  label text,
  kind text,
  params jsonb,
  payload bytea,
  max_attempts integer,
  locale text,
  owner_id uuid,
  run_at timestamptz,
  delay interval,
  tags text[],
  priority integer default null,
  expire_after interval default null,
  concurrency_key text default null,
  idempotency_key text default null,
  key_ttl interval default null
)
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
  if tags is not null or priority is not null or concurrency_key is not null or expire_after is not null or key_ttl is not null then
    perform supabase_jobs.check_job_options(tags, priority, concurrency_key, '', expire_after, key_ttl);
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

create or replace function public.job_enqueue(
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
  priority integer default null,
  expire_after interval default null,
  concurrency_key text default null
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return supabase_jobs.insert_job(supabase_jobs.job_table_label(job_table), kind, params, payload, max_attempts, locale,
    supabase_jobs.owner_for(owner_id), run_at, delay, tags, priority, expire_after, concurrency_key);
end
$$;
comment on function public.job_enqueue is
  'Writes a queued job row and returns it (payload omitted). run_at or delay: not claimable before then. tags: labels to filter by. priority: higher is claimed first. expire_after: closed as failed (expired) if not started that long after its start. Bad input raises 22023 naming the field and writes nothing.';

create or replace function public.job_enqueue_once(
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
  key_ttl interval default '24:00:00'::interval,
  priority integer default null,
  expire_after interval default null,
  concurrency_key text default null
)
returns table (existing boolean, job jsonb)
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  owner uuid := supabase_jobs.owner_for(owner_id);
  found_job supabase_jobs.job;
begin
  if idempotency_key is null or pg_catalog.char_length(idempotency_key) not between 1 and supabase_jobs.idempotency_key_max() then
    perform supabase_jobs.invalid('idempotency_key', pg_catalog.format('idempotency_key is 1 to %s characters', supabase_jobs.idempotency_key_max()));
  end if;
  if key_ttl is null then
    perform supabase_jobs.invalid('key_ttl', 'key_ttl is required: how long the key names its job');
  end if;
  -- Checked before the key is looked up: a bad value is refused even when the key finds a job.
  perform supabase_jobs.check_job_options(null, null, null, '', null, key_ttl);
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
comment on function public.job_enqueue_once is
  'job_enqueue once per idempotency_key, job table and owner: a queued/running job with the key, or one created within key_ttl (default 24 h), is returned (existing = true) instead of a new one. A double click or a retried form post never starts the work twice. Racing calls with one key are serialised.';

create or replace function supabase_jobs.check_item_types(item jsonb, prefix text)
returns void
language plpgsql immutable
set search_path = ''
as $$
declare
  field text;
  v jsonb;
begin
  foreach field in array array['payload', 'locale', 'concurrency_key', 'max_attempts', 'owner_id', 'run_at', 'delay_ms', 'priority',
                               'expire_after_ms', 'tags'] loop
    v := item -> field;
    continue when v is null or pg_catalog.jsonb_typeof(v) = 'null';
    begin
      case field
        when 'payload' then
          if pg_catalog.jsonb_typeof(v) <> 'string' then
            raise exception 'not a string';
          end if;
          perform pg_catalog.decode(item ->> field, 'base64');
        when 'locale', 'concurrency_key' then
          if pg_catalog.jsonb_typeof(v) <> 'string' then
            raise exception 'not a string';
          end if;
        when 'max_attempts', 'priority' then perform (item ->> field)::integer;
        when 'owner_id' then perform (item ->> field)::uuid;
        when 'run_at' then perform (item ->> field)::timestamptz;
        when 'delay_ms', 'expire_after_ms' then
          if pg_catalog.jsonb_typeof(v) <> 'number' or (item ->> field)::numeric % 1 <> 0 then
            raise exception 'not a whole number';
          end if;
        else
          if pg_catalog.jsonb_typeof(v) <> 'array' then
            raise exception 'not an array';
          end if;
          perform array(select pg_catalog.jsonb_array_elements_text(v));
      end case;
    exception when others then
      perform supabase_jobs.invalid(prefix || field, pg_catalog.format('%s is %s; got %s', field,
        case field when 'payload' then 'base64 text' when 'locale' then 'a language tag (text)'
                   when 'concurrency_key' then 'text' when 'owner_id' then 'a user id (a UUID)' when 'run_at' then 'a time'
                   when 'tags' then 'an array of text' when 'delay_ms' then 'a whole number of milliseconds'
                   when 'expire_after_ms' then 'a whole number of milliseconds' else 'an integer' end,
        left(v::text, 80)));
    end;
  end loop;
end
$$;
comment on function supabase_jobs.check_item_types is
  'Raises 22023 naming items[<i>].<field> for the first field of a job_enqueue_many item that is not of its type.';

create or replace function supabase_jobs.name_bad_item(label text, kind text, items jsonb, worker boolean, uid uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
  item record;
  prefix text;
  v jsonb;
  owner uuid;
begin
  if pg_catalog.jsonb_typeof(items) is distinct from 'array' then
    return;  -- job_enqueue_many names items itself
  end if;
  for item in select e.value, e.ordinality - 1 as i from pg_catalog.jsonb_array_elements(items) with ordinality e loop
    v := item.value;
    prefix := pg_catalog.format('items[%s].', item.i);
    perform supabase_jobs.check_item_types(v, prefix);
    perform supabase_jobs.check_job_input(kind, v -> 'params', pg_catalog.decode(v ->> 'payload', 'base64'),
      (v ->> 'max_attempts')::integer, v ->> 'locale', prefix);
    perform supabase_jobs.check_duration(prefix || 'delay_ms', (v ->> 'delay_ms')::numeric);
    perform supabase_jobs.check_job_options(array(select pg_catalog.jsonb_array_elements_text(coalesce(v -> 'tags', '[]'))),
      (v ->> 'priority')::integer, v ->> 'concurrency_key', prefix, null, null);
    perform supabase_jobs.check_duration(prefix || 'expire_after_ms', (v ->> 'expire_after_ms')::numeric, true);
    perform supabase_jobs.start_time((v ->> 'run_at')::timestamptz,
      ((v ->> 'delay_ms')::bigint) * interval '1 millisecond', prefix, 'delay_ms');
    owner := (v ->> 'owner_id')::uuid;
    if not worker and owner is distinct from uid and owner is not null then
      raise exception using errcode = '42501', message = pg_catalog.format('items[%s]: a user can only enqueue jobs of their own', item.i);
    end if;
    if not worker then
      perform supabase_jobs.check_user_priority(label, kind, (v ->> 'priority')::integer, prefix);
    end if;
  end loop;
end
$$;
comment on function supabase_jobs.name_bad_item is
  'The error path of job_enqueue_many: raises 22023 naming items[<i>].<field> for the first bad value of the first bad item (the same checks as job_enqueue: check_job_input, check_job_options, start_time), or 42501 for another user''s owner_id; returns when every item passes.';

create or replace function supabase_jobs.check_enqueue_items(items jsonb)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if items is null or pg_catalog.jsonb_typeof(items) <> 'array' or pg_catalog.jsonb_array_length(items) = 0 then
    perform supabase_jobs.invalid('items', 'items is a non-empty JSON array of {params, payload, max_attempts, locale, owner_id, run_at, delay_ms, tags, idempotency_key, key_ttl_ms}');
  elsif pg_catalog.jsonb_array_length(items) > supabase_jobs.batch_max() then
    perform supabase_jobs.invalid('items', pg_catalog.format('at most %s items per call; got %s', supabase_jobs.batch_max(), pg_catalog.jsonb_array_length(items)));
  end if;
end
$$;
comment on function supabase_jobs.check_enqueue_items is
  'Raises 22023 (DETAIL field=items) unless a batch''s items are a non-empty JSON array of at most batch_max() items: the one shape check of job_enqueue_many and enqueue_keyed.';

create or replace function supabase_jobs.enqueue_keyed(label text, kind text, items jsonb, worker boolean, uid uuid)
returns table (id uuid)
language plpgsql
set search_path = ''
as $$
declare
  item record;
  v jsonb;
  owner uuid;
  item_key text;
  existing_id uuid;
  prefix text;
  dup bigint;
begin
  perform supabase_jobs.check_enqueue_items(items);
  perform supabase_jobs.check_batch_items(items);
  perform supabase_jobs.name_bad_item(label, kind, items, worker, uid);
  for item in select e.value, e.ordinality - 1 as i from pg_catalog.jsonb_array_elements(items) with ordinality e loop
    v := item.value;
    prefix := pg_catalog.format('items[%s].', item.i);
    if pg_catalog.jsonb_typeof(v -> 'idempotency_key') not in ('string', 'null')
       or pg_catalog.char_length(v ->> 'idempotency_key') not between 1 and supabase_jobs.idempotency_key_max() then
      perform supabase_jobs.invalid(prefix || 'idempotency_key',
        pg_catalog.format('idempotency_key is 1 to %s characters', supabase_jobs.idempotency_key_max()));
    end if;
    if pg_catalog.jsonb_typeof(v -> 'key_ttl_ms') not in ('number', 'null') or (v ->> 'key_ttl_ms')::numeric % 1 <> 0 then
      perform supabase_jobs.invalid(prefix || 'key_ttl_ms', pg_catalog.format('key_ttl_ms is a whole number of milliseconds; got %s', v -> 'key_ttl_ms'));
    end if;
  end loop;
  select d.i into dup
    from (select e.ordinality - 1 as i,
                 pg_catalog.row_number() over (partition by e.value ->> 'idempotency_key' order by e.ordinality) as n
            from pg_catalog.jsonb_array_elements(items) with ordinality e
           where e.value ->> 'idempotency_key' is not null) d
   where d.n > 1
   order by d.i
   limit 1;
  if dup is not null then
    perform supabase_jobs.invalid(pg_catalog.format('items[%s].idempotency_key', dup),
      pg_catalog.format('idempotency_key %s names an earlier item too: one key, one job', items -> dup::integer -> 'idempotency_key'));
  end if;
  -- One writer per key at a time, the locks taken in one order (no deadlock between two keyed batches).
  perform pg_catalog.pg_advisory_xact_lock(k.h)
     from (select distinct pg_catalog.hashtextextended('supabase_jobs.key:' || label || ':'
                  || coalesce(case when worker then ((e.value ->> 'owner_id')::uuid)::text else uid::text end, '') || ':'
                  || (e.value ->> 'idempotency_key'), 0) as h
             from pg_catalog.jsonb_array_elements(items) e
            where e.value ->> 'idempotency_key' is not null
            order by 1) k;
  for item in select e.value from pg_catalog.jsonb_array_elements(items) with ordinality e order by e.ordinality loop
    v := item.value;
    owner := case when worker then (v ->> 'owner_id')::uuid else uid end;
    item_key := v ->> 'idempotency_key';
    existing_id := null;
    if item_key is not null then
      select t.id into existing_id
        from supabase_jobs.job t
       where t.job_table = label and t.idempotency_key = item_key and t.owner_id is not distinct from owner
         and (t.status in ('queued', 'running') or t.idempotency_expires_at > now())
       order by t.created_at desc
       limit 1;
    end if;
    if existing_id is null then
      existing_id := (supabase_jobs.insert_job(label, kind, v -> 'params', pg_catalog.decode(v ->> 'payload', 'base64'),
        (v ->> 'max_attempts')::integer, v ->> 'locale', owner, (v ->> 'run_at')::timestamptz,
        ((v ->> 'delay_ms')::bigint) * interval '1 millisecond',
        case when v -> 'tags' is not null and pg_catalog.jsonb_typeof(v -> 'tags') <> 'null'
             then array(select pg_catalog.jsonb_array_elements_text(v -> 'tags')) end,
        (v ->> 'priority')::integer, ((v ->> 'expire_after_ms')::bigint) * interval '1 millisecond', v ->> 'concurrency_key',
        item_key, case when item_key is not null
                       then coalesce(((v ->> 'key_ttl_ms')::bigint) * interval '1 millisecond', interval '24 hours') end)).id;
    end if;
    id := existing_id;
    return next;
  end loop;
end
$$;
comment on function supabase_jobs.enqueue_keyed is
  'job_enqueue_many''s path for a batch where some item carries an idempotency_key: each keyed item is written once per key, table and owner (a queued/running job with the key, or one created within key_ttl_ms, default 24 h, answers with its id instead of a new job), as job_enqueue_once does; items checked as job_enqueue_many checks them; ids in the items'' order.';

create or replace function public.job_enqueue_many(kind text, items jsonb, job_table text default 'jobs')
returns table (id uuid)
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  item record;
  worker boolean := supabase_jobs.is_worker();
  uid uuid := (select auth.uid());
  max_ms bigint := supabase_jobs.duration_max_ms();
  span interval := supabase_jobs.duration_max_ms() * interval '1 millisecond';
begin
  perform supabase_jobs.check_enqueue_items(items);
  perform supabase_jobs.check_job_input(kind, null, null, null, null);
  if exists (select 1 from pg_catalog.jsonb_array_elements(items) e
              where pg_catalog.jsonb_typeof(e.value) = 'object' and e.value ->> 'idempotency_key' is not null) then
    return query select k.id from supabase_jobs.enqueue_keyed(label, kind, items, worker, uid) k;
    return;
  end if;
  begin
    -- One pass over the items: each read once into a typed record
    -- (jsonb_to_recordset), each optional field computed only when given. What the
    -- row rules do not refuse (another user as owner, a negative delay, an expiry
    -- not after the start, a tag's length) stops the statement in its WHERE; the
    -- handler below then names the item. Only the ids come back, in the items'
    -- order: the rows are inserted as jsonb_to_recordset yields them (a function
    -- scan behind OFFSET 0, nothing to reorder them), so no sort is asked for.
    return query
    with added as (
      insert into supabase_jobs.job as t (job_table, kind, params, payload, max_attempts, locale, owner_id, available_at, tags, priority, expires_at, concurrency_key)
      select label, kind, coalesce(e.params, '{}'::jsonb),
             case when e.payload is not null then pg_catalog.decode(e.payload #>> '{}', 'base64') end,
             coalesce(e.max_attempts, supabase_jobs.max_attempts_default()),
             e.locale #>> '{}',
             case when worker then e.owner_id else uid end,
             e.starts,
             coalesce(e.tags, '{}'),
             coalesce(e.priority, 0),
             case when e.expire_after_ms is not null then e.starts + e.expire_after_ms * interval '1 millisecond' end,
             e.concurrency_key #>> '{}'
        from (select r.*, case when r.run_at is not null then r.run_at
                               when r.delay_ms is not null then now() + r.delay_ms * interval '1 millisecond'
                               else now() end as starts
                from rows from (pg_catalog.jsonb_to_recordset(items) as (params jsonb, payload jsonb, max_attempts integer,
                       locale jsonb, owner_id uuid, run_at timestamptz, delay_ms bigint, tags text[], priority smallint,
                       expire_after_ms bigint, concurrency_key jsonb)) as r
               offset 0) as e
       where ((e.owner_id is not null and not worker and e.owner_id is distinct from uid)
              or pg_catalog.jsonb_typeof(e.payload) <> 'string'
              or pg_catalog.jsonb_typeof(e.locale) <> 'string' or pg_catalog.jsonb_typeof(e.concurrency_key) <> 'string'
              or e.delay_ms < 0 or e.delay_ms > max_ms or e.expire_after_ms <= 0 or e.expire_after_ms > max_ms
              or (e.run_at is not null and (e.delay_ms is not null or not pg_catalog.isfinite(e.run_at)
                                            or e.run_at not between now() - span and now() + span))
              or (e.tags is not null and exists (
                    select 1 from pg_catalog.unnest(e.tags) g(tag)
                     where pg_catalog.char_length(g.tag) not between 1 and supabase_jobs.tag_max_length()))) is not true
          or supabase_jobs.invalid('items', 'an item is out of range') is not null
      returning t.id)
    select added.id from added;
  exception when others then
    -- All or nothing: name the first bad item and its field, else the statement's own error.
    perform supabase_jobs.check_batch_items(items);
    perform supabase_jobs.name_bad_item(label, kind, items, worker, uid);
    raise;
  end;
end
$$;
comment on function public.job_enqueue_many is
  'Writes many queued jobs of one kind in one statement (all or nothing) and returns their ids (column id), in the order of the items. Items: {params, payload (base64), max_attempts, locale, owner_id, run_at, delay_ms, tags, priority, expire_after_ms, concurrency_key, idempotency_key, key_ttl_ms}. An item with an idempotency_key is written once per key (as job_enqueue_once): a batch sent again answers with the same ids and writes nothing new. A bad item raises 22023 naming it (DETAIL field=items[<i>].<field>) and writes nothing.';

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.insert_job, public.job_enqueue, public.job_enqueue_once, supabase_jobs.check_item_types,
  supabase_jobs.name_bad_item, supabase_jobs.check_enqueue_items, supabase_jobs.enqueue_keyed, public.job_enqueue_many
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  supabase_jobs.insert_job, public.job_enqueue, public.job_enqueue_once, supabase_jobs.check_item_types,
  supabase_jobs.name_bad_item, supabase_jobs.check_enqueue_items, supabase_jobs.enqueue_keyed, public.job_enqueue_many
  to authenticated, service_role;
