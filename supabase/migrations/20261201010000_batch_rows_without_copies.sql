-- supabase-jobs: batch functions return their rows without a function call per row in FROM.
--
-- Purpose: job_succeed_many and job_cancel (and job_enqueue_many) returned their
-- rows through `cross join lateral supabase_jobs.without_payload(row)`. A
-- function in FROM that returns a composite makes PostgreSQL copy the row
-- type's descriptor on every call (ExecMakeTableFunctionResult ->
-- lookup_rowtype_tupdesc_copy), and the descriptor of supabase_jobs.job carries
-- every CHECK and DEFAULT expression as text: profiled with perf, that copy was
-- ~12% of the server's time in `runWorkers` claim + complete, and ~18 us per
-- row of a 500-row job_enqueue_many (21.7 ms -> 12.6 ms for 500 rows).
--   * job_succeed_many and job_cancel return the updated rows as they are: a
--     done or cancelled row never holds a payload (CHECK
--     job_terminal_has_no_payload), so blanking it was a no-op.
--   * job_enqueue_many blanks the payload with a plain (scalar) call of
--     jsonb_populate_record per row, expanded outside an `offset 0` subquery.
--
-- Invariants: same signatures, return types, grants, checks, errors and rows
-- (payload null in every row returned); only the final SELECT of each changed.
-- Each keeps `set plan_cache_mode = force_generic_plan` (20261130210000 set it on
-- these hot functions; create or replace would otherwise drop it).
--
-- Breaks: nothing.
--
-- job_enqueue_many gets the same final SELECT where it is written next, with the
-- options it gains (20261201030000_enqueue_options.sql).

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

create or replace function public.job_cancel(id uuid, reason text default null, job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  perform supabase_jobs.check_call(id);
  return query
  with cancelled as (
    update supabase_jobs.job as t set status = 'cancelled', error = supabase_jobs.sentence(reason)
     where t.job_table = label and t.id = job_cancel.id and t.status in ('queued', 'running')
    returning t.*)
  -- cancelled rows hold no payload (CHECK job_terminal_has_no_payload): returned as they are.
  select c.* from cancelled as c;
end
$$;
