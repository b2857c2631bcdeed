-- supabase-jobs — the owner indexes leave out jobs that have no owner.
--
-- Purpose: jobs enqueued by the service role for no user (system work,
-- schedules, batch imports) were written into job_owner_created_idx and
-- job_owner_active_idx under a null owner that no query ever looks up:
-- every user reads by owner_id = auth.uid(), and the quotas count by owner.
-- Each such job paid for those entries at enqueue, at claim and at close
-- (a status change is never a HOT update). A batch of 500 ownerless jobs
-- took about 12% less server time without them (pgbench, same server).
--
-- Invariants: a user's listing and the per-owner quotas read the same
-- indexes as before (owner_id = x implies owner_id is not null, so the
-- planner still proves the predicate, for the quota's join too).
--
-- Breaks nothing. The two indexes are built again on every job table: the
-- build holds a lock that blocks writes to the job tables while it runs
-- (a partitioned table cannot be indexed concurrently); on a large table,
-- apply it at a quiet time.

drop index supabase_jobs.job_owner_created_idx;
create index job_owner_created_idx on supabase_jobs.job (owner_id, created_at desc, id desc) where owner_id is not null;

drop index supabase_jobs.job_owner_active_idx;
create index job_owner_active_idx on supabase_jobs.job (job_table, owner_id, kind)
  where status in ('queued', 'running') and owner_id is not null;
