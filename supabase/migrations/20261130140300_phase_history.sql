-- supabase-jobs 0004 — phase history: the measured timings PhasePlan.fromHistory fits.
--
-- Purpose: read back the phase timings (timings jsonb, written by job_succeed /
-- job_fail from the ProgressTracker) of recent successful jobs of one kind, so a
-- plan's weights and per-kilochar slopes come from real runs instead of guesses.
-- Invariants:
--   * only done jobs with timings count: a failed or cancelled run stopped
--     partway and would drag the medians down;
--   * newest first, at most "limit" rows (1..list_max), so a fit follows the
--     current code rather than last year's;
--   * SECURITY INVOKER: through RLS an authenticated user sees only the history
--     of their own jobs; service_role (the worker) sees every row;
--   * bad input raises 22023 naming the field (DETAIL 'field=<name>').
-- Operator note: served by the <table>_kind_created_idx index (kind, created_at
-- desc); filtered by status on the fly, which is cheap for the default limit.
-- Breaking: no (new function only).

create function public.job_phase_history(kind text, "limit" integer default 50, job_table text default 'jobs')
returns table (timings jsonb, finished_at timestamptz)
language plpgsql stable
set search_path = ''
as $$
declare
  tbl regclass := supabase_jobs.resolve_table(job_table);
begin
  if kind is null or kind = '' then
    perform supabase_jobs.invalid('kind', 'kind is required: a phase history is per kind of work');
  end if;
  if "limit" is null or "limit" < 1 or "limit" > (select l.list_max from supabase_jobs.limits() l) then
    perform supabase_jobs.invalid('limit', format('limit is between 1 and %s; got %s', (select l.list_max from supabase_jobs.limits() l), "limit"));
  end if;
  return query execute format(
    'select t.timings, t.finished_at from %s as t
      where t.kind = $1 and t.status = ''done'' and t.timings is not null and t.is_active
      order by t.finished_at desc, t.id desc
      limit $2', tbl)
    using kind, "limit";
end
$$;
comment on function public.job_phase_history(text, integer, text) is
  'Phase timings of the latest done jobs of a kind, newest first: what PhasePlan.fromHistory fits medians and per-kilochar slopes from.';

revoke all on function public.job_phase_history(text, integer, text) from public, anon, authenticated;
grant execute on function public.job_phase_history(text, integer, text) to authenticated, service_role;
