-- Failed for good: a job's failure can be recorded as permanent, and then
-- nothing makes a new job of it. The kind's permanentErrors were known to the
-- screen only; a direct try again (job_try_again, store.tryAgain) or an admin's
-- replay still queued a job that failed the same way at once.
--   * supabase_jobs.job.failed_for_good (boolean, default false), on every job table.
--   * job_fail takes permanent (default false), which sets it; the guard clears it
--     on any status but failed and refuses it on a row that is not failed.
--   * try again refuses such a job (SJ002, the message says why), job_replay skips it,
--     and the policy admins_try_again does not take it as retry_of.
-- Breaks: job_fail has a new last argument (calls by name or by position keep working).

alter table supabase_jobs.job add column failed_for_good boolean not null default false;
comment on column supabase_jobs.job.failed_for_good is
  'The job failed for good: its worker closed it with job_fail(permanent => true), an error its kind declares permanent, so trying again would fail the same way. job_try_again refuses it (SJ002) and job_replay skips it. Only a failed row holds true; written by job_fail only.';

-- Each job table shows its parent's column comments (attach_partition copied them when it was made).
do $$
declare
  tbl regclass;
begin
  for tbl in select t.table_name from supabase_jobs.job_tables t loop
    execute pg_catalog.format('comment on column %s.failed_for_good is %L', tbl,
      pg_catalog.col_description('supabase_jobs.job'::regclass,
        (select a.attnum from pg_catalog.pg_attribute a where a.attrelid = 'supabase_jobs.job'::regclass and a.attname = 'failed_for_good')));
  end loop;
end
$$;

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
    new.updated_at := greatest(now(), old.updated_at + interval '1 microsecond');
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
    -- The estimate belongs to the attempt that wrote it.
    new.expected_end_at := null;
    case new.status
      when 'running' then
        new.started_at := now();
        new.heartbeat_at := now();
        -- A parent resumed after its children keeps the progress they earned
        -- (here and on waiting -> queued below).
        new.progress := case when old.status = 'queued' and new.resumed_at is not null then old.progress else 0 end;
        new.stage := null;
      when 'queued' then
        new.started_at := null;
        new.heartbeat_at := null;
        -- Back in the queue (a retry, a reclaim, a release, a resumed parent) the row
        -- keeps how far the last attempt got, for the screen to show while it waits;
        -- the next claim starts the new attempt from 0.
        new.progress := old.progress;
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
    -- Failed for good is how a job fails, never a state of its own: any other status clears it.
    if new.status <> 'failed' then
      new.failed_for_good := false;
    end if;
  elsif old.status = 'queued' and not restricted then
    -- A queued row has nothing a worker may touch but its schedule.
    if (pg_catalog.to_jsonb(new) - 'available_at' - 'updated_at' - 'is_active') is distinct from (pg_catalog.to_jsonb(old) - 'available_at' - 'updated_at' - 'is_active') then
      raise exception using errcode = 'SJ001', message = pg_catalog.format('job %s is queued: claim it before writing progress or results', old.id);
    end if;
  end if;
  if new.failed_for_good and new.status <> 'failed' then
    raise exception using errcode = '23514', constraint = 'job_failed_for_good_is_failed',
      message = pg_catalog.format('job %s is %s: only a failed job is failed for good (job_fail with permanent => true)', old.id, new.status);
  end if;
  new.updated_at := greatest(now(), old.updated_at + interval '1 microsecond');
  perform supabase_jobs.job_row_rules(new.id, new.kind, new.status, new.params, new.payload, new.error, new.attempts,
    new.max_attempts, new.started_at, new.finished_at, new.progress, new.stage, new.locale, new.timings, new.heartbeat_ms,
    new.tags, new.idempotency_key, new.concurrency_key, new.parent_id, new.expected_seconds);
  return new;
end
$$;
comment on function supabase_jobs.guard_job_update is
  'BEFORE UPDATE on every job table, every row: enforces the state machine, freezes terminal rows, limits users to cancelling and rescheduling, derives started_at/finished_at/payload/progress (and failed_for_good, false but on failed) from the status, and checks the row rules (job_row_rules).';

drop function public.job_fail(uuid, text, integer, text, jsonb, text);
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
revoke all on function public.job_fail from public, anon, authenticated, service_role;
grant execute on function public.job_fail to service_role;

create or replace function supabase_jobs.insert_retry(old supabase_jobs.job)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  result supabase_jobs.job;
begin
  -- Its worker closed it with an error its kind declares permanent: a new job would fail the same way.
  if old.failed_for_good then
    raise exception using errcode = 'SJ002',
      message = pg_catalog.format('job %s failed for good (%s): trying again would fail the same way', old.id, old.error_code),
      hint = 'Change what made it fail (its input, its file) and enqueue a new job.';
  end if;
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.retry:' || old.id::text, 0));
  -- Tried again already (a double click, a second replay): that job, not another.
  select t.* into result from supabase_jobs.job t
   where t.job_table = old.job_table and t.retry_of = old.id and t.owner_id is not distinct from old.owner_id
   order by t.created_at limit 1;
  if result.id is null then
    insert into supabase_jobs.job as t (job_table, kind, params, max_attempts, locale, owner_id, tags, priority,
                                        concurrency_key, expires_at, retry_of)
    values (old.job_table, old.kind, old.params, old.max_attempts, old.locale, old.owner_id, old.tags, old.priority,
            old.concurrency_key, now() + (old.expires_at - old.available_at), old.id)
    returning t.* into result;
  end if;
  result.payload := null;
  return result;
end
$$;
comment on function supabase_jobs.insert_retry is
  'The one insert of try again and replay, as whoever calls it (for a user, owner or admin: within the job owner''s quota and the registered kinds, PT429 / 22023 field=kind): a queued job with the old one''s kind, params, owner, language and options (max_attempts, tags, priority, concurrency_key, expiry), retry_of set; the old row untouched. A job tried again already returns its retry instead; a job failed for good (failed_for_good) is refused, SJ002.';

create or replace function supabase_jobs.is_retry_of(retry_of uuid, job_table text, kind text, owner_id uuid)
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return retry_of is not null and exists (
    select 1 from supabase_jobs.job o
     where o.job_table = is_retry_of.job_table and o.id = is_retry_of.retry_of and o.kind = is_retry_of.kind
       and o.owner_id is not distinct from is_retry_of.owner_id and o.status in ('failed', 'cancelled') and not o.failed_for_good);
end
$$;
comment on function supabase_jobs.is_retry_of is
  'True when retry_of names a failed (not failed for good) or cancelled job the caller can read, of that job table, kind and owner: the check of policy admins_try_again.';

create or replace function supabase_jobs.replay(label text, kind text, error_code text, ended_from timestamptz, ended_to timestamptz,
  lim integer default null)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  user_call boolean := not supabase_jobs.is_worker();
  picked supabase_jobs.job[];
  old supabase_jobs.job;
begin
  if user_call and not supabase_jobs.is_admin() then
    raise exception using errcode = '42501', message = 'replaying failed jobs is for admins only',
      hint = 'An admin is a user whose app_metadata.role is ''admin''; a user tries again their own jobs with job_try_again.';
  end if;
  if not pg_catalog.isfinite(coalesce(ended_from, now())) then
    perform supabase_jobs.invalid('from', 'from is a moment in time, not infinity');
  end if;
  if not pg_catalog.isfinite(coalesce(ended_to, now())) then
    perform supabase_jobs.invalid('to', 'to is a moment in time, not infinity');
  end if;
  if ended_from is not null and ended_to is not null and ended_from >= ended_to then
    perform supabase_jobs.invalid('to', pg_catalog.format('to (%s) must come after from (%s)', ended_to, ended_from));
  end if;
  if lim is not null and (lim < 1 or lim > supabase_jobs.batch_max()) then
    perform supabase_jobs.invalid('limit', pg_catalog.format('limit is between 1 and %s; got %s', supabase_jobs.batch_max(), lim));
  end if;
  select pg_catalog.array_agg(p.j order by (p.j).finished_at, (p.j).id) into picked
    from (select t as j from supabase_jobs.job t
           where t.job_table = label and t.status = 'failed' and not t.failed_for_good
             and (replay.kind is null or t.kind = replay.kind)
             and (replay.error_code is null or t.error_code = replay.error_code)
             and (ended_from is null or t.finished_at >= ended_from)
             and (ended_to is null or t.finished_at < ended_to)
             and not exists (select 1 from supabase_jobs.job r
                              where r.job_table = label and r.retry_of = t.id and r.owner_id is not distinct from t.owner_id)
           limit supabase_jobs.batch_max() + 1) p;
  if pg_catalog.cardinality(picked) > supabase_jobs.batch_max() then
    perform supabase_jobs.invalid('filter', pg_catalog.format(
      'more than %s failed jobs match: a replay takes at most %s; narrow it by kind, error code or time', supabase_jobs.batch_max(), supabase_jobs.batch_max()));
  end if;
  foreach old in array coalesce(picked[1:coalesce(lim, supabase_jobs.batch_max())], '{}') loop
    return next supabase_jobs.insert_retry(old);
  end loop;
end
$$;
comment on function supabase_jobs.replay is
  'job_replay''s body, as the caller: admins (each retry under RLS, within its owner''s quota and the registered kinds: one refused refuses the replay, nothing written) and workers; anyone else 42501.';

comment on function supabase_jobs.try_again is
  'job_try_again''s path for admins and workers, as the caller: an admin''s retry is inserted for the old job''s owner under RLS (policy admins_try_again), within that owner''s quota and the registered kinds; a user who is not an admin gets PT404, a job not failed or cancelled, or failed for good, SJ002.';
comment on function public.job_try_again is
  'Tries a failed or cancelled job again: a new queued job with its kind, params, owner and options (not its payload, dropped when it ended), retry_of pointing at it; the old row untouched. Again on the same job returns the same new job. The owner (within their quota and the registered kinds) or an admin; SJ002 for a job not failed or cancelled, or failed for good (failed_for_good: trying again would fail the same way), PT404 for an unknown job or another user''s.';
comment on function public.job_replay is
  'Admins: tries again every failed job of the table matching the filter (kind, error_code, ended in [ended_from, ended_to)) not tried again yet and not failed for good (failed_for_good: skipped and not counted, trying again would fail the same way), oldest first: the new queued jobs (retry_of set), old rows untouched. More than batch_max() matching: 22023 (field=filter) and nothing written. "limit" (1 to batch_max()): only the oldest that many are tried again; call again while it returns "limit" (a REST reply carries at most max_rows rows). 42501 for anyone but an admin or a worker.';
