-- supabase-jobs — every item of a batch is a JSON object, checked before anything is written.
--
-- Purpose: job_enqueue_many looked at an item's type only after the insert had
-- failed, to name the bad item. An item that is not an object ([[...]], 42,
-- "x") does not make the insert fail: `->` on it is null, so it was enqueued
-- as a job with default everything. job_succeed_many let PostgreSQL's
-- jsonb_to_recordset refuse such an item, without naming it. Found by the
-- bad-input sweep (test/chaos/bad-input.test.ts).
--
-- Invariant: a batch holding an item that is not a JSON object raises 22023
-- with DETAIL field=items[<i>] (the first such item, 0-based) and writes
-- nothing. The check is written once, in supabase_jobs.check_batch_items.
--
-- Breaks nothing: both functions are restated with the same signatures,
-- grants, search_path and plan_cache_mode; job_enqueue_many's per-item
-- diagnosis no longer repeats the object check (done up front now).

create function supabase_jobs.check_batch_items(items jsonb)
returns void
language plpgsql immutable
set search_path = ''
as $$
declare
  bad bigint;
begin
  if pg_catalog.jsonb_typeof(items) <> 'array' then
    return;
  end if;
  select e.ordinality - 1 into bad
    from pg_catalog.jsonb_array_elements(items) with ordinality e
   where pg_catalog.jsonb_typeof(e.value) <> 'object'
   order by e.ordinality limit 1;
  if bad is not null then
    perform supabase_jobs.invalid(pg_catalog.format('items[%s]', bad),
      pg_catalog.format('items[%s] is a JSON %s; each item is a JSON object', bad,
        pg_catalog.jsonb_typeof(items -> bad::integer)));
  end if;
end
$$;
revoke all on function supabase_jobs.check_batch_items(jsonb) from public, anon;
grant execute on function supabase_jobs.check_batch_items(jsonb) to authenticated, service_role;
comment on function supabase_jobs.check_batch_items(jsonb) is
  'Raises 22023 (DETAIL field=items[<i>]) for the first item of a batch that is not a JSON object.';

create or replace function public.job_enqueue_many(kind text, items jsonb, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
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
  perform supabase_jobs.check_batch_items(items);
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

create or replace function public.job_succeed_many(items jsonb, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if items is null or pg_catalog.jsonb_typeof(items) <> 'array' then
    perform supabase_jobs.invalid('items', 'items is a JSON array of {id, attempt, result_id, timings}');
  elsif pg_catalog.jsonb_array_length(items) > supabase_jobs.batch_max() then
    perform supabase_jobs.invalid('items', pg_catalog.format('at most %s items per call', supabase_jobs.batch_max()));
  end if;
  perform supabase_jobs.check_batch_items(items);
  return query
  with wanted as (
    select w.id, w.attempt, w.result_id, w.timings
      from pg_catalog.jsonb_to_recordset(items) as w(id uuid, attempt integer, result_id uuid, timings jsonb)
     where w.id is not null),
  closed as (
    update supabase_jobs.job as t
       set status = 'done', result_id = w.result_id,
           timings = case when pg_catalog.jsonb_typeof(w.timings) = 'object' then w.timings else t.timings end
      from wanted w
     where t.job_table = label and t.id = w.id and t.status = 'running' and (w.attempt is null or t.attempts = w.attempt)
    returning t.*)
  -- done rows hold no payload (CHECK job_terminal_has_no_payload): returned as they are.
  select c.* from closed as c;
end
$$;
