-- supabase-jobs 0004 — stage-map writes: several stages' status on the record itself.
--
-- Purpose: the seed's StageMap as atomic SQL. A record the interface already
-- shows (a document, say) carries per stage a status column, an error column, a
-- result column and a run-token column, named by the application (StageMap in
-- TypeScript resolves the names). These functions write them compare-and-set in
-- ONE statement each, so ownership is decided by the database, not by a record
-- read minutes earlier.
-- Invariants:
--   * stage_start always takes the stage: it writes status 'running' and a fresh
--     fencing token, and returns the token; an older run still working loses it;
--   * stage_finish writes only while status is 'running' AND the token is the
--     caller's: an old run can never overwrite a newer run's result, even when
--     both saw 'running'; it returns false (not an error) when the stage is no
--     longer the caller's — the user cancelled, or a newer run restarted it;
--   * finishing without a result keeps the previous result;
--   * stage_cancel moves running stages to 'cancelled' and reports finished ones
--     as ignored, never as an error; there is no cascade;
--   * table and column names are checked against the catalog before any dynamic
--     SQL; the functions are SECURITY INVOKER, so RLS and grants of the caller apply.
-- Breaking: no (new functions only).

create function supabase_jobs.record_column(tbl regclass, col text, field text)
returns text
language plpgsql stable
set search_path = ''
as $$
declare
  col_type text;
begin
  if col is null then
    perform supabase_jobs.invalid(field, format('%s is required', field));
  end if;
  select pg_catalog.format_type(a.atttypid, a.atttypmod) into col_type
    from pg_catalog.pg_attribute a
   where a.attrelid = tbl and a.attname = col and a.attnum > 0 and not a.attisdropped;
  if col_type is null then
    perform supabase_jobs.invalid(field, format('%s has no column %L', tbl, col));
  end if;
  return col_type;
end
$$;
revoke all on function supabase_jobs.record_column(regclass, text, text) from public;
grant execute on function supabase_jobs.record_column(regclass, text, text) to authenticated, service_role;

create function supabase_jobs.record_table(record_table text)
returns regclass
language plpgsql stable
set search_path = ''
as $$
declare
  tbl regclass;
begin
  if record_table is null or record_table !~ '^([a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}$' then
    perform supabase_jobs.invalid('record_table', format('record_table must be a lowercase table name; got %L', left(record_table, 100)));
  end if;
  tbl := pg_catalog.to_regclass(case when position('.' in record_table) > 0 then record_table else 'public.' || record_table end);
  if tbl is null then
    raise exception using errcode = '42P01', message = format('table %s does not exist', record_table);
  end if;
  return tbl;
end
$$;
revoke all on function supabase_jobs.record_table(text) from public;
grant execute on function supabase_jobs.record_table(text) to authenticated, service_role;

create function public.stage_start(
  record_table text,
  record_id text,
  status_column text,
  token_column text,
  error_column text default null,
  id_column text default 'id'
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.record_table(record_table);
  id_type text := supabase_jobs.record_column(tbl, id_column, 'id_column');
  token uuid;
begin
  perform supabase_jobs.record_column(tbl, status_column, 'status_column');
  perform supabase_jobs.record_column(tbl, token_column, 'token_column');
  if error_column is not null then
    perform supabase_jobs.record_column(tbl, error_column, 'error_column');
  end if;
  execute format('update %s set %I = ''running'', %I = gen_random_uuid()%s where %I = $1::%s returning %I',
      tbl, status_column, token_column,
      case when error_column is null then '' else format(', %I = null', error_column) end,
      id_column, id_type, token_column)
    into token using record_id;
  if token is null then
    raise exception using errcode = 'PT404', message = format('%s has no row %s = %s (or it is not yours)', tbl, id_column, record_id);
  end if;
  return token;
end
$$;
comment on function public.stage_start(text, text, text, text, text, text) is
  'Marks a stage running on a record and returns the run''s fencing token. A newer start supersedes any older run.';

create function public.stage_finish(
  record_table text,
  record_id text,
  status_column text,
  token_column text,
  token uuid,
  status text,
  result_column text default null,
  result text default null,
  error_column text default null,
  error text default null,
  id_column text default 'id'
)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.record_table(record_table);
  id_type text := supabase_jobs.record_column(tbl, id_column, 'id_column');
  result_type text;
  sets text;
  written boolean;
begin
  perform supabase_jobs.record_column(tbl, status_column, 'status_column');
  perform supabase_jobs.record_column(tbl, token_column, 'token_column');
  if token is null then
    perform supabase_jobs.invalid('token', 'token is required: pass the one stage_start returned');
  end if;
  if status is null or status not in ('done', 'failed') then
    perform supabase_jobs.invalid('status', format('a run finishes as done or failed; got %L', status));
  end if;
  sets := format('%I = $3', status_column);
  if result_column is not null then
    result_type := supabase_jobs.record_column(tbl, result_column, 'result_column');
    -- No result keeps the previous one: cancelling a regeneration keeps the old summary.
    sets := sets || format(', %1$I = coalesce($4::%2$s, %1$I)', result_column, result_type);
  end if;
  if error_column is not null then
    perform supabase_jobs.record_column(tbl, error_column, 'error_column');
    sets := sets || format(', %I = $5', error_column);
  end if;
  execute format('update %s set %s where %I = $1::%s and %I = ''running'' and %I = $2 returning true',
      tbl, sets, id_column, id_type, status_column, token_column)
    into written using record_id, token, status, result, error;
  return coalesce(written, false);
end
$$;
comment on function public.stage_finish(text, text, text, text, uuid, text, text, text, text, text, text) is
  'Writes a stage''s outcome only if the stage is still running under this run''s token; false when it is no longer the caller''s (cancelled, or restarted by a newer run).';

create function public.stage_cancel(record_table text, record_id text, stages jsonb, id_column text default 'id')
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.record_table(record_table);
  id_type text := supabase_jobs.record_column(tbl, id_column, 'id_column');
  stage jsonb;
  name text;
  status_col text;
  cancelled text[] := '{}';
  ignored text[] := '{}';
  sets text[] := '{}';
  probes text[] := '{}';
  before jsonb;
begin
  if stages is null or jsonb_typeof(stages) <> 'array' or jsonb_array_length(stages) = 0 then
    perform supabase_jobs.invalid('stages', 'stages is a non-empty array of {"stage": name, "status": status column}');
  end if;
  for stage in select value from jsonb_array_elements(stages) loop
    name := stage ->> 'stage';
    status_col := stage ->> 'status';
    if name is null then
      perform supabase_jobs.invalid('stages', 'every stage needs a "stage" name');
    end if;
    perform supabase_jobs.record_column(tbl, status_col, 'stages');
    sets := sets || format('%1$I = case when t.%1$I = ''running'' then ''cancelled'' else t.%1$I end', status_col);
    probes := probes || format('%L, old.%I', name, status_col);
  end loop;
  -- One statement: lock the row, read each stage's status as it was, and cancel
  -- the running ones.
  execute format(
    'with old as (select * from %1$s where %2$I = $1::%3$s for update)
     update %1$s as t set %4$s from old where t.%2$I = old.%2$I returning jsonb_build_object(%5$s)',
    tbl, id_column, id_type, array_to_string(sets, ', '), array_to_string(probes, ', '))
    into before using record_id;
  if before is null then
    raise exception using errcode = 'PT404', message = format('%s has no row %s = %s (or it is not yours)', tbl, id_column, record_id);
  end if;
  for stage in select value from jsonb_array_elements(stages) loop
    name := stage ->> 'stage';
    if before ->> name = 'running' then
      cancelled := cancelled || name;
    else
      ignored := ignored || name;
    end if;
  end loop;
  return jsonb_build_object('cancelled', to_jsonb(cancelled), 'ignored', to_jsonb(ignored));
end
$$;
comment on function public.stage_cancel(text, text, jsonb, text) is
  'Cancels the running stages of a record in one statement; returns {"cancelled": [...], "ignored": [...]} (a finished or never-run stage is ignored, never an error).';

revoke all on function public.stage_start(text, text, text, text, text, text) from public, anon;
revoke all on function public.stage_finish(text, text, text, text, uuid, text, text, text, text, text, text) from public, anon;
revoke all on function public.stage_cancel(text, text, jsonb, text) from public, anon;
-- SECURITY INVOKER: a caller can only write what its own grants and RLS allow.
grant execute on function public.stage_start(text, text, text, text, text, text) to authenticated, service_role;
grant execute on function public.stage_finish(text, text, text, text, uuid, text, text, text, text, text, text) to authenticated, service_role;
grant execute on function public.stage_cancel(text, text, jsonb, text) to authenticated, service_role;
