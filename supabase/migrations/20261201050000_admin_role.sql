-- An admin role for operators: a user whose JWT carries app_metadata.role =
-- 'admin' reads and cancels every job, through the Data API and Realtime (any
-- owner's list topic jobs:<uid>, any job's topic job:<id>). app_metadata is set
-- by the service role (Auth admin API / dashboard); a user cannot write it
-- (user_metadata is theirs, app_metadata is not), so the claim cannot be forged
-- by signing up.
--
-- Invariants:
--   * supabase_jobs.is_admin() is the one definition of "admin" (the JWT claim).
--   * Ordinary users still read, cancel and follow only their own jobs.
--   * An admin is still a user to the state machine: it may cancel (and
--     reschedule a queued job), never claim, tick or close (the guard decides
--     by privilege, and an admin's role is authenticated).
--   * Enqueueing stays the owner's own: an admin enqueues as themselves.
--
-- Breaks nothing for existing users; the policies owner_reads and owner_cancels
-- are recreated on the parent and every job table with the admin clause.

create function supabase_jobs.is_admin()
returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce((select auth.jwt()) -> 'app_metadata' ->> 'role', '') = 'admin';
end
$$;
comment on function supabase_jobs.is_admin() is
  'True when the caller''s JWT says app_metadata.role = ''admin'' (set by the service role; users cannot write app_metadata): reads and cancels every job.';
revoke all on function supabase_jobs.is_admin() from public;
grant execute on function supabase_jobs.is_admin() to authenticated, service_role;

-- The read and cancel policies, admin-aware, on one table.
create function supabase_jobs.attach_admin_policies(tbl regclass)
returns void
language plpgsql
set search_path = ''
as $$
begin
  execute pg_catalog.format('drop policy if exists owner_reads on %s', tbl);
  execute pg_catalog.format('create policy owner_reads on %s for select to authenticated using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()))', tbl);
  execute pg_catalog.format('drop policy if exists owner_cancels on %s', tbl);
  execute pg_catalog.format('create policy owner_cancels on %s for update to authenticated using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin())) with check (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()))', tbl);
end
$$;
revoke all on function supabase_jobs.attach_admin_policies(regclass) from public, anon, authenticated;

select supabase_jobs.attach_admin_policies('supabase_jobs.job'::regclass);
do $$
declare
  t regclass;
begin
  for t in select j.table_name from supabase_jobs.job_tables j loop
    perform supabase_jobs.attach_admin_policies(t);
  end loop;
end
$$;

-- New job tables get them too.
create or replace function supabase_jobs.create_job_table(name text, schema_name text default 'public')
returns regclass
language plpgsql
set search_path = ''
as $$
declare
  tbl regclass;
  qualified text;
  label text;
begin
  if name is null or name !~ '^[a-z_][a-z0-9_]{0,47}$' then
    perform supabase_jobs.invalid('name', pg_catalog.format('a job table name is lowercase letters, digits and _ (at most 48), starting with a letter or _; got %L', left(name, 100)));
  end if;
  if schema_name is null or schema_name !~ '^[a-z_][a-z0-9_]{0,62}$' then
    perform supabase_jobs.invalid('schema_name', pg_catalog.format('schema_name must be a lowercase identifier; got %L', left(schema_name, 100)));
  end if;
  if schema_name in ('supabase_jobs', 'auth', 'realtime', 'storage', 'pg_catalog', 'information_schema') then
    perform supabase_jobs.invalid('schema_name', pg_catalog.format('job tables do not belong in schema %s', schema_name));
  end if;
  qualified := pg_catalog.format('%I.%I', schema_name, name);
  if pg_catalog.to_regclass(qualified) is not null then
    perform supabase_jobs.invalid('name', pg_catalog.format('%s already exists', qualified));
  end if;
  label := case when schema_name = 'public' then name else schema_name || '.' || name end;

  execute pg_catalog.format('create table %s partition of supabase_jobs.job for values in (%L)', qualified, label);
  tbl := qualified::regclass;
  execute pg_catalog.format('alter table %s add primary key (id)', tbl);
  execute pg_catalog.format('alter table %s alter column job_table set default %L', tbl, label);
  insert into supabase_jobs.job_tables (table_name, label) values (tbl, label);
  perform supabase_jobs.attach_partition(tbl);
  perform supabase_jobs.attach_admission(tbl);
  perform supabase_jobs.attach_admin_policies(tbl);
  return tbl;
end
$$;

-- Realtime: an admin may follow any owner's list topic and any job's topic.
create or replace function supabase_jobs.owns_job_topic(topic text)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  uid uuid := (select auth.uid());
begin
  if uid is null or topic is null then
    return false;
  end if;
  if topic = 'jobs:' || uid::text then
    return true;
  end if;
  if supabase_jobs.is_admin() then
    return topic ~ '^jobs?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
  end if;
  if topic !~ '^job:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    return false;
  end if;
  -- This runs as the owner, so RLS does not check ownership for us: one
  -- primary-key probe per job table.
  return exists (select 1 from supabase_jobs.job j where j.id = pg_catalog.substr(topic, 5)::uuid and j.owner_id = uid);
end
$$;
-- A redefinition resets the function's settings: plan once per session again.
alter function supabase_jobs.owns_job_topic(text) set plan_cache_mode = force_generic_plan;
