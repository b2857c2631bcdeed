-- Parent and child jobs, part 1: the status a parent waits in.
--
-- Purpose: a job that enqueued children can wait for them without holding a
-- worker slot: it leaves `running` for `waiting` and comes back to `queued`
-- when its last child ends (20261202100100_parent_child_jobs.sql writes the
-- transitions, the resume and the cascade).
-- Invariants: `waiting` is neither terminal nor claimable; nothing reclaims it
-- (no worker holds it). Its own migration: PostgreSQL refuses to use an enum
-- value in the transaction that added it, and each migration is one transaction.
-- Breaks: code that switches over every job_status meets a sixth value.

alter type public.job_status add value if not exists 'waiting' after 'running';
comment on type public.job_status is
  'Where a job is in its life: queued -> running -> done | failed | cancelled (cancelled is terminal, not a failure); running -> waiting -> queued while a parent waits for its children. See docs/state-machine.md.';
