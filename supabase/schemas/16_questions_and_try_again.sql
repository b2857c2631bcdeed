-- Questions and try again. A running job asks its owner a question (job_ask:
-- running -> waiting, its worker slot free); the question lives in
-- supabase_jobs.job_question keyed by (job, key), so the handler, run again
-- from the top on any worker, gets the stored answer back for the same key.
-- The owner (or an admin) answers (job_answer: checked against the answer's
-- JSON Schema, then waiting -> queued); past its deadline the reclaim
-- schedule fails the job (question_unanswered). A failed or cancelled job is
-- tried again as a new linked job (job_try_again, retry_of); admins replay
-- failed jobs by filter (job_replay), a batch at most. A job failed for good
-- (failed_for_good, job_fail's permanent) is neither: it would fail the same way.

create table supabase_jobs.job_question (
  job_id        uuid not null,
  key           text not null,
  job_table     text not null,
  owner_id      uuid references auth.users (id) on delete cascade,
  prompt        text not null,
  answer_schema jsonb not null,
  asked_at      timestamptz not null default now(),
  expires_at    timestamptz not null,
  answer        jsonb,
  answered_at   timestamptz,
  answered_by   uuid,
  primary key (job_id, key),
  constraint job_question_key_length check (char_length(key) between 1 and 100),
  constraint job_question_prompt_length check (char_length(prompt) between 1 and 2000),
  constraint job_question_schema_object check (jsonb_typeof(answer_schema) = 'object'),
  constraint job_question_answered_together check ((answer is null) = (answered_at is null))
);
comment on table supabase_jobs.job_question is
  'Questions jobs asked their owner (job_ask) and the answers (job_answer), keyed by job and key: a handler run again gets the answer stored for the same key. Deleted when the job ends. Read the open one with public.job_open_question.';
comment on column supabase_jobs.job_question.key is
  'Names the question within its job (ask-1, ask-2, ... in the order a run asks, unless the handler names it).';
comment on column supabase_jobs.job_question.prompt is
  'What the owner is asked, in their language.';
comment on column supabase_jobs.job_question.answer_schema is
  'The JSON Schema an answer must satisfy (derived from the handler''s zod schema); job_answer checks its shape.';
comment on column supabase_jobs.job_question.expires_at is
  'Unanswered by then, the job fails (error_code question_unanswered) at the next reclaim.';
create index job_question_open_idx on supabase_jobs.job_question (job_table, expires_at) where answered_at is null;
create index job_question_owner_idx on supabase_jobs.job_question (owner_id);
create index job_retry_of_idx on supabase_jobs.job (retry_of) where retry_of is not null;

-- Whether a string is a calendar date YYYY-MM-DD (the Gregorian leap rule,
-- year 0000 included, as RFC 3339 full-date and zod's date format read it).
create or replace function supabase_jobs.answer_is_date(value text)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $$
declare
  y integer;
  m integer;
  d integer;
begin
  if value !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then
    return false;
  end if;
  y := pg_catalog.substr(value, 1, 4)::integer;
  m := pg_catalog.substr(value, 6, 2)::integer;
  d := pg_catalog.substr(value, 9, 2)::integer;
  return m between 1 and 12 and d between 1 and
    case when m = 2 then case when (y % 4 = 0 and y % 100 <> 0) or y % 400 = 0 then 29 else 28 end
         when m in (4, 6, 9, 11) then 30 else 31 end;
end
$$;
comment on function supabase_jobs.answer_is_date is
  'Whether value is a calendar date YYYY-MM-DD (check_answer''s format date and the date of date-time).';

-- The formats SQL checks exactly by their definition: date, date-time (RFC
-- 3339, an offset or Z), uuid (8-4-4-4-12 hex digits). Any other format (email,
-- ...) and every pattern are JavaScript regular expressions in a zod schema:
-- the store and the worker check them with zod, not SQL.
create or replace function supabase_jobs.answer_format_fits(format text, value text)
returns boolean
language sql immutable parallel safe
set search_path = ''
as $$
  select case format
    when 'date' then supabase_jobs.answer_is_date(value)
    when 'date-time' then
      value ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$'
      and supabase_jobs.answer_is_date(pg_catalog.left(value, 10))
    when 'uuid' then value ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
    else true end
$$;
comment on function supabase_jobs.answer_format_fits is
  'Whether value fits a JSON Schema format check_answer checks (date, date-time, uuid); true for a format it leaves to the store and the worker (email, ...).';

-- Whether an answer fits one branch of anyOf / oneOf.
create or replace function supabase_jobs.answer_fits(answer_schema jsonb, given jsonb, path text)
returns boolean
language plpgsql immutable
set search_path = ''
as $$
begin
  perform supabase_jobs.check_answer(answer_schema, given, path);
  return true;
exception when invalid_parameter_value then
  return false;
end
$$;
comment on function supabase_jobs.answer_fits is
  'Whether given fits answer_schema (check_answer without the error): the branches of anyOf and oneOf.';

-- The shape of an answer, against what a zod schema's JSON Schema declares:
-- type, enum, const, minLength/maxLength, format (answer_format_fits),
-- minimum/maximum and their exclusive forms, multipleOf, properties, required,
-- additionalProperties: false, items, minItems/maxItems, uniqueItems, anyOf,
-- oneOf. Not here: pattern (a JavaScript regular expression, checked by the
-- store and the worker). 22023 names the field.
create or replace function supabase_jobs.check_answer(answer_schema jsonb, given jsonb, path text default 'answer')
returns void
language plpgsql immutable
set search_path = ''
as $$
declare
  want jsonb := answer_schema -> 'type';
  got text := pg_catalog.jsonb_typeof(given);
  k text;
  i integer;
begin
  if answer_schema ? 'anyOf' and not exists (
       select 1 from pg_catalog.jsonb_array_elements(answer_schema -> 'anyOf') b where supabase_jobs.answer_fits(b, given, path)) then
    perform supabase_jobs.invalid(path, pg_catalog.format('%s fits none of the answers this question takes', path));
  end if;
  if answer_schema ? 'oneOf' and (
       select pg_catalog.count(*) from pg_catalog.jsonb_array_elements(answer_schema -> 'oneOf') b where supabase_jobs.answer_fits(b, given, path)) <> 1 then
    perform supabase_jobs.invalid(path, pg_catalog.format('%s must fit exactly one of the answers this question takes', path));
  end if;
  if want is not null and not exists (
       select 1 from pg_catalog.jsonb_array_elements_text(case when pg_catalog.jsonb_typeof(want) = 'array' then want else pg_catalog.jsonb_build_array(want) end) w
        where w = got or (w = 'integer' and case when got = 'number' then given::text::numeric = pg_catalog.trunc(given::text::numeric) else false end)) then
    perform supabase_jobs.invalid(path, pg_catalog.format('%s must be %s; got %s', path,
      case when pg_catalog.jsonb_typeof(want) = 'array' then want::text else want #>> '{}' end, got));
  end if;
  if answer_schema ? 'enum' and not exists (select 1 from pg_catalog.jsonb_array_elements(answer_schema -> 'enum') e where e = given) then
    perform supabase_jobs.invalid(path, pg_catalog.format('%s must be one of %s; got %s', path, answer_schema -> 'enum', left(given::text, 100)));
  end if;
  if answer_schema ? 'const' and given is distinct from answer_schema -> 'const' then
    perform supabase_jobs.invalid(path, pg_catalog.format('%s must be %s', path, answer_schema -> 'const'));
  end if;
  if got = 'string' and (pg_catalog.char_length(given #>> '{}') < coalesce((answer_schema ->> 'minLength')::integer, 0)
                         or pg_catalog.char_length(given #>> '{}') > coalesce((answer_schema ->> 'maxLength')::integer, 2147483647)) then
    perform supabase_jobs.invalid(path, pg_catalog.format('%s must be %s to %s characters', path,
      coalesce(answer_schema ->> 'minLength', '0'), coalesce(answer_schema ->> 'maxLength', 'any number of')));
  end if;
  if got = 'string' and pg_catalog.jsonb_typeof(answer_schema -> 'format') = 'string'
     and not supabase_jobs.answer_format_fits(answer_schema ->> 'format', given #>> '{}') then
    perform supabase_jobs.invalid(path, pg_catalog.format('%s must be a %s; got %s', path, answer_schema ->> 'format', left(given::text, 100)));
  end if;
  if got = 'number' then
    if given::text::numeric < (answer_schema ->> 'minimum')::numeric or given::text::numeric > (answer_schema ->> 'maximum')::numeric
       or given::text::numeric <= (answer_schema ->> 'exclusiveMinimum')::numeric
       or given::text::numeric >= (answer_schema ->> 'exclusiveMaximum')::numeric then
      perform supabase_jobs.invalid(path, pg_catalog.format('%s is out of range; got %s', path, given));
    end if;
    -- JSON numbers are decimals: numeric's remainder is exact (0.3 is a multiple of 0.1).
    if pg_catalog.jsonb_typeof(answer_schema -> 'multipleOf') = 'number' and (answer_schema ->> 'multipleOf')::numeric > 0
       and given::text::numeric % (answer_schema ->> 'multipleOf')::numeric <> 0 then
      perform supabase_jobs.invalid(path, pg_catalog.format('%s must be a multiple of %s; got %s', path, answer_schema -> 'multipleOf', given));
    end if;
  end if;
  if got = 'object' then
    for k in select pg_catalog.jsonb_array_elements_text(coalesce(answer_schema -> 'required', '[]')) loop
      if not given ? k then
        perform supabase_jobs.invalid(path || '.' || k, pg_catalog.format('%s.%s is required', path, k));
      end if;
    end loop;
    for k in select pg_catalog.jsonb_object_keys(given) loop
      if answer_schema -> 'properties' ? k then
        perform supabase_jobs.check_answer(answer_schema -> 'properties' -> k, given -> k, path || '.' || k);
      elsif answer_schema -> 'additionalProperties' = 'false'::jsonb then
        perform supabase_jobs.invalid(path || '.' || k, pg_catalog.format('%s.%s is not part of this answer', path, k));
      end if;
    end loop;
  end if;
  if got = 'array' then
    if pg_catalog.jsonb_array_length(given) < coalesce((answer_schema ->> 'minItems')::integer, 0)
       or pg_catalog.jsonb_array_length(given) > coalesce((answer_schema ->> 'maxItems')::integer, 2147483647) then
      perform supabase_jobs.invalid(path, pg_catalog.format('%s has %s items, out of range', path, pg_catalog.jsonb_array_length(given)));
    end if;
    if answer_schema -> 'uniqueItems' = 'true'::jsonb
       and (select pg_catalog.count(distinct e) from pg_catalog.jsonb_array_elements(given) e) < pg_catalog.jsonb_array_length(given) then
      perform supabase_jobs.invalid(path, pg_catalog.format('%s holds the same item twice', path));
    end if;
    if pg_catalog.jsonb_typeof(answer_schema -> 'items') = 'object' then
      for i in 0 .. pg_catalog.jsonb_array_length(given) - 1 loop
        perform supabase_jobs.check_answer(answer_schema -> 'items', given -> i, path || '[' || i || ']');
      end loop;
    end if;
  end if;
end
$$;
comment on function supabase_jobs.check_answer is
  'Checks an answer against its question''s JSON Schema (type, enum, const, lengths, format date/date-time/uuid, bounds, multipleOf, properties, required, additionalProperties false, items, item counts, uniqueItems, anyOf, oneOf; not pattern, which the store and the worker check); 22023 with field=answer.<path> when it does not fit.';

create or replace function public.job_ask(
  id uuid,
  key text,
  prompt text,
  answer_schema jsonb,
  timeout interval default '1 day'::interval,
  attempt integer default null,
  job_table text default 'jobs'
)
returns jsonb
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  asked supabase_jobs.job_question;
  parked supabase_jobs.job;
  deadline timestamptz := now() + timeout;
begin
  perform supabase_jobs.check_call(id, attempt);
  if key is null or pg_catalog.char_length(key) not between 1 and 100 then
    perform supabase_jobs.invalid('key', 'key names the question within its job: 1 to 100 characters');
  end if;
  if prompt is null or prompt ~ '^[[:space:]]*$' or pg_catalog.char_length(prompt) > 2000 then
    perform supabase_jobs.invalid('prompt', 'prompt is the question for the user: 1 to 2000 characters');
  end if;
  if answer_schema is null or pg_catalog.jsonb_typeof(answer_schema) <> 'object' or pg_catalog.octet_length(answer_schema::text) > 65536 then
    perform supabase_jobs.invalid('answer_schema', 'answer_schema is a JSON Schema object of at most 64 KiB');
  end if;
  if timeout is null or timeout <= interval '0' or timeout > interval '30 days' then
    perform supabase_jobs.invalid('timeout', pg_catalog.format('timeout is more than 0 and at most 30 days; got %s', timeout));
  end if;
  select q.* into asked from supabase_jobs.job_question q where q.job_id = job_ask.id and q.key = job_ask.key;
  if asked.answered_at is not null then
    -- Asked before and answered: the run goes on, still this attempt's (or say why not).
    perform supabase_jobs.park_job(label, id, attempt, 'answer', park => false);
    return pg_catalog.jsonb_build_object('answered', true, 'answer', asked.answer);
  end if;
  parked := supabase_jobs.park_job(label, id, attempt, 'answer');
  insert into supabase_jobs.job_question as q (job_id, key, job_table, owner_id, prompt, answer_schema, expires_at)
  values (parked.id, job_ask.key, label, parked.owner_id, job_ask.prompt, job_ask.answer_schema, deadline)
  on conflict on constraint job_question_pkey do update
    set prompt = excluded.prompt, answer_schema = excluded.answer_schema, asked_at = now(), expires_at = excluded.expires_at;
  return pg_catalog.jsonb_build_object('answered', false, 'expires_at', deadline);
end
$$;
comment on function public.job_ask(uuid, text, text, jsonb, interval, integer, text) is
  'A running job asks its owner a question: the stored answer when this key was answered already ({"answered": true, "answer": ...}, nothing changes); otherwise the question is kept and the job goes running -> waiting, its worker slot free ({"answered": false, "expires_at": ...}). Workers only; 22023 names the field.';

create or replace function public.job_open_question(id uuid, job_table text default 'jobs')
returns setof supabase_jobs.job_question
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  return query
  select q.* from supabase_jobs.job_question q
   where q.job_id = job_open_question.id and q.job_table = label and q.answered_at is null
     and exists (select 1 from supabase_jobs.job t where t.job_table = label and t.id = q.job_id and t.status = 'waiting')
   order by q.asked_at desc
   limit 1;
end
$$;
comment on function public.job_open_question is
  'The question a waiting job asked and nobody answered yet (prompt, answer_schema, expires_at); no row when there is none or the job is not the caller''s (RLS: the owner, or an admin).';

-- The answer's write, as whoever calls it: a worker (is_worker(), decided by privilege
-- in job_answer) directly; a user only through answer_question, which runs as the owner
-- of the tables and passes for_user, so the owner check is never skipped for a user.
create or replace function supabase_jobs.write_answer(label text, id uuid, key text, answer jsonb, for_user boolean)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  j supabase_jobs.job;
  open_question supabase_jobs.job_question;
  user_call boolean := coalesce(for_user, true);
begin
  select t.* into j from supabase_jobs.job t where t.job_table = label and t.id = write_answer.id for update;
  -- Another user's job (or an ownerless one) answers as a job that does not exist.
  if j.id is null or (user_call and not (coalesce(j.owner_id = (select auth.uid()), false) or supabase_jobs.is_admin())) then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  select q.* into open_question from supabase_jobs.job_question q
   where q.job_id = j.id and q.answered_at is null and (write_answer.key is null or q.key = write_answer.key)
   order by q.asked_at desc limit 1;
  if j.status <> 'waiting' or open_question.job_id is null then
    raise exception using errcode = 'SJ003',
      message = pg_catalog.format('job %s is %s with no open question%s: nothing to answer', id, j.status,
        case when write_answer.key is null then '' else ' ' || pg_catalog.quote_literal(write_answer.key) end);
  end if;
  if answer is null or pg_catalog.octet_length(answer::text) > 65536 then
    perform supabase_jobs.invalid('answer', 'answer is a JSON value of at most 64 KiB');
  end if;
  perform supabase_jobs.check_answer(open_question.answer_schema, answer, 'answer');
  update supabase_jobs.job_question as q set answer = write_answer.answer, answered_at = now(), answered_by = (select auth.uid())
   where q.job_id = open_question.job_id and q.key = open_question.key;
  update supabase_jobs.job as t
     set status = 'queued', attempts = t.attempts - 1, available_at = now(), resumed_at = now()
   where t.job_table = label and t.id = j.id
  returning t.* into j;
  j.payload := null;
  return j;
end
$$;
comment on function supabase_jobs.write_answer is
  'job_answer''s write, as its caller: for a user (for_user, or null) the caller must own the job, NULL-safe, or be an admin (anyone else: PT404, as for a job that does not exist); the job must wait on an open question (SJ003), the answer must fit its schema (22023 naming the field); then waiting -> queued, the attempt given back. Workers only (a user may neither write the questions table nor move a job waiting -> queued; a user reaches it through answer_question).';

create or replace function supabase_jobs.answer_question(label text, id uuid, key text, answer jsonb)
returns supabase_jobs.job
language sql
security definer
set search_path = ''
as $$
  select supabase_jobs.write_answer(label, id, key, answer, true);
$$;
comment on function supabase_jobs.answer_question is
  'A user''s answer (job_answer sends every caller RLS restricts here): write_answer with the owner check on, always. Runs as its owner (SECURITY DEFINER): a user may neither write the questions table nor move a job waiting -> queued; it checks the caller first (the owner, NULL-safe, or an admin; anyone else PT404).';

create or replace function public.job_answer(id uuid, answer jsonb, key text default null, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  perform supabase_jobs.check_call(id);
  -- Who is calling, by privilege (is_worker(): RLS not active for the caller): a worker
  -- writes as itself, everyone else (custom roles inheriting authenticated included) as a user.
  if supabase_jobs.is_worker() then
    return supabase_jobs.write_answer(supabase_jobs.job_table_label(job_table), id, key, answer, false);
  end if;
  return supabase_jobs.answer_question(supabase_jobs.job_table_label(job_table), id, key, answer);
end
$$;
comment on function public.job_answer is
  'The owner (or an admin) answers the open question of a waiting job: checked against its answer schema (22023 names the field; the job keeps waiting), then the job is queued again and its handler, run again, gets the answer. SJ003 when no question is open, PT404 for an unknown job or another user''s.';

create or replace function supabase_jobs.expire_questions(label text)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
as $$
begin
  return query
  with due as (
    select q.job_id from supabase_jobs.job_question q
     where q.job_table = label and q.answered_at is null and q.expires_at <= now())
  , expired as (
    update supabase_jobs.job as t
       set status = 'failed', error = supabase_jobs.user_message('question_unanswered', t.locale), error_code = 'question_unanswered'
      from due
     where t.job_table = label and t.id = due.job_id and t.status = 'waiting'
    returning t as j)
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(expired.j, '{"payload": null}'::jsonb) as j from expired offset 0) as w;
end
$$;
comment on function supabase_jobs.expire_questions is
  'Run by the reclaim schedule (reclaim_all): a waiting job whose question is unanswered past its deadline ends failed (error_code question_unanswered, a sentence in the job''s language).';

-- Run by after_jobs_updated when a job that asked (waiting, or resumed) ends;
-- as the owner of the table: the user whose cancel ends the job may not delete from it.
create or replace function supabase_jobs.forget_questions(job_id uuid)
returns void
language sql
set search_path = ''
as $$
  delete from supabase_jobs.job_question q where q.job_id = forget_questions.job_id;
$$;

-- Try again: one insert path, always as the caller. A user's try again or
-- replay (the owner's, or an admin's) is an enqueue under RLS: the admission
-- trigger applies the job owner's quota and the kind registry, as to any
-- enqueue (an admin inserts through the policy admins_try_again, for the old
-- job's owner); only workers, who bypass RLS, skip them.
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

-- A function, not a subquery in the policy: a policy of supabase_jobs.job may not read the table itself.
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

create or replace function supabase_jobs.try_again(label text, id uuid)
returns supabase_jobs.job
language plpgsql
set search_path = ''
as $$
declare
  old supabase_jobs.job;
  user_call boolean := not supabase_jobs.is_worker();
begin
  -- As the caller: a user reads only what RLS shows them (an admin, every job).
  select t.* into old from supabase_jobs.job t where t.job_table = label and t.id = try_again.id;
  -- A user who is not an admin tries again only their own jobs, through job_try_again:
  -- here anything else is a job not found.
  if old.id is null or (user_call and not supabase_jobs.is_admin()) then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  if old.status not in ('failed', 'cancelled') then
    raise exception using errcode = 'SJ002',
      message = pg_catalog.format('job %s is %s: only a failed or cancelled job is tried again', id, old.status);
  end if;
  return supabase_jobs.insert_retry(old);
end
$$;
comment on function supabase_jobs.try_again is
  'job_try_again''s path for admins and workers, as the caller: an admin''s retry is inserted for the old job''s owner under RLS (policy admins_try_again), within that owner''s quota and the registered kinds; a user who is not an admin gets PT404, a job not failed or cancelled, or failed for good, SJ002.';

create or replace function public.job_try_again(id uuid, job_table text default 'jobs')
returns supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  old supabase_jobs.job;
begin
  perform supabase_jobs.check_call(id);
  if not supabase_jobs.is_worker() then
    -- The owner's own job: inserted as the owner, within their quota.
    select t.* into old from supabase_jobs.job t where t.job_table = label and t.id = job_try_again.id;
    if old.id is not null and coalesce(old.owner_id = (select auth.uid()), false) then
      if old.status not in ('failed', 'cancelled') then
        raise exception using errcode = 'SJ002',
          message = pg_catalog.format('job %s is %s: only a failed or cancelled job is tried again', id, old.status);
      end if;
      return supabase_jobs.insert_retry(old);
    end if;
  end if;
  return supabase_jobs.try_again(label, id);
end
$$;
comment on function public.job_try_again is
  'Tries a failed or cancelled job again: a new queued job with its kind, params, owner and options (not its payload, dropped when it ended), retry_of pointing at it; the old row untouched. Again on the same job returns the same new job. The owner (within their quota and the registered kinds) or an admin; SJ002 for a job not failed or cancelled, or failed for good (failed_for_good: trying again would fail the same way), PT404 for an unknown job or another user''s.';

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

create or replace function public.job_replay(
  kind text default null,
  error_code text default null,
  ended_from timestamptz default null,
  ended_to timestamptz default null,
  job_table text default 'jobs',
  "limit" integer default null
)
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
  return query select * from supabase_jobs.replay(supabase_jobs.job_table_label(job_table), kind, error_code, ended_from, ended_to,
    "limit");
end
$$;
comment on function public.job_replay is
  'Admins: tries again every failed job of the table matching the filter (kind, error_code, ended in [ended_from, ended_to)) not tried again yet and not failed for good (failed_for_good: skipped and not counted, trying again would fail the same way), oldest first: the new queued jobs (retry_of set), old rows untouched. More than batch_max() matching: 22023 (field=filter) and nothing written. "limit" (1 to batch_max()): only the oldest that many are tried again; call again while it returns "limit" (a REST reply carries at most max_rows rows). 42501 for anyone but an admin or a worker.';

-- Who may read and call what.
alter table supabase_jobs.job_question enable row level security;
create policy job_question_owner_reads on supabase_jobs.job_question for select to authenticated
  using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()));
create policy job_question_service_role on supabase_jobs.job_question for all to service_role using (true) with check (true);
revoke all on supabase_jobs.job_question from public, anon, authenticated;
grant select on supabase_jobs.job_question to authenticated;
grant select, insert, update, delete on supabase_jobs.job_question to service_role;
grant usage on type supabase_jobs.job_question to authenticated, service_role;

revoke all on function
  public.job_ask, public.job_open_question, public.job_answer, public.job_try_again, public.job_replay,
  supabase_jobs.check_answer, supabase_jobs.answer_fits, supabase_jobs.answer_format_fits,
  supabase_jobs.answer_is_date, supabase_jobs.answer_question, supabase_jobs.write_answer, supabase_jobs.expire_questions,
  supabase_jobs.forget_questions, supabase_jobs.insert_retry, supabase_jobs.try_again, supabase_jobs.replay,
  supabase_jobs.is_retry_of
  from public, anon, authenticated, service_role;
grant execute on function
  public.job_open_question, public.job_answer, public.job_try_again, public.job_replay,
  supabase_jobs.check_answer, supabase_jobs.answer_fits, supabase_jobs.answer_format_fits,
  supabase_jobs.answer_is_date, supabase_jobs.answer_question, supabase_jobs.insert_retry, supabase_jobs.try_again,
  supabase_jobs.replay, supabase_jobs.is_retry_of
  to authenticated, service_role;
-- Try again inserts the link as the caller: the owner for themselves (owner_enqueues),
-- an admin for the owner of a failed or cancelled job of the same kind and table.
grant insert (retry_of) on supabase_jobs.job to authenticated;
create policy admins_try_again on supabase_jobs.job for insert to authenticated
  with check ((select supabase_jobs.is_admin()) and supabase_jobs.is_retry_of(retry_of, job_table, kind, owner_id));
grant execute on function public.job_ask, supabase_jobs.expire_questions, supabase_jobs.write_answer to service_role;
