-- The demo's kinds, registered so its signed-in (anonymous) visitors may enqueue
-- them (see 20261201001000_kinds_and_quotas.sql). Demo only: not shipped in the package.
-- Breaks nothing.
select supabase_jobs.register_job_kind('document.analyse');
