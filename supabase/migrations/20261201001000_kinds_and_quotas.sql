-- Registered kinds and per-owner quotas: what a signed-in user (anonymous
-- sign-ins included) may queue. 0.1.0 let one PostgREST insert of 500 rows
-- with 500 invented kinds queue 500 billed worker invocations, and put no
-- bound on how many jobs or payload bytes one owner could keep waiting.
--
-- Invariants:
--   * A user (a role row-level security applies to) enqueues only kinds
--     registered for that job table in supabase_jobs.job_kinds; anything else
--     is refused with 22023 (DETAIL field=kind) and nothing is written. The
--     kind '*' opens a table to every kind (an explicit opt-out).
--     Workers (service_role, BYPASSRLS) are trusted server code: not checked.
--   * Per owner and job table, queued + running jobs stay within
--     job_tables.max_active_per_owner (or the kind's own max_active_per_owner,
--     counted over that kind), and their payload bytes within
--     job_tables.max_payload_bytes_per_owner; past either, PT429 (HTTP 429
--     through PostgREST) and nothing is written. Null: no limit.
--   * Both are checked once per statement (transition table), after the rows
--     are in, under a per-owner transaction lock, so concurrent inserts of one
--     owner cannot both slip under a limit; every path (job_enqueue,
--     job_enqueue_many, a direct insert into a job table) is covered.
--
-- Breaks: users can no longer enqueue a kind nobody registered. Register the
-- kinds your users enqueue, in a migration of your own:
--   select supabase_jobs.register_job_kind('document.analyse');
-- Nothing registers kinds implicitly (a worker handling an internal kind must
-- not open it to users by starting).

create table supabase_jobs.job_kinds (
  job_table text not null,
  kind text not null,
  max_active_per_owner integer,
  created_at timestamptz not null default now(),
  primary key (job_table, kind),
  constraint job_kinds_max_active_positive check (max_active_per_owner is null or max_active_per_owner > 0)
);
comment on table supabase_jobs.job_kinds is
  'The kinds users may enqueue, per job table (label as job_* functions take it: ''jobs'', ''schema.name''). Register with supabase_jobs.register_job_kind(kind, job_table). Workers (service role) may enqueue any kind.';
comment on column supabase_jobs.job_kinds.max_active_per_owner is
  'At most this many queued or running jobs of this kind per owner (PT429 past it); null: only the table''s limit applies.';
alter table supabase_jobs.job_kinds enable row level security;
create policy job_kinds_readable on supabase_jobs.job_kinds for select to authenticated, service_role using (true);
create policy job_kinds_service_role_writes on supabase_jobs.job_kinds for all to service_role using (true) with check (true);
revoke all on supabase_jobs.job_kinds from public, anon, authenticated;
grant select on supabase_jobs.job_kinds to authenticated;
grant select, insert, update, delete on supabase_jobs.job_kinds to service_role;

alter table supabase_jobs.job_tables add column max_active_per_owner integer default 1000;
alter table supabase_jobs.job_tables add column max_payload_bytes_per_owner bigint default 104857600;
alter table supabase_jobs.job_tables add constraint job_tables_max_active_positive
  check (max_active_per_owner is null or max_active_per_owner > 0);
alter table supabase_jobs.job_tables add constraint job_tables_max_payload_positive
  check (max_payload_bytes_per_owner is null or max_payload_bytes_per_owner > 0);
comment on column supabase_jobs.job_tables.max_active_per_owner is
  'At most this many queued or running jobs per owner in this table (PT429 past it); null: no limit. Change with: update supabase_jobs.job_tables set max_active_per_owner = 500 where label = ''jobs'';';
comment on column supabase_jobs.job_tables.max_payload_bytes_per_owner is
  'At most this many payload bytes over one owner''s queued and running jobs in this table (PT429 past it); null: no limit.';
-- The admission check reads the limits as the inserting user (job_tables_readable already lets it see the rows).
grant select (label, max_active_per_owner, max_payload_bytes_per_owner) on supabase_jobs.job_tables to authenticated;

-- What a quota counts: one owner's live jobs of one table (few rows, whatever
-- the history). Partial, so finished rows never enter it.
create index job_owner_active_idx on supabase_jobs.job (job_table, owner_id, kind) where status in ('queued', 'running');

create function supabase_jobs.register_job_kind(kind text, job_table text default 'jobs', max_active_per_owner integer default null)
returns void
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if kind is distinct from '*' and not supabase_jobs.kind_is_valid(kind) then
    perform supabase_jobs.invalid('kind', pg_catalog.format('a kind is 1 to %s letters, digits, dots, dashes or underscores; got %L', supabase_jobs.kind_max(), left(kind, 100)));
  end if;
  insert into supabase_jobs.job_kinds as k (job_table, kind, max_active_per_owner)
  values (label, register_job_kind.kind, register_job_kind.max_active_per_owner)
  on conflict on constraint job_kinds_pkey do update set max_active_per_owner = excluded.max_active_per_owner;
end
$$;
comment on function supabase_jobs.register_job_kind(text, text, integer) is
  'Lets users enqueue this kind in this job table (idempotent; sets the kind''s own per-owner limit). Example: select supabase_jobs.register_job_kind(''document.analyse''); The kind ''*'' opens the table to any kind (not recommended: any signed-in user may then invent kinds).';
revoke all on function supabase_jobs.register_job_kind(text, text, integer) from public, anon, authenticated;
grant execute on function supabase_jobs.register_job_kind(text, text, integer) to service_role;

-- AFTER INSERT ... FOR EACH STATEMENT, as the inserting role (so "is this a
-- user" is decided by privilege, and a user's counts see their own rows).
-- Named to fire before after_jobs_inserted: a refused statement sends nothing.
create function supabase_jobs.admit_jobs_inserted()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  bad record;
begin
  if supabase_jobs.is_worker() then
    return null;
  end if;
  select i.kind, i.job_table into bad
    from inserted i
   where not exists (select 1 from supabase_jobs.job_kinds k where k.job_table = i.job_table and k.kind in (i.kind, '*'))
   limit 1;
  if found then
    raise exception using errcode = '22023',
      message = pg_catalog.format('kind %L is not registered for job table %s: nothing was queued', bad.kind, bad.job_table),
      detail = 'field=kind',
      hint = 'Register it as the service role: select supabase_jobs.register_job_kind(kind, job_table);';
  end if;

  -- One lock per owner in the statement, in a fixed order (no deadlock between two such statements).
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('supabase_jobs.quota:' || o.owner_id::text, 0))
     from (select distinct i.owner_id from inserted i where i.owner_id is not null order by 1) o;

  select t.label as job_table, a.owner_id, t.max_active_per_owner as lim, a.n, 'max_active_per_owner' as quota into bad
    from (select j.job_table, j.owner_id, pg_catalog.count(*) as n
            from supabase_jobs.job j
           where j.status in ('queued', 'running')
             and (j.job_table, j.owner_id) in (select distinct i.job_table, i.owner_id from inserted i)
           group by 1, 2) a
    join supabase_jobs.job_tables t on t.label = a.job_table
   where t.max_active_per_owner is not null and a.n > t.max_active_per_owner
   limit 1;
  if not found then
    select k.job_table, a.owner_id, k.max_active_per_owner as lim, a.n, 'max_active_per_owner of kind ' || k.kind as quota into bad
      from (select j.job_table, j.owner_id, j.kind, pg_catalog.count(*) as n
              from supabase_jobs.job j
             where j.status in ('queued', 'running')
               and (j.job_table, j.owner_id, j.kind) in (select distinct i.job_table, i.owner_id, i.kind from inserted i)
             group by 1, 2, 3) a
      join supabase_jobs.job_kinds k on k.job_table = a.job_table and k.kind = a.kind
     where k.max_active_per_owner is not null and a.n > k.max_active_per_owner
     limit 1;
  end if;
  if found then
    raise exception using errcode = 'PT429',
      message = pg_catalog.format('too many jobs waiting: %s queued or running would pass the limit of %s (%s) in %s; nothing was queued',
        bad.n, bad.lim, bad.quota, bad.job_table),
      detail = 'quota=' || pg_catalog.split_part(bad.quota, ' ', 1),
      hint = 'Wait for some to finish, or raise the limit in supabase_jobs.job_tables / supabase_jobs.job_kinds.';
  end if;

  select t.label as job_table, t.max_payload_bytes_per_owner as lim, a.n into bad
    from (select j.job_table, j.owner_id, pg_catalog.sum(pg_catalog.octet_length(j.payload)) as n
            from supabase_jobs.job j
           where j.status in ('queued', 'running') and j.payload is not null
             and (j.job_table, j.owner_id) in (select distinct i.job_table, i.owner_id from inserted i where i.payload is not null)
           group by 1, 2) a
    join supabase_jobs.job_tables t on t.label = a.job_table
   where t.max_payload_bytes_per_owner is not null and a.n > t.max_payload_bytes_per_owner
   limit 1;
  if found then
    raise exception using errcode = 'PT429',
      message = pg_catalog.format('too much data waiting: %s payload bytes queued or running would pass the limit of %s in %s; nothing was queued',
        bad.n, bad.lim, bad.job_table),
      detail = 'quota=max_payload_bytes_per_owner',
      hint = 'Wait for some jobs to finish, or raise supabase_jobs.job_tables.max_payload_bytes_per_owner.';
  end if;
  return null;
end
$$;
comment on function supabase_jobs.admit_jobs_inserted() is
  'AFTER INSERT statement trigger on supabase_jobs.job and every job table: for users (not workers), refuses unregistered kinds (22023, field=kind) and statements that pass a per-owner quota (PT429, quota=<limit>).';
revoke all on function supabase_jobs.admit_jobs_inserted() from public, anon, authenticated;

-- WHEN: a worker's insert (row security not active) does not even call the function.
create trigger admit_jobs_inserted after insert on supabase_jobs.job
  referencing new table as inserted for each statement
  when (pg_catalog.row_security_active('supabase_jobs.job'::regclass))
  execute function supabase_jobs.admit_jobs_inserted();

-- Every partition carries the statement triggers of the parent.
create or replace function supabase_jobs.attach_admission(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
begin
  execute pg_catalog.format('drop trigger if exists admit_jobs_inserted on %s', tbl);
  execute pg_catalog.format('create trigger admit_jobs_inserted after insert on %s referencing new table as inserted for each statement when (pg_catalog.row_security_active(%L::regclass)) execute function supabase_jobs.admit_jobs_inserted()', tbl, tbl::text);
end
$$;
revoke all on function supabase_jobs.attach_admission(regclass) from public, anon, authenticated;

do $$
declare
  t regclass;
begin
  for t in select j.table_name from supabase_jobs.job_tables j loop
    perform supabase_jobs.attach_admission(t);
  end loop;
end
$$;

-- create_job_table installs it on new job tables from 20261201050000_admin_role.sql
-- on (which rewrites that function once for both).

