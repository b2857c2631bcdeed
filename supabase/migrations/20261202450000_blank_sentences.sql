-- supabase-jobs — a failure sentence of only whitespace is refused, whatever the whitespace.
--
-- Purpose: job_fail / job_retry require a sentence for the user (22023,
-- DETAIL field=error, when it is missing). The check used btrim(), which trims
-- spaces only: ' \n\t ' passed, and the user read an empty "why it stopped".
-- Found by the bad-input sweep (test/chaos/bad-input.test.ts).
--
-- Invariant: a required error is refused (22023 field=error) when it is null or
-- holds no character other than whitespace ([[:space:]]: space, tab, newline,
-- carriage return, vertical tab, form feed).
--
-- Breaks nothing: supabase_jobs.check_call is restated with the same signature,
-- volatility, grants and search_path; only the blank test changes.

create or replace function supabase_jobs.check_call(id uuid, attempt int default null, error text default null,
                                                    error_required boolean default false, timings jsonb default null)
returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if id is null then
    perform supabase_jobs.invalid('id', 'id is required');
  end if;
  perform supabase_jobs.check_attempt(attempt);
  if error_required and (error is null or error ~ '^[[:space:]]*$') then
    perform supabase_jobs.invalid('error', 'error is required: say why the job stopped, in a sentence for the user');
  end if;
  if timings is not null and pg_catalog.jsonb_typeof(timings) <> 'object' then
    perform supabase_jobs.invalid('timings', 'timings must be a JSON object of phase -> {seconds, size}');
  end if;
end
$$;
