-- The writes of a running attempt: progress (job_tick) and the closes
-- (succeed, fail, retry, release, cancel, reschedule). Each acts only on the
-- attempt that holds the job; any other attempt is told why it lost the job by
-- supabase_jobs.raise_not_closable (PT409 reclaimed, PT410 cancelled), so a
-- worker that went quiet can never overwrite its successor. The table's label:
-- job_tick and job_succeed (one row, the hot path) match with the label as written
-- and check the name (job_table_label) only when no row lands; the other closes
-- check it first with job_table_label (both functions' comments say why).

create or replace function supabase_jobs.raise_not_closable(label text, job_id uuid, expected_attempt integer, action text)
returns void
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  found_status public.job_status;
  found_attempts int;
begin
  select j.status, j.attempts into found_status, found_attempts
    from supabase_jobs.job j where j.job_table = label and j.id = job_id;
  if found_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', job_id);
  elsif found_status = 'cancelled' then
    raise exception using errcode = 'PT410', message = pg_catalog.format('job %s was cancelled; cannot %s it', job_id, action),
      hint = 'The system did what it was told: log it and move on.';
  elsif supabase_jobs.is_terminal(found_status) then
    raise exception using errcode = 'PT409', message = pg_catalog.format('job %s is already %s; cannot %s it', job_id, found_status, action),
      hint = 'Two workers believe this job is theirs.';
  elsif found_status = 'queued' and expected_attempt is not null then
    raise exception using errcode = 'PT409',
      message = pg_catalog.format('job %s was reclaimed and is queued again; attempt %s cannot %s it', job_id, expected_attempt, action),
      hint = 'Two workers believe this job is theirs.';
  elsif found_status = 'queued' then
    raise exception using errcode = '55000', message = pg_catalog.format('job %s is queued, not running; claim it before you %s it', job_id, action);
  elsif expected_attempt is not null and found_attempts <> expected_attempt then
    raise exception using errcode = 'PT409',
      message = pg_catalog.format('job %s was reclaimed: attempt %s now owns it, not attempt %s; cannot %s it', job_id, found_attempts, expected_attempt, action),
      hint = 'Two workers believe this job is theirs.';
  else
    raise exception using errcode = 'PT409', message = pg_catalog.format('job %s changed while it was being %s', job_id, action);
  end if;
end
$$;

create or replace function public.job_tick(
  id uuid,
  progress real default null,
  stage text default null,
  attempt integer default null,
  job_table text default 'jobs',
  eta_seconds real default null,
  metadata jsonb default null
)
returns public.job_status
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  -- The label as the caller wrote it: the update finds no row in a table that
  -- does not exist, and only then is the name checked (job_table_label), so a
  -- tick that lands pays no lookup of the registry.
  label text := case when job_table like 'public.%' then pg_catalog.substr(job_table, 8) else job_table end;
  updated public.job_status;
  metadata_bytes integer;
  current_status public.job_status;
  current_attempts int;
begin
  -- One test for the common tick; the checks that name the bad field only when it fails.
  -- A year either way for eta_seconds: anything further is a unit mistake, not an estimate.
  if id is null or attempt < 1 or progress = 'NaN'::real or progress < 0 or progress > 100
     or char_length(stage) > supabase_jobs.stage_max() or eta_seconds = 'NaN'::real or abs(eta_seconds) > 31536000 then
    perform supabase_jobs.check_call(id, attempt);
    if progress is not null and (progress = 'NaN'::real or progress < 0 or progress > 100) then
      perform supabase_jobs.invalid('progress', pg_catalog.format('progress is a percentage between 0 and 100; got %s', progress));
    end if;
    if stage is not null and char_length(stage) > supabase_jobs.stage_max() then
      perform supabase_jobs.invalid('stage', pg_catalog.format('stage is at most %s characters', supabase_jobs.stage_max()));
    end if;
    if eta_seconds is not null and (eta_seconds = 'NaN'::real or abs(eta_seconds) > 31536000) then
      perform supabase_jobs.invalid('eta_seconds', pg_catalog.format('eta_seconds is a number of seconds within a year; got %s', eta_seconds));
    end if;
  end if;
  if metadata is not null and pg_catalog.jsonb_typeof(metadata) <> 'object' then
    perform supabase_jobs.invalid('metadata', pg_catalog.format('metadata is a JSON object; got %s', pg_catalog.jsonb_typeof(metadata)));
  end if;
  -- The guard's work is this statement's (running -> running, every argument checked above):
  -- the guard skips it; the message trigger still sends the tick's (docs/architecture.md,
  -- "Guarantees once per statement").
  perform pg_catalog.set_config('supabase_jobs.handled',
    pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' guarded'), true);
  -- Progress never decreases within an attempt: greatest() keeps the bar
  -- honest even when two ticks arrive out of order.
  update supabase_jobs.job as t
     set progress = greatest(t.progress, coalesce(job_tick.progress, t.progress)),
         stage = coalesce(job_tick.stage, t.stage), heartbeat_at = now(), updated_at = greatest(now(), t.updated_at + interval '1 microsecond'),
         expected_end_at = case when eta_seconds is null then t.expected_end_at
                                else now() + pg_catalog.make_interval(secs => eta_seconds) end,
         -- Merged key by key: a tick names only the keys it changes.
         metadata = case when job_tick.metadata is null then t.metadata
                         else coalesce(t.metadata, '{}'::jsonb) || job_tick.metadata end
   where t.job_table = label and t.id = job_tick.id and t.status = 'running'
     and (attempt is null or t.attempts = attempt)
  returning t.status, case when job_tick.metadata is null then null else pg_catalog.octet_length(t.metadata::text) end
    into updated, metadata_bytes;
  perform pg_catalog.set_config('supabase_jobs.handled', '', true);
  if metadata_bytes > supabase_jobs.metadata_max_bytes() then
    perform supabase_jobs.invalid('metadata', pg_catalog.format('metadata holds at most %s bytes of JSON; this tick would make it %s',
      supabase_jobs.metadata_max_bytes(), metadata_bytes));
  end if;
  if updated is not null then
    return updated;
  end if;
  label := supabase_jobs.job_table_label(job_table);
  select j.status, j.attempts into current_status, current_attempts
    from supabase_jobs.job j where j.job_table = label and j.id = job_tick.id;
  if current_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  elsif current_status = 'running' and attempt is not null and current_attempts <> attempt then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'tick');
  elsif current_status = 'queued' and attempt is not null then
    -- Reclaimed after this worker went quiet: it is no longer this worker's job.
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'tick');
  end if;
  return current_status;
end
$$;
comment on function public.job_tick is
  'One round trip per tick: writes progress (never backwards), stage, heartbeat, the worker''s estimate of the end (eta_seconds from now -> expected_end_at) and metadata (merged key by key, at most metadata_max_bytes) on a running job and returns its status; cancelled comes back so the worker stops.';

create or replace function public.job_succeed(
  id uuid,
  result_id uuid default null,
  attempt integer default null,
  timings jsonb default null,
  job_table text default 'jobs'
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  -- As in job_claim: the name is checked (job_table_label) only when no row closes.
  label text := case when job_table like 'public.%' then pg_catalog.substr(job_table, 8) else job_table end;
  result supabase_jobs.job;
begin
  -- One test for the common call; check_call names the bad field when it fails.
  if id is null or attempt < 1 or pg_catalog.jsonb_typeof(timings) <> 'object' then
    perform supabase_jobs.check_call(id, attempt, timings => timings);
  end if;
  -- The guard's work (running -> done) and the message in this statement; the row triggers skip it
  -- (docs/architecture.md, "Guarantees once per statement").
  perform pg_catalog.set_config('supabase_jobs.handled',
    pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' sent'), true);
  with closed as (
    update supabase_jobs.job as t
       set status = 'done', result_id = job_succeed.result_id, timings = coalesce(job_succeed.timings, t.timings),
           finished_at = now(), payload = null, progress = 100, error = null, error_code = null, expected_end_at = null,
           updated_at = greatest(now(), t.updated_at + interval '1 microsecond')
     where t.job_table = label and t.id = job_succeed.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
    returning t.*)
  select c.* into result from closed as c
   where (select supabase_jobs.send_statement_messages(label, pg_catalog.array_agg(x.id)) from closed as x) is not null;
  perform pg_catalog.set_config('supabase_jobs.handled', '', true), pg_catalog.set_config('supabase_jobs.statement_messages', '', true);
  if result.id is null then
    perform supabase_jobs.raise_not_closable(supabase_jobs.job_table_label(job_table), id, attempt, 'succeed');
  end if;
  return result;
end
$$;
comment on function public.job_succeed is
  'running -> done, recording result_id and dropping the payload. Refuses a cancelled job (PT410), any other finished job (PT409), a queued one (55000), an unknown id (PT404).';

create or replace function supabase_jobs.check_close_items(items jsonb)
returns void
language plpgsql immutable
set search_path = ''
as $$
declare
  item record;
  field text;
begin
  if pg_catalog.jsonb_typeof(items) is distinct from 'array' then
    return;  -- job_succeed_many names items itself
  end if;
  for item in select e.value, e.ordinality - 1 as i from pg_catalog.jsonb_array_elements(items) with ordinality e loop
    continue when pg_catalog.jsonb_typeof(item.value) <> 'object';
    foreach field in array array['id', 'attempt', 'result_id'] loop
      continue when item.value -> field is null or pg_catalog.jsonb_typeof(item.value -> field) = 'null';
      begin
        case field
          when 'attempt' then perform (item.value ->> field)::integer;
          else perform (item.value ->> field)::uuid;
        end case;
      exception when others then
        perform supabase_jobs.invalid(pg_catalog.format('items[%s].%s', item.i, field),
          pg_catalog.format('%s is %s; got %s', field,
            case field when 'attempt' then 'an integer' else 'a UUID' end, left((item.value -> field)::text, 80)));
      end;
    end loop;
  end loop;
end
$$;
comment on function supabase_jobs.check_close_items is
  'The error path of job_succeed_many: raises 22023 naming items[<i>].<field> for the first id, attempt or result_id of the wrong type.';

create or replace function public.job_succeed_many(items jsonb, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
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
  -- The ids as an array and the status in a subquery: each job through the
  -- primary key. A plain join to the items hash-joined every running row of
  -- the table, and every entry left in the running-jobs index since the last
  -- vacuum (docs/architecture.md, "Picked ids as an array"). The closed rows' Realtime
  -- messages in one insert, as in job_claim_next.
  perform pg_catalog.set_config('supabase_jobs.handled',
    pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' sent'), true);
  return query
  with wanted as (
    select w.id, w.attempt, w.result_id, w.timings
      from pg_catalog.jsonb_to_recordset(items) as w(id uuid, attempt integer, result_id uuid, timings jsonb)
     where w.id is not null),
  closed as (
    update supabase_jobs.job as t
       set status = 'done', result_id = w.result_id,
           timings = case when pg_catalog.jsonb_typeof(w.timings) = 'object' then w.timings else t.timings end,
           finished_at = now(), payload = null, progress = 100, error = null, error_code = null, expected_end_at = null,
           updated_at = greatest(now(), t.updated_at + interval '1 microsecond')
      from wanted w
     where t.job_table = label and t.id = any (array(select x.id from wanted as x)) and t.id = w.id
       and t.status = (select 'running'::public.job_status) and (w.attempt is null or t.attempts = w.attempt)
    returning t.*)
  -- done rows hold no payload (row rule job_terminal_has_no_payload): returned as they are.
  select c.* from closed as c
   where (select supabase_jobs.send_statement_messages(label, pg_catalog.array_agg(x.id)) from closed as x) is not null;
  perform pg_catalog.set_config('supabase_jobs.handled', '', true), pg_catalog.set_config('supabase_jobs.statement_messages', '', true);
exception when invalid_text_representation or numeric_value_out_of_range then
  -- A field of the wrong type stops the statement whole; name the item and field.
  perform supabase_jobs.check_close_items(items);
  raise;
end
$$;
comment on function public.job_succeed_many is
  'running -> done for many jobs in one statement, each with its own result_id and timings (payload dropped). Returns the rows that landed; a job missing from the result was not closable (call job_succeed for the reason).';

create or replace function public.job_fail(
  id uuid,
  error text,
  attempt integer default null,
  error_code text default null,
  timings jsonb default null,
  job_table text default 'jobs',
  permanent boolean default false
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt, error, true, timings);
  if error_code is not null and error_code !~ '^[a-z][a-z0-9_]{0,63}$' then
    perform supabase_jobs.invalid('error_code', pg_catalog.format('error_code is a snake_case identifier; got %L', left(error_code, 80)));
  end if;
  if permanent is null then
    perform supabase_jobs.invalid('permanent', 'permanent is true (trying again would fail the same way) or false');
  end if;
  update supabase_jobs.job as t
     set status = 'failed', error = supabase_jobs.sentence(job_fail.error), error_code = coalesce(job_fail.error_code, 'failed'),
         timings = coalesce(job_fail.timings, t.timings), failed_for_good = permanent
   where t.job_table = label and t.id = job_fail.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
  returning t.* into result;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'fail');
  end if;
  return result;
end
$$;
comment on function public.job_fail is
  'running -> failed with a sentence for the user in error (shortened to the limit, never refused for its length), never retried. permanent => true records that trying again would fail the same way (failed_for_good): job_try_again then refuses the job (SJ002) and job_replay skips it. Same refusals as job_succeed.';

create or replace function public.job_retry(
  id uuid,
  error text,
  delay interval default '00:00:00'::interval,
  attempt integer default null,
  job_table text default 'jobs'
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt, error, true);
  if delay is null or delay < interval '0' then
    perform supabase_jobs.invalid('delay', 'delay must be zero or positive');
  elsif delay > interval '100 years' then
    -- Further is a unit mistake, and far enough past the last time PostgreSQL keeps would be a raw 22008.
    perform supabase_jobs.invalid('delay', pg_catalog.format('delay is at most 100 years; got %s', delay));
  end if;
  update supabase_jobs.job as t
     set status = (case when t.attempts >= t.max_attempts then 'failed' else 'queued' end)::public.job_status,
         error = supabase_jobs.sentence(job_retry.error),
         error_code = case when t.attempts >= t.max_attempts then 'attempts_exhausted' else 'retrying' end,
         available_at = case when t.attempts >= t.max_attempts then t.available_at else now() + delay end
   where t.job_table = label and t.id = job_retry.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
  returning t.* into result;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'retry');
  end if;
  result.payload := null;
  return result;
end
$$;
comment on function public.job_retry is
  'After an unexpected failure: running -> queued, claimable again after delay; running -> failed (error_code attempts_exhausted) once max_attempts is spent.';

create or replace function public.job_release(id uuid, attempt integer default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  result supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id, attempt);
  update supabase_jobs.job as t set status = 'queued', attempts = t.attempts - 1
   where t.job_table = label and t.id = job_release.id and t.status = 'running' and (attempt is null or t.attempts = attempt)
  returning t.* into result;
  if result.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'release');
  end if;
  result.payload := null;
  return result;
end
$$;
comment on function public.job_release is
  'A worker giving a job back cleanly (shutdown, wall-clock limit): running -> queued without spending the attempt.';

create or replace function public.job_reschedule(
  id uuid,
  run_at timestamptz default null,
  delay interval default null,
  job_table text default 'jobs'
)
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  starts timestamptz := supabase_jobs.start_time(run_at, delay);
  result supabase_jobs.job;
  current_status public.job_status;
begin
  perform supabase_jobs.check_call(id);
  -- The status in a subquery: by id through the primary key, never the claim index.
  update supabase_jobs.job as t set available_at = starts
   where t.job_table = label and t.id = job_reschedule.id and t.status = (select 'queued'::public.job_status)
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
comment on function public.job_reschedule is
  'Moves a queued job''s start to run_at (or now() + delay, or now()). Its owner or a worker; PT409 once it started or finished, PT410 when cancelled, PT404 when unknown.';

create or replace function public.job_cancel(id uuid, reason text default null, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
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
  -- cancelled rows hold no payload (row rule job_terminal_has_no_payload): returned as they are.
  select c.* from cancelled as c;
end
$$;
comment on function public.job_cancel is
  'Asks a job to stop: queued/running -> cancelled, payload dropped. Idempotent: no row back for an unknown, finished or already cancelled job (a long reason is shortened, never refused). The worker learns it on its next tick.';

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.raise_not_closable, public.job_tick, public.job_succeed, supabase_jobs.check_close_items,
  public.job_succeed_many, public.job_fail, public.job_retry, public.job_release, public.job_reschedule,
  public.job_cancel
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  supabase_jobs.raise_not_closable, supabase_jobs.check_close_items, public.job_reschedule, public.job_cancel
  to authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  public.job_tick, public.job_succeed, public.job_succeed_many, public.job_fail, public.job_retry,
  public.job_release
  to service_role;
