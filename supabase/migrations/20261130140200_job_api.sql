-- supabase-jobs 0003 — the job API: one SQL function per transition.
--
-- Purpose: the seed's JobStore as SQL, callable through PostgREST (supabase-js
-- .rpc) and directly (postgres.js). Every function is SECURITY INVOKER with a
-- fixed search_path and takes a trailing job_table (default 'jobs'), resolved
-- against the registry before any dynamic SQL.
-- Invariants:
--   * every transition is a compare-and-set on the from-state in ONE statement:
--     two workers racing claim cannot both win; a reclaim never overwrites a job
--     that finished (or ticked) after the scan (compare on status AND attempts);
--   * succeed/fail refuse a terminal row: PT410 when it was cancelled, PT409
--     otherwise (also when another attempt now owns the job); PT404 when absent;
--     55000 when it is still queued;
--   * cancel is idempotent: no row back when there is nothing to stop;
--   * tick writes progress/stage/heartbeat and returns the status in one call,
--     so a worker learns of a cancellation in the same round trip;
--   * bad input raises 22023 naming the field (DETAIL 'field=<name>') and writes nothing.
-- Grants: authenticated may enqueue, cancel, get and list (own rows, via RLS);
-- the worker operations are for service_role only. anon may call nothing.
-- Breaking: no (new objects only).

-- Explains why a compare-and-set found no row, with the SQLSTATE the adapters map.
create function supabase_jobs.raise_not_closable(tbl regclass, job_id uuid, expected_attempt int, action text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  found_status public.job_status;
  found_attempts int;
begin
  execute format('select status, attempts from %s where id = $1', tbl) into found_status, found_attempts using job_id;
  if found_status is null then
    raise exception using errcode = 'PT404', message = format('job %s not found', job_id);
  elsif found_status = 'cancelled' then
    raise exception using errcode = 'PT410', message = format('job %s was cancelled; cannot %s it', job_id, action),
      hint = 'The system did what it was told: log it and move on.';
  elsif supabase_jobs.is_terminal(found_status) then
    raise exception using errcode = 'PT409', message = format('job %s is already %s; cannot %s it', job_id, found_status, action),
      hint = 'Two workers believe this job is theirs.';
  elsif found_status = 'queued' and expected_attempt is not null then
    raise exception using errcode = 'PT409',
      message = format('job %s was reclaimed and is queued again; attempt %s cannot %s it', job_id, expected_attempt, action),
      hint = 'Two workers believe this job is theirs.';
  elsif found_status = 'queued' then
    raise exception using errcode = '55000', message = format('job %s is queued, not running; claim it before you %s it', job_id, action);
  elsif expected_attempt is not null and found_attempts <> expected_attempt then
    raise exception using errcode = 'PT409',
      message = format('job %s was reclaimed: attempt %s now owns it, not attempt %s; cannot %s it', job_id, found_attempts, expected_attempt, action),
      hint = 'Two workers believe this job is theirs.';
  else
    raise exception using errcode = 'PT409', message = format('job %s changed while it was being %s', job_id, action);
  end if;
end
$$;
revoke all on function supabase_jobs.raise_not_closable(regclass, uuid, int, text) from public;
grant execute on function supabase_jobs.raise_not_closable(regclass, uuid, int, text) to authenticated, service_role;

create function supabase_jobs.require_id(id uuid)
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
revoke all on function supabase_jobs.require_id(uuid) from public;
grant execute on function supabase_jobs.require_id(uuid) to authenticated, service_role;

create function supabase_jobs.check_attempt(attempt int)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if attempt is not null and attempt < 1 then
    perform supabase_jobs.invalid('attempt', format('attempt counts from 1; got %s', attempt));
  end if;
end
$$;
revoke all on function supabase_jobs.check_attempt(int) from public;
grant execute on function supabase_jobs.check_attempt(int) to authenticated, service_role;

-- A sentence for the user (error, reason): present when required, never over the limit.
create function supabase_jobs.check_sentence(field text, value text, required boolean)
returns void
language plpgsql stable
set search_path = ''
as $$
declare
  max_len int := (select l.error_max from supabase_jobs.limits() l);
begin
  if required and (value is null or btrim(value) = '') then
    perform supabase_jobs.invalid(field, format('%s is required: say why the job stopped, in a sentence for the user', field));
  elsif value is not null and char_length(value) > max_len then
    perform supabase_jobs.invalid(field, format('%s is at most %s characters', field, max_len));
  end if;
end
$$;
revoke all on function supabase_jobs.check_sentence(text, text, boolean) from public;
grant execute on function supabase_jobs.check_sentence(text, text, boolean) to authenticated, service_role;

create function supabase_jobs.check_timings(timings jsonb)
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
revoke all on function supabase_jobs.check_timings(jsonb) from public;
grant execute on function supabase_jobs.check_timings(jsonb) to authenticated, service_role;

-- ---------------------------------------------------------------------------
create function public.job_enqueue(
  kind text,
  params jsonb default '{}'::jsonb,
  payload bytea default null,
  max_attempts integer default null,
  locale text default null,
  owner_id uuid default null,
  job_table text default 'jobs'
)
returns public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  lim record := (select l from supabase_jobs.limits() l);
  cols text := 'kind, params';
  vals text := '$1, $2';
  result public.jobs;
begin
  if kind is null or kind = '' then
    perform supabase_jobs.invalid('kind', 'kind is required');
  elsif char_length(kind) > lim.kind_max then
    perform supabase_jobs.invalid('kind', format('kind is at most %s characters; got %s', lim.kind_max, char_length(kind)));
  elsif kind !~ '^[A-Za-z0-9][A-Za-z0-9_.:/-]*$' then
    perform supabase_jobs.invalid('kind', format('kind may use letters, digits and _ . : / - (starting with a letter or digit); got %L', left(kind, 80)));
  end if;
  params := coalesce(params, '{}'::jsonb);
  if jsonb_typeof(params) <> 'object' then
    perform supabase_jobs.invalid('params', format('params must be a JSON object; got a JSON %s', jsonb_typeof(params)));
  elsif octet_length(params::text) > lim.params_max_bytes then
    perform supabase_jobs.invalid('params', format('params is at most %s bytes of JSON; got %s (put large input in payload)', lim.params_max_bytes, octet_length(params::text)));
  end if;
  if payload is not null and octet_length(payload) > lim.payload_max_bytes then
    perform supabase_jobs.invalid('payload', format('payload is at most %s bytes; got %s', lim.payload_max_bytes, octet_length(payload)));
  end if;
  if max_attempts is not null and (max_attempts < 1 or max_attempts > lim.max_attempts_max) then
    perform supabase_jobs.invalid('max_attempts', format('max_attempts is between 1 and %s; got %s', lim.max_attempts_max, max_attempts));
  end if;
  if locale is not null and locale !~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$' then
    perform supabase_jobs.invalid('locale', format('locale must be a language tag like en or pt-BR; got %L', left(locale, 40)));
  end if;
  if owner_id is not null then
    if current_user in ('anon', 'authenticated') and owner_id is distinct from (select auth.uid()) then
      raise exception using errcode = '42501', message = 'a user can only enqueue jobs of their own';
    end if;
    if current_user not in ('anon', 'authenticated') then
      cols := cols || ', owner_id';
      vals := vals || ', $6';
    end if;
  end if;
  if payload is not null then cols := cols || ', payload'; vals := vals || ', $3'; end if;
  if max_attempts is not null then cols := cols || ', max_attempts'; vals := vals || ', $4'; end if;
  if locale is not null then cols := cols || ', locale'; vals := vals || ', $5'; end if;

  execute format('insert into %s as t (%s) values (%s) returning %s', tbl, cols, vals, supabase_jobs.select_list('t', false))
    into result
    using kind, params, payload, max_attempts, locale, owner_id;
  return result;
end
$$;
comment on function public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text) is
  'Writes a queued job row and returns it (payload omitted). Bad input raises 22023 naming the field and writes nothing.';

create function public.job_claim(id uuid, job_table text default 'jobs')
returns setof public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
begin
  perform supabase_jobs.require_id(id);
  return query execute format(
    'update %s as t set status = ''running'', attempts = t.attempts + 1
       where t.id = $1 and t.status = ''queued'' and t.available_at <= now() and t.attempts < t.max_attempts
     returning %s', tbl, supabase_jobs.select_list('t', true))
    using id;
end
$$;
comment on function public.job_claim(uuid, text) is
  'queued -> running for one job, returning the row with its payload; no row when the job is not yours to run (claimed by another worker, unknown, not yet available).';

create function public.job_claim_next(kinds text[] default null, "limit" integer default 1, job_table text default 'jobs')
returns setof public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
begin
  if "limit" is null or "limit" < 1 or "limit" > (select l.list_max from supabase_jobs.limits() l) then
    perform supabase_jobs.invalid('limit', format('limit is between 1 and %s; got %s', (select l.list_max from supabase_jobs.limits() l), "limit"));
  end if;
  return query execute format(
    'with next as (
       select n.id from %1$s as n
        where n.status = ''queued'' and n.available_at <= now() and n.attempts < n.max_attempts
          and ($1::text[] is null or n.kind = any($1))
        order by n.available_at, n.created_at, n.id
        limit $2
        for update skip locked)
     update %1$s as t set status = ''running'', attempts = t.attempts + 1
       from next where t.id = next.id
     returning %2$s', tbl, supabase_jobs.select_list('t', true))
    using kinds, "limit";
end
$$;
comment on function public.job_claim_next(text[], integer, text) is
  'Claims up to limit queued jobs of the given kinds (all kinds when null), oldest first, skipping rows other workers hold (FOR UPDATE SKIP LOCKED).';

create function public.job_tick(id uuid, progress real default null, stage text default null, attempt integer default null, job_table text default 'jobs')
returns public.job_status
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  updated public.job_status;
  current_status public.job_status;
  current_attempts int;
begin
  perform supabase_jobs.require_id(id);
  perform supabase_jobs.check_attempt(attempt);
  if progress is not null and (progress = 'NaN'::real or progress < 0 or progress > 100) then
    perform supabase_jobs.invalid('progress', format('progress is a percentage between 0 and 100; got %s', progress));
  end if;
  if stage is not null and char_length(stage) > (select l.stage_max from supabase_jobs.limits() l) then
    perform supabase_jobs.invalid('stage', format('stage is at most %s characters', (select l.stage_max from supabase_jobs.limits() l)));
  end if;
  -- Progress never decreases within an attempt: greatest() keeps the bar honest
  -- even when two ticks arrive out of order.
  execute format(
    'update %s as t set progress = greatest(t.progress, coalesce($2, t.progress)), stage = coalesce($3, t.stage), heartbeat_at = now()
      where t.id = $1 and t.status = ''running'' and ($4::int is null or t.attempts = $4)
     returning t.status', tbl)
    into updated using id, progress, stage, attempt;
  if updated is not null then
    return updated;
  end if;
  execute format('select status, attempts from %s where id = $1', tbl) into current_status, current_attempts using id;
  if current_status is null then
    raise exception using errcode = 'PT404', message = format('job %s not found', id);
  elsif current_status = 'running' and attempt is not null and current_attempts <> attempt then
    perform supabase_jobs.raise_not_closable(tbl, id, attempt, 'tick');
  elsif current_status = 'queued' then
    -- Reclaimed after this worker went quiet: it is no longer this worker's job.
    if attempt is not null then
      perform supabase_jobs.raise_not_closable(tbl, id, attempt, 'tick');
    end if;
  end if;
  return current_status;
end
$$;
comment on function public.job_tick(uuid, real, text, integer, text) is
  'One round trip per tick: writes progress (never backwards), stage and heartbeat on a running job and returns its status; cancelled comes back so the worker stops.';

create function public.job_succeed(id uuid, result_id uuid default null, attempt integer default null, timings jsonb default null, job_table text default 'jobs')
returns public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  result public.jobs;
begin
  perform supabase_jobs.require_id(id);
  perform supabase_jobs.check_attempt(attempt);
  perform supabase_jobs.check_timings(timings);
  execute format(
    'update %s as t set status = ''done'', result_id = $2, timings = coalesce($4, t.timings)
      where t.id = $1 and t.status = ''running'' and ($3::int is null or t.attempts = $3)
     returning %s', tbl, supabase_jobs.select_list('t', false))
    into result using id, result_id, attempt, timings;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(tbl, id, attempt, 'succeed');
  end if;
  return result;
end
$$;
comment on function public.job_succeed(uuid, uuid, integer, jsonb, text) is
  'running -> done, recording result_id and dropping the payload. Refuses a cancelled job (PT410), any other finished job (PT409), a queued one (55000), an unknown id (PT404).';

create function public.job_fail(id uuid, error text, attempt integer default null, error_code text default null, timings jsonb default null, job_table text default 'jobs')
returns public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  result public.jobs;
begin
  perform supabase_jobs.require_id(id);
  perform supabase_jobs.check_attempt(attempt);
  perform supabase_jobs.check_sentence('error', error, true);
  if error_code is not null and error_code !~ '^[a-z][a-z0-9_]{0,63}$' then
    perform supabase_jobs.invalid('error_code', format('error_code is a snake_case identifier; got %L', left(error_code, 80)));
  end if;
  perform supabase_jobs.check_timings(timings);
  execute format(
    'update %s as t set status = ''failed'', error = $2, error_code = coalesce($4, ''failed''), timings = coalesce($5, t.timings)
      where t.id = $1 and t.status = ''running'' and ($3::int is null or t.attempts = $3)
     returning %s', tbl, supabase_jobs.select_list('t', false))
    into result using id, error, attempt, error_code, timings;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(tbl, id, attempt, 'fail');
  end if;
  return result;
end
$$;
comment on function public.job_fail(uuid, text, integer, text, jsonb, text) is
  'running -> failed with a sentence for the user in error. Same refusals as job_succeed.';

create function public.job_retry(id uuid, error text, delay interval default '0 seconds', attempt integer default null, job_table text default 'jobs')
returns public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  result public.jobs;
begin
  perform supabase_jobs.require_id(id);
  perform supabase_jobs.check_attempt(attempt);
  perform supabase_jobs.check_sentence('error', error, true);
  if delay is null or delay < interval '0' then
    perform supabase_jobs.invalid('delay', 'delay must be zero or positive');
  end if;
  execute format(
    'update %s as t
        set status = (case when t.attempts >= t.max_attempts then ''failed'' else ''queued'' end)::public.job_status,
            error = $2,
            error_code = case when t.attempts >= t.max_attempts then ''attempts_exhausted'' else ''retrying'' end,
            available_at = case when t.attempts >= t.max_attempts then t.available_at else now() + $3 end
      where t.id = $1 and t.status = ''running'' and ($4::int is null or t.attempts = $4)
     returning %s', tbl, supabase_jobs.select_list('t', false))
    into result using id, error, delay, attempt;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(tbl, id, attempt, 'retry');
  end if;
  return result;
end
$$;
comment on function public.job_retry(uuid, text, interval, integer, text) is
  'After an unexpected failure: running -> queued, claimable again after delay; running -> failed (error_code attempts_exhausted) once max_attempts is spent.';

create function public.job_release(id uuid, attempt integer default null, job_table text default 'jobs')
returns public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  result public.jobs;
begin
  perform supabase_jobs.require_id(id);
  perform supabase_jobs.check_attempt(attempt);
  execute format(
    'update %s as t set status = ''queued'', attempts = t.attempts - 1
      where t.id = $1 and t.status = ''running'' and ($2::int is null or t.attempts = $2)
     returning %s', tbl, supabase_jobs.select_list('t', false))
    into result using id, attempt;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(tbl, id, attempt, 'release');
  end if;
  return result;
end
$$;
comment on function public.job_release(uuid, integer, text) is
  'A worker giving a job back cleanly (shutdown, wall-clock limit): running -> queued without spending the attempt.';

create function public.job_cancel(id uuid, reason text default null, job_table text default 'jobs')
returns setof public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
begin
  perform supabase_jobs.require_id(id);
  perform supabase_jobs.check_sentence('reason', reason, false);
  return query execute format(
    'update %s as t set status = ''cancelled'', error = $2
      where t.id = $1 and t.status in (''queued'', ''running'')
     returning %s', tbl, supabase_jobs.select_list('t', false))
    using id, reason;
end
$$;
comment on function public.job_cancel(uuid, text, text) is
  'Asks a job to stop: queued/running -> cancelled, payload dropped. Idempotent: no row back for an unknown, finished or already cancelled job. The worker learns it on its next tick.';

create function public.job_reclaim_stale(stale_after interval, job_table text default 'jobs')
returns setof public.jobs
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
begin
  if stale_after is null then
    raise exception using errcode = '22004',
      message = 'stale_after is required: reclaim_stale will not guess how long a silent worker is dead',
      detail = 'field=stale_after';
  end if;
  if stale_after <= interval '0' then
    perform supabase_jobs.invalid('stale_after', format('stale_after must be positive; got %s', stale_after));
  end if;
  -- The scan and the write are one statement; the write re-checks status,
  -- attempts and the heartbeat on the row it finally locks, so a job that
  -- finished, ticked or was reclaimed meanwhile is left alone.
  return query execute format(
    'with stale as (
       select s.id, s.attempts from %1$s as s
        where s.status = ''running'' and coalesce(s.heartbeat_at, s.started_at) < now() - $1)
     update %1$s as t
        set status = (case when t.attempts >= t.max_attempts then ''failed'' else ''queued'' end)::public.job_status,
            error = case when t.attempts >= t.max_attempts then supabase_jobs.user_message(''worker_lost'', t.locale, t.attempts) else t.error end,
            error_code = case when t.attempts >= t.max_attempts then ''worker_lost'' else t.error_code end
       from stale
      where t.id = stale.id and t.status = ''running'' and t.attempts = stale.attempts
        and coalesce(t.heartbeat_at, t.started_at) < now() - $1
     returning %2$s', tbl, supabase_jobs.select_list('t', false))
    using stale_after;
end
$$;
comment on function public.job_reclaim_stale(interval, text) is
  'Readmits running jobs whose worker went silent for stale_after (last heartbeat, else started_at): back to queued, or failed with a sentence for the user once max_attempts is spent. Refuses without stale_after (22004).';

create function public.job_get(id uuid, job_table text default 'jobs')
returns public.jobs
language plpgsql stable
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  result public.jobs;
begin
  perform supabase_jobs.require_id(id);
  execute format('select %s from %s as t where t.id = $1', supabase_jobs.select_list('t', false), tbl) into result using id;
  if result.id is null then
    raise exception using errcode = 'PT404', message = format('job %s not found', id);
  end if;
  return result;
end
$$;
comment on function public.job_get(uuid, text) is
  'One job (payload omitted). PT404 when it does not exist or is not yours.';

create function public.job_list_recent(
  kind text default null,
  status public.job_status default null,
  statuses public.job_status[] default null,
  "limit" integer default 20,
  cursor text default null,
  job_table text default 'jobs'
)
returns setof public.jobs
language plpgsql stable
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
  wanted public.job_status[];
  after_created timestamptz;
  after_id uuid;
  parts text[];
begin
  if status is not null and statuses is not null then
    perform supabase_jobs.invalid('statuses', 'give status or statuses, not both');
  end if;
  if "limit" is null or "limit" < 1 or "limit" > (select l.list_max from supabase_jobs.limits() l) then
    perform supabase_jobs.invalid('limit', format('limit is between 1 and %s; got %s', (select l.list_max from supabase_jobs.limits() l), "limit"));
  end if;
  wanted := case when status is not null then array[status] else statuses end;
  if cursor is not null then
    parts := regexp_match(cursor, '^(.{10,40})~([0-9a-fA-F-]{36})$');
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
  return query execute format(
    'select %s from %s as t
      where t.is_active
        and ($1::text is null or t.kind = $1)
        and ($2::public.job_status[] is null or t.status = any($2))
        and ($3::timestamptz is null or (t.created_at, t.id) < ($3, $4))
      order by t.created_at desc, t.id desc
      limit $5', supabase_jobs.select_list('t', false), tbl)
    using kind, wanted, after_created, after_id, "limit";
end
$$;
comment on function public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text) is
  'Newest jobs first, filtered by kind and status(es), keyset-paginated: pass "<created_at>~<id>" of the last row as cursor. [] when nothing matches.';

-- ---------------------------------------------------------------------------
-- Grants: nothing by default (Supabase grants nothing on new objects), then
-- exactly what each role needs.
revoke all on function public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text) from public, anon, authenticated;
revoke all on function public.job_claim(uuid, text) from public, anon, authenticated;
revoke all on function public.job_claim_next(text[], integer, text) from public, anon, authenticated;
revoke all on function public.job_tick(uuid, real, text, integer, text) from public, anon, authenticated;
revoke all on function public.job_succeed(uuid, uuid, integer, jsonb, text) from public, anon, authenticated;
revoke all on function public.job_fail(uuid, text, integer, text, jsonb, text) from public, anon, authenticated;
revoke all on function public.job_retry(uuid, text, interval, integer, text) from public, anon, authenticated;
revoke all on function public.job_release(uuid, integer, text) from public, anon, authenticated;
revoke all on function public.job_cancel(uuid, text, text) from public, anon, authenticated;
revoke all on function public.job_reclaim_stale(interval, text) from public, anon, authenticated;
revoke all on function public.job_get(uuid, text) from public, anon, authenticated;
revoke all on function public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text) from public, anon, authenticated;

grant execute on function public.job_enqueue(text, jsonb, bytea, integer, text, uuid, text) to authenticated, service_role;
grant execute on function public.job_cancel(uuid, text, text) to authenticated, service_role;
grant execute on function public.job_get(uuid, text) to authenticated, service_role;
grant execute on function public.job_list_recent(text, public.job_status, public.job_status[], integer, text, text) to authenticated, service_role;

grant execute on function public.job_claim(uuid, text) to service_role;
grant execute on function public.job_claim_next(text[], integer, text) to service_role;
grant execute on function public.job_tick(uuid, real, text, integer, text) to service_role;
grant execute on function public.job_succeed(uuid, uuid, integer, jsonb, text) to service_role;
grant execute on function public.job_fail(uuid, text, integer, text, jsonb, text) to service_role;
grant execute on function public.job_retry(uuid, text, interval, integer, text) to service_role;
grant execute on function public.job_release(uuid, integer, text) to service_role;
grant execute on function public.job_reclaim_stale(interval, text) to service_role;
