-- What an installation starts with, once every object above exists: the
-- default job table, public.jobs (a partition of supabase_jobs.job with its
-- triggers, RLS, grants and comments), and the pg_cron schedules where pg_cron
-- is enabled (otherwise a notice says how to install them later).

select supabase_jobs.create_job_table('jobs');
select supabase_jobs.install_schedules();
