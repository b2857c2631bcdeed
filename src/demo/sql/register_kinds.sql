-- DEMO ONLY: the demo's kinds, registered so its signed-in (anonymous) visitors
-- may enqueue them (see supabase_jobs.register_job_kind). Idempotent.

select supabase_jobs.register_job_kind('document.analyse');
