-- supabase-jobs: job_get_many, one read for many jobs.
--
-- Purpose: a screen that starts many watches at once (a list of jobs, each with
-- its bar) made one job_get request per watch for the first read. Measured on
-- the bench's 1,000 Realtime watches, those 1,000 requests (not what the
-- watches hold) were most of the process's memory growth: +52 MiB of RSS with
-- them, +6 to +17 MiB with the first reads taken away. JobStore now gathers the
-- first reads of watches started together into one call of this function.
--
-- Invariants: the same rows job_get returns — payload omitted, only the jobs
-- the caller may read (SECURITY INVOKER: RLS decides, a user sees their own
-- jobs), of the one job table named. Ids that name no readable job are simply
-- absent (the caller reports each as not found, like job_get's PT404). At most
-- list_max() ids per call. Grants as every read: authenticated and
-- service_role; planned once per session like the other hot functions.
--
-- Breaks: nothing (a new function).

create function public.job_get_many(ids uuid[], job_table text default 'jobs')
returns setof supabase_jobs.job
language plpgsql stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if ids is null then
    perform supabase_jobs.invalid('ids', 'ids is required: an array of job ids');
  elsif pg_catalog.cardinality(ids) > supabase_jobs.list_max() then
    perform supabase_jobs.invalid('ids', pg_catalog.format('at most %s ids per call; got %s', supabase_jobs.list_max(), pg_catalog.cardinality(ids)));
  end if;
  -- Terminal rows hold no payload (CHECK); queued and running rows are blanked
  -- with a scalar call per row (a function in FROM would copy the row type's
  -- descriptor per row, see 20261201010000).
  return query
  select (w.j).* from (
    select pg_catalog.jsonb_populate_record(t, '{"payload": null}'::jsonb) as j
      from supabase_jobs.job as t
     where t.job_table = label and t.id = any (ids)
    offset 0) as w;
end
$$;
comment on function public.job_get_many(uuid[], text) is
  'The jobs of the given ids that the caller may read (payload omitted), in no particular order; unknown or unreadable ids are absent. At most list_max() ids.';
revoke all on function public.job_get_many(uuid[], text) from public, anon, authenticated;
grant execute on function public.job_get_many(uuid[], text) to authenticated, service_role;
