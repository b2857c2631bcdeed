-- The documented input limits, written once, and the checks every entry point
-- shares. Each limit is an immutable function returning a constant;
-- supabase_jobs.job_limits() gathers them for TypeScript
-- (src/lib/internal/limits.ts) and the tests. The checks raise 22023 with the
-- field named (supabase_jobs.invalid), so a caller learns which input to fix.

create type supabase_jobs.job_limit_values as (
  kind_max int,
  params_max_bytes int,
  payload_max_bytes int,
  error_max int,
  stage_max int,
  max_attempts_max int,
  max_attempts_default int,
  list_max int,
  batch_max int,
  duration_max_ms bigint,
  priority_min int,
  priority_max int
);
comment on type supabase_jobs.job_limit_values is
  'The documented input limits (see supabase_jobs.job_limits()).';

create or replace function supabase_jobs.kind_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 64; end $$;

create or replace function supabase_jobs.params_max_bytes()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 65536; end $$;

create or replace function supabase_jobs.payload_max_bytes()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 10485760; end $$;

create or replace function supabase_jobs.error_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 2000; end $$;

create or replace function supabase_jobs.stage_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 200; end $$;

create or replace function supabase_jobs.metadata_max_bytes()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 16384; end $$;

create or replace function supabase_jobs.max_attempts_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 100; end $$;

create or replace function supabase_jobs.max_attempts_default()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 3; end $$;

create or replace function supabase_jobs.list_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 1000; end $$;

create or replace function supabase_jobs.batch_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 5000; end $$;

-- Delays, expiries and key lifetimes are at most ten years (3650 days), and a
-- run_at lies within that of now: every time a job row holds then stays in
-- the range a JavaScript Date (and every other client) reads back.
create or replace function supabase_jobs.duration_max_ms()
returns bigint
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 315360000000; end $$;
comment on function supabase_jobs.duration_max_ms is
  'The longest delay, expire_after and key_ttl (3650 days, in milliseconds); a run_at lies at most this far from now, either side.';

create or replace function supabase_jobs.priority_min()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return -32768; end $$;

create or replace function supabase_jobs.priority_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 32767; end $$;
comment on function supabase_jobs.priority_max is
  'The priority column is a smallint (priority_min() .. priority_max()); what a user may choose is narrower, per kind (supabase_jobs.job_kinds.user_priority_min / user_priority_max).';

create or replace function supabase_jobs.heartbeat_ms_min()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 10; end $$;

create or replace function supabase_jobs.heartbeat_ms_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 3600000; end $$;

create or replace function supabase_jobs.missed_beats()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 3; end $$;
comment on function supabase_jobs.missed_beats is
  'Beats in a row a worker may miss before its running job is reclaimed (job_reclaim_silent).';

create or replace function supabase_jobs.tags_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 10; end $$;

create or replace function supabase_jobs.tag_max_length()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 64; end $$;

create or replace function supabase_jobs.idempotency_key_max()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 200; end $$;

create or replace function supabase_jobs.kind_pattern()
returns text
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return '^[A-Za-z0-9][A-Za-z0-9_.:/-]*$'; end $$;

create or replace function supabase_jobs.locale_pattern()
returns text
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$'; end $$;

create or replace function supabase_jobs.job_limits()
returns supabase_jobs.job_limit_values
language sql immutable parallel safe
set search_path = ''
as $$
  select row(supabase_jobs.kind_max(), supabase_jobs.params_max_bytes(), supabase_jobs.payload_max_bytes(),
             supabase_jobs.error_max(), supabase_jobs.stage_max(), supabase_jobs.max_attempts_max(),
             supabase_jobs.max_attempts_default(), supabase_jobs.list_max(), supabase_jobs.batch_max(),
             supabase_jobs.duration_max_ms(), supabase_jobs.priority_min(), supabase_jobs.priority_max())::supabase_jobs.job_limit_values
$$;
comment on function supabase_jobs.job_limits is
  'Every documented limit in one row: kind <= 64 chars, params <= 64 KiB of JSON, payload <= 10 MiB, error <= 2000 chars, stage <= 200 chars, max_attempts 1..100 (default 3), list limit <= 1000, batch <= 5000 items, delays / expiries / key TTLs <= 3650 days and run_at within 3650 days of now, priority -32768..32767 (a user: the kind''s user_priority_min..user_priority_max). Each is its own function (supabase_jobs.kind_max() ...): the input checks call them, and the CHECKs were written from them.';

create or replace function supabase_jobs.limits()
returns table (kind_max integer, params_max_bytes integer, payload_max_bytes integer, error_max integer, stage_max integer, max_attempts_max integer, list_max integer,
               duration_max_ms bigint, priority_min integer, priority_max integer)
language sql immutable parallel safe
set search_path = ''
as $$
  select l.kind_max, l.params_max_bytes, l.payload_max_bytes, l.error_max, l.stage_max, l.max_attempts_max, l.list_max,
         l.duration_max_ms, l.priority_min, l.priority_max
  from supabase_jobs.job_limits() l
$$;
comment on function supabase_jobs.limits is
  'Documented input limits: kind <= 64 chars, params <= 64 KiB of JSON, payload <= 10 MiB, error <= 2000 chars, stage <= 200 chars, max_attempts <= 100, list limit <= 1000, delays / expiries / key TTLs <= duration_max_ms (3650 days) and run_at within it of now, priority priority_min..priority_max (a user: the kind''s own range).';

create or replace function supabase_jobs.invalid(field text, message text)
returns void
language plpgsql
set search_path = ''
as $$
begin
  raise exception using errcode = '22023', message = message, detail = 'field=' || field,
    hint = 'Nothing was written.';
end
$$;

create or replace function supabase_jobs.sentence(value text)
returns text
language plpgsql immutable parallel safe
set search_path = ''
as $$
begin
  return case when char_length(value) <= supabase_jobs.error_max() then value
    else left(value, supabase_jobs.error_max() - 1) || '…' end;
end
$$;

create or replace function supabase_jobs.user_message(key text, locale text, n integer default null)
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
        when 'question_unanswered' then 'A pergunta ficou sem resposta até o prazo, então o trabalho parou. Tente novamente.'
        else key
      end
    else
      case key
        when 'worker_lost' then format('The work stopped unexpectedly %s time(s) and could not finish. Please try again later.', n)
        when 'cancelled' then 'Cancelled at the user''s request.'
        when 'expired' then 'It expired before it could start. Please try again.'
        when 'question_unanswered' then 'The question was not answered in time, so the work stopped. Please try again.'
        else key
      end
  end
$$;
comment on function supabase_jobs.user_message is
  'The sentences the database itself writes into error (en and pt-BR; pt* locales get pt-BR, anything else English).';

create or replace function supabase_jobs.kind_is_valid(kind text)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return kind ~ supabase_jobs.kind_pattern() and char_length(kind) <= supabase_jobs.kind_max(); end $$;

create or replace function supabase_jobs.locale_is_valid(locale text)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return locale ~ supabase_jobs.locale_pattern(); end $$;

create or replace function supabase_jobs.require_id(id uuid)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if id is null then
    perform supabase_jobs.invalid('id', 'id is required');
  end if;
end
$$;

create or replace function supabase_jobs.check_attempt(attempt integer)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if attempt is not null and attempt < 1 then
    perform supabase_jobs.invalid('attempt', pg_catalog.format('attempt counts from 1; got %s', attempt));
  end if;
end
$$;

create or replace function supabase_jobs.check_heartbeat_ms(heartbeat_ms integer)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if heartbeat_ms is not null and heartbeat_ms not between supabase_jobs.heartbeat_ms_min() and supabase_jobs.heartbeat_ms_max() then
    perform supabase_jobs.invalid('heartbeat_ms', pg_catalog.format('heartbeat_ms is between %s and %s milliseconds; got %s',
      supabase_jobs.heartbeat_ms_min(), supabase_jobs.heartbeat_ms_max(), heartbeat_ms));
  end if;
end
$$;

create or replace function supabase_jobs.check_timings(timings jsonb)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if timings is not null and jsonb_typeof(timings) <> 'object' then
    perform supabase_jobs.invalid('timings', 'timings must be a JSON object of phase -> {seconds, size}');
  end if;
end
$$;

create or replace function supabase_jobs.check_tags(tags text[], prefix text default '')
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

create or replace function supabase_jobs.check_duration(field text, ms numeric, positive boolean default false)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if ms is not null and (ms < 0 or (positive and ms = 0) or ms > supabase_jobs.duration_max_ms()) then
    perform supabase_jobs.invalid(field, pg_catalog.format('%s is %s 3650 days (%s ms); got %s ms', pg_catalog.regexp_replace(field, '^.*\.', ''),
      case when positive then 'more than 0 and at most' else '0 to' end, supabase_jobs.duration_max_ms(), ms));
  end if;
end
$$;
comment on function supabase_jobs.check_duration is
  'Raises 22023 naming field when a delay, expiry or key TTL (in milliseconds) is negative (or zero when positive), or longer than duration_max_ms().';

create or replace function supabase_jobs.start_time(run_at timestamptz, delay interval, prefix text default '', delay_field text default 'delay')
returns timestamptz
language plpgsql stable
set search_path = ''
as $$
declare
  window_ms interval := supabase_jobs.duration_max_ms() * interval '1 millisecond';
begin
  if run_at is not null and delay is not null then
    perform supabase_jobs.invalid(prefix || 'run_at', pg_catalog.format('give run_at or %s, not both', delay_field));
  end if;
  if delay is not null then
    perform supabase_jobs.check_duration(prefix || delay_field, extract(epoch from delay) * 1000);
  end if;
  if run_at is not null and (not pg_catalog.isfinite(run_at) or run_at not between now() - window_ms and now() + window_ms) then
    perform supabase_jobs.invalid(prefix || 'run_at', pg_catalog.format('run_at is a finite time within 3650 days of now; got %s', run_at));
  end if;
  return coalesce(run_at, now() + delay, now());
end
$$;
comment on function supabase_jobs.start_time is
  'When a job starts: run_at, now() + delay, or now(). Raises 22023 for both given, a delay outside 0..duration_max_ms(), a run_at not finite or farther than duration_max_ms() from now.';

create or replace function supabase_jobs.check_job_options(
  tags text[],
  priority integer,
  concurrency_key text,
  prefix text default '',
  expire_after interval default null,
  key_ttl interval default null,
  expire_field text default 'expire_after'
)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if tags is not null then
    perform supabase_jobs.check_tags(tags, prefix);
  end if;
  -- The column is a smallint: out of its range is the caller's input to fix, not a 22003.
  if priority is not null and priority not between supabase_jobs.priority_min() and supabase_jobs.priority_max() then
    perform supabase_jobs.invalid(prefix || 'priority', pg_catalog.format('priority is an integer from %s to %s; got %s',
      supabase_jobs.priority_min(), supabase_jobs.priority_max(), priority));
  end if;
  if concurrency_key is not null and pg_catalog.char_length(concurrency_key) not between 1 and supabase_jobs.idempotency_key_max() then
    perform supabase_jobs.invalid(prefix || 'concurrency_key', pg_catalog.format('concurrency_key is 1 to %s characters', supabase_jobs.idempotency_key_max()));
  end if;
  if expire_after is not null then
    perform supabase_jobs.check_duration(prefix || expire_field, extract(epoch from expire_after) * 1000, true);
  end if;
  if key_ttl is not null then
    perform supabase_jobs.check_duration(prefix || 'key_ttl', extract(epoch from key_ttl) * 1000);
  end if;
end
$$;
comment on function supabase_jobs.check_job_options is
  'The options every enqueue path shares (job_enqueue, job_enqueue_once, each item of job_enqueue_many, job_enqueue_child): tags, priority in the smallint range, concurrency_key length, expire_after and key_ttl within duration_max_ms() (the start: supabase_jobs.start_time). Raises 22023 naming the field (with prefix, e.g. items[2].). A user''s priority is bounded further by the kind (supabase_jobs.check_user_priority).';

create or replace function supabase_jobs.check_job_input(
  kind text,
  params jsonb,
  payload bytea,
  max_attempts integer,
  locale text,
  prefix text default ''
)
returns void
language plpgsql stable
set search_path = ''
as $$
declare
begin
  if kind is null or kind = '' then
    perform supabase_jobs.invalid(prefix || 'kind', 'kind is required');
  elsif char_length(kind) > supabase_jobs.kind_max() then
    perform supabase_jobs.invalid(prefix || 'kind', pg_catalog.format('kind is at most %s characters; got %s', supabase_jobs.kind_max(), char_length(kind)));
  elsif not supabase_jobs.kind_is_valid(kind) then
    perform supabase_jobs.invalid(prefix || 'kind', pg_catalog.format('kind may use letters, digits and _ . : / - (starting with a letter or digit); got %L', left(kind, 80)));
  end if;
  if params is not null and pg_catalog.jsonb_typeof(params) <> 'object' then
    perform supabase_jobs.invalid(prefix || 'params', pg_catalog.format('params must be a JSON object; got a JSON %s', pg_catalog.jsonb_typeof(params)));
  elsif params is not null and octet_length(params::text) > supabase_jobs.params_max_bytes() then
    perform supabase_jobs.invalid(prefix || 'params', pg_catalog.format('params is at most %s bytes of JSON; got %s (put large input in payload)', supabase_jobs.params_max_bytes(), octet_length(params::text)));
  end if;
  if payload is not null and octet_length(payload) > supabase_jobs.payload_max_bytes() then
    perform supabase_jobs.invalid(prefix || 'payload', pg_catalog.format('payload is at most %s bytes; got %s', supabase_jobs.payload_max_bytes(), octet_length(payload)));
  end if;
  if max_attempts is not null and (max_attempts < 1 or max_attempts > supabase_jobs.max_attempts_max()) then
    perform supabase_jobs.invalid(prefix || 'max_attempts', pg_catalog.format('max_attempts is between 1 and %s; got %s', supabase_jobs.max_attempts_max(), max_attempts));
  end if;
  if locale is not null and not supabase_jobs.locale_is_valid(locale) then
    perform supabase_jobs.invalid(prefix || 'locale', pg_catalog.format('locale must be a language tag like en or pt-BR; got %L', left(locale, 40)));
  end if;
end
$$;

create or replace function supabase_jobs.check_batch_items(items jsonb)
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
comment on function supabase_jobs.check_batch_items is
  'Raises 22023 (DETAIL field=items[<i>]) for the first item of a batch that is not a JSON object.';

create or replace function supabase_jobs.check_call(
  id uuid,
  attempt integer default null,
  error text default null,
  error_required boolean default false,
  timings jsonb default null
)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if id is null then
    perform supabase_jobs.invalid('id', 'id is required');
  end if;
  perform supabase_jobs.check_attempt(attempt);
  if error_required and (error is null or error ~ '^[[:space:]]*$') then
    perform supabase_jobs.invalid('error', 'error is required: say why the job stopped, in a sentence for the user');
  end if;
  if timings is not null and pg_catalog.jsonb_typeof(timings) <> 'object' then
    perform supabase_jobs.invalid('timings', 'timings must be a JSON object of phase -> {seconds, size}');
  end if;
end
$$;

-- Security: the limits' type is read by everyone who calls job_limits.
grant usage on type supabase_jobs.job_limit_values to authenticated, service_role;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.kind_max, supabase_jobs.params_max_bytes, supabase_jobs.payload_max_bytes,
  supabase_jobs.error_max, supabase_jobs.stage_max, supabase_jobs.max_attempts_max,
  supabase_jobs.max_attempts_default, supabase_jobs.list_max, supabase_jobs.batch_max,
  supabase_jobs.duration_max_ms, supabase_jobs.priority_min, supabase_jobs.priority_max,
  supabase_jobs.heartbeat_ms_min, supabase_jobs.heartbeat_ms_max, supabase_jobs.missed_beats,
  supabase_jobs.tags_max, supabase_jobs.tag_max_length, supabase_jobs.idempotency_key_max,
  supabase_jobs.kind_pattern, supabase_jobs.locale_pattern, supabase_jobs.job_limits, supabase_jobs.limits,
  supabase_jobs.invalid, supabase_jobs.sentence, supabase_jobs.user_message, supabase_jobs.kind_is_valid,
  supabase_jobs.locale_is_valid, supabase_jobs.require_id, supabase_jobs.check_attempt,
  supabase_jobs.check_heartbeat_ms, supabase_jobs.check_timings, supabase_jobs.check_tags,
  supabase_jobs.check_duration, supabase_jobs.start_time, supabase_jobs.check_job_options,
  supabase_jobs.check_job_input, supabase_jobs.check_batch_items, supabase_jobs.check_call
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  supabase_jobs.kind_max, supabase_jobs.params_max_bytes, supabase_jobs.payload_max_bytes,
  supabase_jobs.error_max, supabase_jobs.stage_max, supabase_jobs.max_attempts_max,
  supabase_jobs.max_attempts_default, supabase_jobs.list_max, supabase_jobs.batch_max,
  supabase_jobs.duration_max_ms, supabase_jobs.priority_min, supabase_jobs.priority_max,
  supabase_jobs.heartbeat_ms_min, supabase_jobs.heartbeat_ms_max, supabase_jobs.missed_beats,
  supabase_jobs.tags_max, supabase_jobs.tag_max_length, supabase_jobs.idempotency_key_max,
  supabase_jobs.kind_pattern, supabase_jobs.locale_pattern, supabase_jobs.job_limits, supabase_jobs.limits,
  supabase_jobs.invalid, supabase_jobs.sentence, supabase_jobs.user_message, supabase_jobs.kind_is_valid,
  supabase_jobs.locale_is_valid, supabase_jobs.require_id, supabase_jobs.check_attempt,
  supabase_jobs.check_timings, supabase_jobs.check_tags, supabase_jobs.check_duration,
  supabase_jobs.start_time, supabase_jobs.check_job_options, supabase_jobs.check_job_input,
  supabase_jobs.check_batch_items, supabase_jobs.check_call
  to authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.check_heartbeat_ms
  to service_role;
