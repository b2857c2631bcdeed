-- Stage maps: a record of the caller's own table (a document, an upload) tracks
-- the stages run on it, each with a status, a token and a result. stage_start
-- takes a stage, stage_finish closes it only for the token that started it,
-- stage_cancel closes several. The record table and its columns are checked
-- against the catalog and written with the caller's rights (RLS applies).

create or replace function supabase_jobs.record_table(record_table text)
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

create or replace function supabase_jobs.record_column(tbl regclass, col text, field text)
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

create or replace function supabase_jobs.stage_token_column(tbl regclass, token_column text, token_optional boolean)
returns text
language plpgsql stable
set search_path = ''
as $$
begin
  if token_column is null then
    return null;
  end if;
  if coalesce(token_optional, false) and not exists (
    select from pg_catalog.pg_attribute a
     where a.attrelid = tbl and a.attname = token_column and a.attnum > 0 and not a.attisdropped
  ) then
    return null;
  end if;
  perform supabase_jobs.record_column(tbl, token_column, 'token_column');
  return token_column;
end
$$;

create or replace function public.stage_start(
  record_table text,
  record_id text,
  status_column text,
  token_column text,
  error_column text default null,
  id_column text default 'id',
  token_optional boolean default false
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.record_table(record_table);
  id_type text := supabase_jobs.record_column(tbl, id_column, 'id_column');
  fence text := supabase_jobs.stage_token_column(tbl, token_column, token_optional);
  token uuid := gen_random_uuid();
  found boolean;
begin
  perform supabase_jobs.record_column(tbl, status_column, 'status_column');
  if error_column is not null then
    perform supabase_jobs.record_column(tbl, error_column, 'error_column');
  end if;
  execute format('update %s set %I = ''running''%s%s where %I = $1::%s returning true',
      tbl, status_column,
      case when fence is null then '' else format(', %I = $2', fence) end,
      case when error_column is null then '' else format(', %I = null', error_column) end,
      id_column, id_type)
    into found using record_id, token;
  if found is null then
    raise exception using errcode = 'PT404', message = format('%s has no row %s = %s (or it is not yours)', tbl, id_column, record_id);
  end if;
  -- Without a token column the token is not stored; returning one keeps the API the same.
  return token;
end
$$;
comment on function public.stage_start is
  'Marks a stage running on a record and returns the run''s fencing token. A newer start supersedes any older run. With token_optional, a table without the token column is fenced on status alone.';

create or replace function public.stage_finish(
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
  id_column text default 'id',
  token_optional boolean default false,
  clear_result boolean default false
)
returns boolean
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.record_table(record_table);
  id_type text := supabase_jobs.record_column(tbl, id_column, 'id_column');
  fence text := supabase_jobs.stage_token_column(tbl, token_column, token_optional);
  result_type text;
  sets text;
  written boolean;
begin
  perform supabase_jobs.record_column(tbl, status_column, 'status_column');
  if fence is not null and token is null then
    perform supabase_jobs.invalid('token', 'token is required: pass the one stage_start returned');
  end if;
  if status is null or status not in ('done', 'failed') then
    perform supabase_jobs.invalid('status', format('a run finishes as done or failed; got %L', status));
  end if;
  if coalesce(clear_result, false) and result is not null then
    perform supabase_jobs.invalid('result', 'give a result or clear_result, not both');
  end if;
  sets := format('%I = $3', status_column);
  if result_column is not null then
    result_type := supabase_jobs.record_column(tbl, result_column, 'result_column');
    -- No result keeps the previous one (cancelling a regeneration keeps the old
    -- summary); clearing it is asked for explicitly.
    sets := sets || format(', %1$I = case when $6 then null else coalesce($4::%2$s, %1$I) end', result_column, result_type);
  elsif coalesce(clear_result, false) then
    perform supabase_jobs.invalid('result_column', 'clear_result needs result_column');
  end if;
  if error_column is not null then
    perform supabase_jobs.record_column(tbl, error_column, 'error_column');
    sets := sets || format(', %I = $5', error_column);
  end if;
  execute format('update %s set %s where %I = $1::%s and %I = ''running''%s returning true',
      tbl, sets, id_column, id_type, status_column,
      case when fence is null then '' else format(' and %I = $2', fence) end)
    into written using record_id, token, status, result, error, coalesce(clear_result, false);
  return coalesce(written, false);
end
$$;
comment on function public.stage_finish is
  'Writes a stage''s outcome only if the stage is still running under this run''s token (or, without a token column, still running); false when it is no longer the caller''s. A NULL result keeps the previous one unless clear_result.';

create or replace function public.stage_cancel(
  record_table text,
  record_id text,
  stages jsonb,
  id_column text default 'id'
)
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
  names text[] := '{}';
  status_cols text[] := '{}';
  cancelled text[] := '{}';
  ignored text[] := '{}';
  sets text[] := '{}';
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
    if name = any (names) then
      perform supabase_jobs.invalid('stages', format('stage %L is listed twice', name));
    end if;
    perform supabase_jobs.record_column(tbl, status_col, 'stages');
    if status_col = any (status_cols) then
      perform supabase_jobs.invalid('stages', format('stages %L and %L share the status column %I',
        names[array_position(status_cols, status_col)], name, status_col));
    end if;
    names := names || name;
    status_cols := status_cols || status_col;
    sets := sets || format('%1$I = case when t.%1$I = ''running'' then ''cancelled'' else t.%1$I end', status_col);
  end loop;
  -- One statement: lock the row, keep it as it was (one row value, whatever the
  -- number of stages), and cancel the running ones.
  execute format(
    'with prev as (select * from %1$s where %2$I = $1::%3$s for update)
     update %1$s as t set %4$s from prev where t.%2$I = prev.%2$I returning to_jsonb(prev)',
    tbl, id_column, id_type, array_to_string(sets, ', '))
    into before using record_id;
  if before is null then
    raise exception using errcode = 'PT404', message = format('%s has no row %s = %s (or it is not yours)', tbl, id_column, record_id);
  end if;
  for i in 1 .. array_length(names, 1) loop
    if before ->> status_cols[i] = 'running' then
      cancelled := cancelled || names[i];
    else
      ignored := ignored || names[i];
    end if;
  end loop;
  return jsonb_build_object('cancelled', to_jsonb(cancelled), 'ignored', to_jsonb(ignored));
end
$$;
comment on function public.stage_cancel is
  'Cancels the running stages of a record in one statement; returns {"cancelled": [...], "ignored": [...]} (a finished or never-run stage is ignored, never an error).';

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.record_table, supabase_jobs.record_column, supabase_jobs.stage_token_column,
  public.stage_start, public.stage_finish, public.stage_cancel
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  supabase_jobs.record_table, supabase_jobs.record_column, supabase_jobs.stage_token_column,
  public.stage_start, public.stage_finish, public.stage_cancel
  to authenticated, service_role;
