-- supabase-jobs — the operator views for an admin, over the Data API.
--
-- Purpose: the views of 20261201060000_operator_views.sql answer an operator's
-- questions in Studio (as postgres or service_role). An admin using the app (a
-- user whose JWT says app_metadata.role = 'admin': supabase_jobs.is_admin(),
-- 20261201050000_admin_role.sql) could not read them: supabase_jobs is not
-- exposed through the Data API, and the views were service_role's alone.
-- public.jobs_admin_overview() returns the eight views as one JSON document to
-- an admin (what the demo's /admin page shows), and refuses anyone else.
-- Invariants:
--   * is_admin() stays the one definition of an admin: a caller it does not
--     name gets 42501 (PostgREST answers 403), never figures, not even their own.
--   * Security invoker, like the views: RLS on the job tables decides which
--     rows count, and an admin's policies (owner_reads) read every job.
--   * Never params or payload: the views do not return them.
--   * authenticated may now select the eight views. They sit in supabase_jobs,
--     which is not exposed, so over the API they are reached only through this
--     function; a direct SQL read by a non-admin counts only their own jobs (RLS).
-- Breaks nothing: a new function and new grants.

do $$
declare
  v text;
begin
  foreach v in array array['job_counts', 'job_throughput_hourly', 'job_latency', 'job_failure_rates', 'job_top_errors',
                           'jobs_overrunning', 'jobs_silent', 'owner_usage'] loop
    execute pg_catalog.format('grant select on supabase_jobs.%I to authenticated', v);
  end loop;
end
$$;

create function public.jobs_admin_overview()
returns jsonb
language plpgsql stable
set search_path = ''
as $$
begin
  if not supabase_jobs.is_admin() then
    raise exception 'the jobs overview is for admins only'
      using errcode = '42501',
            hint = 'An admin is a user whose app_metadata.role is ''admin'' (set with the service role: Auth admin API or dashboard); the claim reaches the JWT at the next sign-in or refresh.';
  end if;
  return pg_catalog.jsonb_build_object(
    'generated_at', now(),
    'job_counts', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_counts as v),
    'job_throughput_hourly', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_throughput_hourly as v),
    'job_latency', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_latency as v),
    'job_failure_rates', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_failure_rates as v),
    'job_top_errors', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.job_top_errors as v),
    'jobs_overrunning', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.jobs_overrunning as v),
    'jobs_silent', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.jobs_silent as v),
    'owner_usage', (select coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(v)), '[]') from supabase_jobs.owner_usage as v)
  );
end
$$;
comment on function public.jobs_admin_overview() is
  'For admins (supabase_jobs.is_admin(): app_metadata.role = ''admin''): the operator views of supabase_jobs (job_counts, job_throughput_hourly, job_latency, job_failure_rates, job_top_errors, jobs_overrunning, jobs_silent, owner_usage) as one JSON object keyed by view name, each an array of its rows. Anyone else: 42501.';
revoke all on function public.jobs_admin_overview() from public, anon;
grant execute on function public.jobs_admin_overview() to authenticated;
