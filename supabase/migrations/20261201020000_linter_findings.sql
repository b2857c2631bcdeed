-- supabase-jobs — what Supabase's database linter (splinter) found in our objects.
--
-- Purpose: test/sql/linter.test.ts now runs splinter's own rule SQL (vendored in
-- test/sql/splinter/) against the migrated schema. One rule found something
-- these migrations can fix:
--   * 0027 pg_graphql_authenticated_table_exposed: `authenticated` could SELECT
--     supabase_jobs.transitions. Since 20261130210000 no function a signed-in
--     user runs reads it (the guard trigger carries the state machine as an
--     expression; the table is what docs, the TypeScript mirror and tests read,
--     all as the owner or service_role). The grant and the policy for
--     `authenticated` are removed; service_role keeps reading it.
-- What the linter also reports and we keep on purpose (the test lists them):
-- 0027 on the job tables themselves (a user reads their own rows: RLS) and on
-- supabase_jobs.job_tables (the SECURITY INVOKER job_* functions resolve the
-- table label there as the caller). 0018 unsupported_reg_types (the regprocedure
-- column supabase_jobs.attachments.install) was already gone with that table
-- in 20261130210000; the test now keeps it gone.
-- Invariants: every job_* function, the guard and the Realtime policies behave
-- as before; service_role and the owner read supabase_jobs.transitions as before.
-- Breaking: only for a client that read supabase_jobs.transitions as a signed-in
-- user (the schema is not exposed through the Data API, so none through
-- supabase-js); it now gets 42501.

revoke select on supabase_jobs.transitions from authenticated;
alter policy transitions_readable on supabase_jobs.transitions to service_role;
