-- Kinds, quotas and concurrency limits. Signed-in users may enqueue only the
-- kinds registered for a job table (register_job_kind; '*' opens a table to
-- every kind), within per-owner quotas of live jobs and payload bytes and the
-- priorities the kind lets a user choose (user_priority_min..max, default up
-- to 0, so no user jumps another's jobs); the admission trigger checks them per
-- statement (22023 / PT429, nothing queued). Workers claim kinds with
-- concurrency limits through admit(), which holds a job back while its kind or
-- its concurrency_key is at its limit, its kind is paused, or its kind's rate
-- window is full (the admin actions that set those: 17_admin_actions).

create table supabase_jobs.job_kinds (
  job_table            text not null,
  kind                 text not null,
  max_active_per_owner integer,
  created_at           timestamptz not null default now(),
  user_priority_min    smallint not null default -32768,
  user_priority_max    smallint not null default 0,
  primary key (job_table, kind),
  constraint job_kinds_max_active_positive check (max_active_per_owner is null or max_active_per_owner > 0),
  constraint job_kinds_user_priority_range check (user_priority_min <= 0 and user_priority_max >= 0)
);
comment on table supabase_jobs.job_kinds is
  'The kinds users may enqueue, per job table (label as job_* functions take it: ''jobs'', ''schema.name''). Register with supabase_jobs.register_job_kind(kind, job_table). Workers (service role) may enqueue any kind.';
comment on column supabase_jobs.job_kinds.user_priority_max is
  'The highest priority a user may give a job of this kind (default 0: no user jumps another''s jobs); user_priority_min the lowest (default -32768). Out of the range a user''s enqueue is refused with 22023 naming priority; workers choose freely.';
comment on column supabase_jobs.job_kinds.max_active_per_owner is
  'At most this many queued or running jobs of this kind per owner (PT429 past it); null: only the table''s limit applies.';

create table supabase_jobs.kind_limits (
  job_table           text not null,
  kind                text not null,
  max_running         integer,
  max_running_per_key integer,
  updated_at          timestamptz not null default now(),
  paused_at           timestamptz,
  rate_starts         integer,
  rate_per_ms         integer,
  primary key (job_table, kind),
  constraint kind_limits_max_running_positive check (max_running is null or max_running > 0),
  constraint kind_limits_max_running_per_key_positive check (max_running_per_key is null or max_running_per_key > 0),
  constraint kind_limits_rate_whole check ((rate_starts is null) = (rate_per_ms is null) and (rate_starts is null or (rate_starts > 0 and rate_per_ms > 0)))
);
comment on table supabase_jobs.kind_limits is
  'What holds a kind back at claim, per job table: max_running across all workers, max_running_per_key per concurrency_key (job_set_concurrency), a pause (job_pause_kind / job_resume_kind) and a rate limit (job_set_rate_limit). A row exists only while one of them is set, so a table without any keeps the unlimited claim.';
comment on column supabase_jobs.kind_limits.paused_at is
  'Set: an admin paused the kind (job_pause_kind); no job of it is claimed until job_resume_kind.';
comment on column supabase_jobs.kind_limits.rate_starts is
  'At most this many jobs of the kind start in any rate_per_ms milliseconds (job_set_rate_limit); null: no rate limit.';
comment on column supabase_jobs.kind_limits.rate_per_ms is
  'The sliding window of rate_starts, in milliseconds.';

-- The starts of rate-limited kinds, for the sliding window: admit() adds each
-- claim's starts to the row of their hundredth of the window and drops the rows
-- older than the window.
create table supabase_jobs.kind_starts (
  job_table  text not null,
  kind       text not null,
  started_at timestamptz not null,
  starts     integer not null,
  primary key (job_table, kind, started_at)
);
comment on table supabase_jobs.kind_starts is
  'Recent starts of each rate-limited kind (kind_limits.rate_starts): how many jobs admit() let start up to started_at (the end of a hundredth of the kind''s window, so a window holds at most ~100 rows). Rows older than the window are dropped as new ones come.';

create or replace function supabase_jobs.drop_empty_kind_limits(label text, kind text)
returns void
language sql
set search_path = ''
as $$
  delete from supabase_jobs.kind_limits l
   where l.job_table = label and l.kind = drop_empty_kind_limits.kind
     and l.max_running is null and l.max_running_per_key is null and l.paused_at is null and l.rate_starts is null
$$;
comment on function supabase_jobs.drop_empty_kind_limits is
  'Deletes a kind''s kind_limits row once nothing in it is set, so a table with no limit, pause or rate claims on the unlimited path.';

create or replace function supabase_jobs.register_job_kind(
  kind text,
  job_table text default 'jobs',
  max_active_per_owner integer default null,
  user_priority_min integer default -32768,
  user_priority_max integer default 0
)
returns void
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  if kind is distinct from '*' and not coalesce(supabase_jobs.kind_is_valid(kind), false) then
    perform supabase_jobs.invalid('kind', pg_catalog.format('a kind is 1 to %s letters, digits, dots, dashes or underscores; got %L', supabase_jobs.kind_max(), left(kind, 100)));
  end if;
  if user_priority_min is null or user_priority_min not between supabase_jobs.priority_min() and 0 then
    perform supabase_jobs.invalid('user_priority_min', pg_catalog.format('user_priority_min is from %s to 0 (a user may always choose the default, 0); got %s', supabase_jobs.priority_min(), user_priority_min));
  end if;
  if user_priority_max is null or user_priority_max not between 0 and supabase_jobs.priority_max() then
    perform supabase_jobs.invalid('user_priority_max', pg_catalog.format('user_priority_max is from 0 to %s (a user may always choose the default, 0); got %s', supabase_jobs.priority_max(), user_priority_max));
  end if;
  insert into supabase_jobs.job_kinds as k (job_table, kind, max_active_per_owner, user_priority_min, user_priority_max)
  values (label, register_job_kind.kind, register_job_kind.max_active_per_owner, register_job_kind.user_priority_min, register_job_kind.user_priority_max)
  on conflict on constraint job_kinds_pkey do update set max_active_per_owner = excluded.max_active_per_owner,
    user_priority_min = excluded.user_priority_min, user_priority_max = excluded.user_priority_max;
end
$$;
comment on function supabase_jobs.register_job_kind is
  'Lets users enqueue this kind in this job table (idempotent; sets the kind''s own per-owner limit and the priorities a user may choose, user_priority_min..user_priority_max, default -32768..0: no user''s job jumps the default). Example: select supabase_jobs.register_job_kind(''document.analyse''); The kind ''*'' opens the table to any kind (not recommended: any signed-in user may then invent kinds).';

create or replace function supabase_jobs.check_user_priority(label text, kind text, priority integer, prefix text default '')
returns void
language plpgsql stable
set search_path = ''
as $$
declare
  k record;
begin
  if priority is null or priority = 0 then
    return;
  end if;
  -- The kind's own row, else the table's '*' row (an unregistered kind is refused by the admission trigger).
  select r.user_priority_min as lo, r.user_priority_max as hi into k
    from supabase_jobs.job_kinds r
   where r.job_table = label and r.kind in (check_user_priority.kind, '*')
   order by r.kind = '*'
   limit 1;
  if found and priority not between k.lo and k.hi then
    perform supabase_jobs.invalid(prefix || 'priority', pg_catalog.format('priority of a %s job is from %s to %s for a user; got %s (only a worker chooses beyond it)',
      kind, k.lo, k.hi, priority));
  end if;
end
$$;
comment on function supabase_jobs.check_user_priority is
  'Raises 22023 naming priority when a user''s priority is outside the range its kind declares (job_kinds.user_priority_min / user_priority_max; the table''s ''*'' row for a kind without its own). 0, the default, always passes.';

create or replace function supabase_jobs.admit_jobs_inserted()
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
  -- A user's priority within its kind's range (a try again keeps the priority its first job was given).
  perform supabase_jobs.check_user_priority(p.job_table, p.kind, p.priority)
     from (select distinct i.job_table, i.kind, i.priority from inserted i where i.priority <> 0 and i.retry_of is null) p;

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
comment on function supabase_jobs.admit_jobs_inserted is
  'AFTER INSERT statement trigger on supabase_jobs.job and every job table: for users (not workers), refuses unregistered kinds (22023, field=kind) and statements that pass a per-owner quota (PT429, quota=<limit>).';

create trigger admit_jobs_inserted after insert on supabase_jobs.job
  referencing new table as inserted for each statement
  when (pg_catalog.row_security_active('supabase_jobs.job'::regclass))
  execute function supabase_jobs.admit_jobs_inserted();

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

create or replace function supabase_jobs.hold_of(label text, kind text, concurrency_key text)
returns table (held_by text, running integer, max_running integer)
language plpgsql stable
security definer
set search_path = ''
as $$
declare
  lim supabase_jobs.kind_limits;
  n integer;
begin
  select l.* into lim from supabase_jobs.kind_limits l where l.job_table = label and l.kind = hold_of.kind;
  if lim.kind is null then
    return;
  end if;
  if lim.paused_at is not null then
    return query select 'paused'::text, null::integer, null::integer;
    return;
  end if;
  if lim.max_running_per_key is not null and concurrency_key is not null then
    select pg_catalog.count(*) into n from supabase_jobs.job s
     where s.job_table = label and s.status = 'running' and s.kind = hold_of.kind and s.concurrency_key = hold_of.concurrency_key;
    if n >= lim.max_running_per_key then
      return query select 'key'::text, n, lim.max_running_per_key;
      return;
    end if;
  end if;
  if lim.max_running is not null then
    select pg_catalog.count(*) into n from supabase_jobs.job s
     where s.job_table = label and s.status = 'running' and s.kind = hold_of.kind;
    if n >= lim.max_running then
      return query select 'kind'::text, n, lim.max_running;
      return;
    end if;
  end if;
  -- The rate window full: running = starts in the window, max_running = starts allowed.
  if lim.rate_starts is not null then
    select coalesce(pg_catalog.sum(s.starts), 0)::integer into n from supabase_jobs.kind_starts s
     where s.job_table = label and s.kind = hold_of.kind
       and s.started_at > pg_catalog.clock_timestamp() - lim.rate_per_ms * interval '1 millisecond';
    if n >= lim.rate_starts then
      return query select 'rate'::text, n, lim.rate_starts;
    end if;
  end if;
end
$$;
comment on function supabase_jobs.hold_of is
  'What holds a queued job of this kind and key back, if anything: paused (the kind is paused), key or kind (a concurrency limit is full: running of max_running), rate (the rate window is full: running = starts in the window, max_running = starts allowed). Runs as its owner (SECURITY DEFINER): it counts the running jobs of every owner behind a limit, rows a user may not read; users reach it only through hold_of_job, for their own job.';

create or replace function supabase_jobs.hold_of_job(job_id uuid)
returns table (held_by text, running integer, max_running integer)
language sql stable
security definer
set search_path = ''
as $$
  select h.held_by, h.running, h.max_running
    from supabase_jobs.job j
    cross join lateral supabase_jobs.hold_of(j.job_table, j.kind, j.concurrency_key) h
   where j.id = job_id
     and (j.owner_id = (select auth.uid()) or supabase_jobs.is_admin())
$$;
comment on function supabase_jobs.hold_of_job is
  'What holds one queued job back (see hold_of), answered only for the caller''s own job or for an admin. Runs as its owner (SECURITY DEFINER): it answers hold_of (every owner''s running jobs) for one job, after checking the job is the caller''s own (or the caller an admin), NULL-safe.';

-- Volatile: admit() records the starts of rate-limited kinds it lets through.
create or replace function supabase_jobs.admissible(label text, candidates uuid[])
returns setof uuid
language plpgsql
set search_path = ''
as $$
begin
  return query
  select a.id from supabase_jobs.admit(label, null, coalesce(pg_catalog.cardinality(candidates), 0), candidates) as a(id);
end
$$;

create or replace function supabase_jobs.admit(label text, kinds text[], "limit" integer, ids uuid[] default null)
returns setof uuid
language plpgsql
rows 10
set search_path = ''
-- The running count reads the running index by a plain index scan, which marks
-- the entries of jobs no longer running dead as it passes them; a bitmap scan
-- never does, so each claim visited the heap for every job run since the last
-- vacuum (docs/architecture.md, "Dead index entries and admit()").
set enable_bitmapscan = off
as $$
declare
  -- The table's limited kinds, and for each (same position): the starts it has
  -- left now (null: no bound), its max_running_per_key, its rate_starts.
  lim_kinds text[];
  lim_left integer[];
  lim_per_key integer[];
  lim_rate integer[];
  -- Running jobs per "<kind> <key>" (a kind never holds a space).
  key_names text[];
  key_running integer[];
  rated boolean;
  candidates refcursor;
  c record;
  at integer;
  key_at integer;
  key_of text;
  taken integer := 0;
  want integer := admit."limit";
  bound integer;
  clock timestamptz := pg_catalog.clock_timestamp();
  rate_n jsonb := '{}';
  skip text[] := '{}';
  started text[] := '{}';
begin
  -- In one statement: the table's limits, and its running jobs counted once
  -- per kind and per kind and key (a handful of rows: the partial index on
  -- running jobs). Arrays, not a map: each candidate below costs a lookup and
  -- an increment in place, where a jsonb map was rebuilt for each
  -- (docs/architecture.md, "Dead index entries and admit()").
  with g as (
    select s.kind, s.concurrency_key, pg_catalog.count(*)::integer as n, grouping(s.concurrency_key) = 1 as by_kind
      from supabase_jobs.job s
     where s.job_table = label and s.status = 'running'
     group by grouping sets ((s.kind), (s.kind, s.concurrency_key)))
  select l.kinds, l.lefts, l.per_key, l.rate, l.rated,
         coalesce((select pg_catalog.array_agg(g.kind || ' ' || g.concurrency_key) from g where not g.by_kind and g.concurrency_key is not null), '{}'),
         coalesce((select pg_catalog.array_agg(g.n) from g where not g.by_kind and g.concurrency_key is not null), '{}')
    into lim_kinds, lim_left, lim_per_key, lim_rate, rated, key_names, key_running
    from (select coalesce(pg_catalog.array_agg(l.kind order by l.kind), '{}') as kinds,
                 pg_catalog.array_agg(case when l.paused_at is not null then 0
                                           else l.max_running - coalesce((select g.n from g where g.by_kind and g.kind = l.kind), 0) end
                                      order by l.kind) as lefts,
                 pg_catalog.array_agg(l.max_running_per_key order by l.kind) as per_key,
                 pg_catalog.array_agg(l.rate_starts order by l.kind) as rate,
                 coalesce(pg_catalog.bool_or(l.rate_starts is not null), false) as rated
            from supabase_jobs.kind_limits l where l.job_table = label) l;
  -- Rate (17_admin_actions): the starts in each rate-limited kind's window
  -- bound what it has left. Only when the table limits a rate.
  if rated then
    select coalesce(pg_catalog.jsonb_object_agg(l.kind, w.n), '{}') into rate_n
      from supabase_jobs.kind_limits l
      cross join lateral (select coalesce(pg_catalog.sum(s.starts), 0)::integer as n from supabase_jobs.kind_starts s
                           where s.job_table = label and s.kind = l.kind
                             and s.started_at > clock - l.rate_per_ms * interval '1 millisecond') w
     where l.job_table = label and l.rate_starts is not null;
    for at in 1 .. pg_catalog.cardinality(lim_kinds) loop
      if lim_rate[at] is not null then
        lim_left[at] := least(lim_left[at], lim_rate[at] - (rate_n ->> lim_kinds[at])::integer);
      end if;
    end loop;
  end if;
  -- A kind with nothing left (paused, at max_running, its rate window full) is
  -- left out of the queue read, so it hides no other kind; and a claim whose
  -- kinds are all bounded takes at most what they have left: the read stops
  -- there instead of locking candidates behind it that no limit would let start.
  for at in 1 .. pg_catalog.cardinality(lim_kinds) loop
    if lim_left[at] <= 0 then
      lim_left[at] := 0;
      skip := skip || lim_kinds[at];
    end if;
  end loop;
  if ids is null and kinds is not null then
    select case when pg_catalog.bool_and(x.left_of is not null) then pg_catalog.sum(x.left_of) end into bound
      from (select distinct u.kind, lim_left[pg_catalog.array_position(lim_kinds, u.kind)] as left_of
              from pg_catalog.unnest(kinds) as u(kind)) x;
    want := least(want, bound);
  end if;
  if ids is null then
    open candidates for
      select n.id, n.kind, n.concurrency_key from supabase_jobs.job as n
       where n.job_table = label and n.status = 'queued' and n.available_at <= now() and n.attempts < n.max_attempts
         and (admit.kinds is null or n.kind = any (admit.kinds))
         and n.kind <> all (skip)
         and (n.expires_at is null or n.expires_at > now())
       order by n.priority desc, n.available_at, n.created_at, n.id
       limit greatest(want * 20, 200)
       -- Each candidate is locked as it is read: the loop stops at the jobs it takes.
       for update skip locked;
  else
    open candidates for
      select j.id, j.kind, j.concurrency_key
        from pg_catalog.unnest(ids) with ordinality as x(id, ord)
        join supabase_jobs.job j on j.job_table = label and j.id = x.id
       -- Only jobs a claim would take: a start counted against a rate is a real one.
       where j.status = 'queued' and j.available_at <= now() and j.attempts < j.max_attempts
         and (j.expires_at is null or j.expires_at > now())
       order by x.ord;
  end if;
  while taken < want loop
    fetch candidates into c;
    exit when not found;
    at := pg_catalog.array_position(lim_kinds, c.kind);
    if at is not null then
      continue when lim_left[at] = 0;
      if lim_per_key[at] is not null and c.concurrency_key is not null then
        key_of := c.kind || ' ' || c.concurrency_key;
        key_at := pg_catalog.array_position(key_names, key_of);
        if key_at is null then
          key_names := key_names || key_of;
          key_running := key_running || 0;
          key_at := pg_catalog.cardinality(key_names);
        end if;
        continue when key_running[key_at] >= lim_per_key[at];
        -- Taken: it counts against its key and kind for the candidates behind it.
        key_running[key_at] := key_running[key_at] + 1;
      end if;
      lim_left[at] := lim_left[at] - 1;
      if lim_rate[at] is not null then
        started := started || c.kind;
      end if;
    end if;
    taken := taken + 1;
    return next c.id;
  end loop;
  close candidates;
  if started <> '{}' then
    select rate_n || pg_catalog.jsonb_object_agg(x.kind, coalesce((rate_n ->> x.kind)::integer, 0) + x.n) into rate_n
      from (select u.kind, pg_catalog.count(*)::integer as n from pg_catalog.unnest(started) as u(kind) group by u.kind) x;
    -- Each start at the end of its hundredth of the window: at most ~100 rows
    -- per window to add up, and a start counts a little longer, never shorter.
    insert into supabase_jobs.kind_starts as k (job_table, kind, started_at, starts)
    select label, x.kind,
           pg_catalog.to_timestamp(pg_catalog.ceil(pg_catalog.date_part('epoch', clock) * 1000 / greatest(l.rate_per_ms / 100, 1))
                                   * greatest(l.rate_per_ms / 100, 1) / 1000.0),
           pg_catalog.count(*)::integer
      from pg_catalog.unnest(started) as x(kind)
      join supabase_jobs.kind_limits l on l.job_table = label and l.kind = x.kind
     group by x.kind, l.rate_per_ms
    on conflict (job_table, kind, started_at) do update set starts = k.starts + excluded.starts;
    delete from supabase_jobs.kind_starts s using supabase_jobs.kind_limits l
     where s.job_table = label and l.job_table = label and l.kind = s.kind and s.kind = any (started)
       and s.started_at <= clock - l.rate_per_ms * interval '1 millisecond';
  end if;
  -- A full rate window holding queued jobs: tell the runners when it frees a
  -- start (NOTIFY, as a retry's backoff does), so one starts then, not at the next poll.
  if rate_n <> '{}' then
    -- And leave a due wake-up for then (the edge worker has no timer of its own).
    perform pg_catalog.pg_notify('supabase_jobs', pg_catalog.json_build_object(
              'job_table', label, 'kind', f.kind, 'kinds', pg_catalog.json_build_array(f.kind),
              'count', 1, 'available_at', f.frees_at, 'reason', 'rate')::text),
            supabase_jobs.leave_due_wakeup(f.frees_at, label, f.kind)
       from (select l.kind, pg_catalog.min(s.started_at) + l.rate_per_ms * interval '1 millisecond' as frees_at
               from supabase_jobs.kind_limits l
               join supabase_jobs.kind_starts s on s.job_table = label and s.kind = l.kind
                and s.started_at > clock - l.rate_per_ms * interval '1 millisecond'
              where l.job_table = label and l.rate_starts is not null and l.paused_at is null
                and (rate_n ->> l.kind)::integer >= l.rate_starts
                and (admit.kinds is null or l.kind = any (admit.kinds))
              group by l.kind, l.rate_per_ms) f
      where exists (select 1 from supabase_jobs.job j
                     where j.job_table = label and j.kind = f.kind and j.status = 'queued' and j.available_at <= now());
  end if;
end
$$;
comment on function supabase_jobs.admit is
  'Up to "limit" jobs that may start now under the table''s kind_limits (concurrency, pause, rate), in claim order: from the queue (kinds null: any kind) or, given ids, from those of them a claim would take, in that order. Records the starts of rate-limited kinds in kind_starts, and NOTIFYs supabase_jobs (reason rate, available_at) when a full rate window holds queued jobs.';

create or replace function public.job_set_concurrency(
  kind text,
  max_running integer default null,
  max_running_per_key integer default null,
  job_table text default 'jobs'
)
returns void
language plpgsql
set search_path = ''
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
begin
  -- A null kind is no kind (kind_is_valid(null) is null): refused here, not by the table's NOT NULL.
  if not coalesce(supabase_jobs.kind_is_valid(kind), false) then
    perform supabase_jobs.invalid('kind', pg_catalog.format('not a kind: %L', left(kind, 100)));
  end if;
  if max_running is not null and max_running < 1 then
    perform supabase_jobs.invalid('max_running', pg_catalog.format('max_running is at least 1; got %s', max_running));
  end if;
  if max_running_per_key is not null and max_running_per_key < 1 then
    perform supabase_jobs.invalid('max_running_per_key', pg_catalog.format('max_running_per_key is at least 1; got %s', max_running_per_key));
  end if;
  insert into supabase_jobs.kind_limits as l (job_table, kind, max_running, max_running_per_key)
  values (label, job_set_concurrency.kind, job_set_concurrency.max_running, job_set_concurrency.max_running_per_key)
  on conflict on constraint kind_limits_pkey do update
     set max_running = excluded.max_running, max_running_per_key = excluded.max_running_per_key, updated_at = now();
  -- Both null: no limit (the row goes when no pause or rate limit keeps it).
  perform supabase_jobs.drop_empty_kind_limits(label, job_set_concurrency.kind);
end
$$;
comment on function public.job_set_concurrency is
  'Limits how many jobs of a kind run at once: max_running across all workers, max_running_per_key per concurrency_key (null: no limit; both null removes the limits). Service role.';

-- Security: users read the registered kinds, workers write them; the concurrency,
-- pause and rate state is the workers' (admins act on it through the policies
-- of 17_admin_actions).
alter table supabase_jobs.job_kinds enable row level security;
create policy job_kinds_readable on supabase_jobs.job_kinds for select to authenticated, service_role using (true);
create policy job_kinds_service_role_writes on supabase_jobs.job_kinds for all to service_role using (true) with check (true);
revoke all on supabase_jobs.job_kinds from public, anon, authenticated;
grant select on supabase_jobs.job_kinds to authenticated;
grant select, insert, update, delete on supabase_jobs.job_kinds to service_role;

alter table supabase_jobs.kind_limits enable row level security;
create policy kind_limits_service_role on supabase_jobs.kind_limits for all to service_role using (true) with check (true);
revoke all on supabase_jobs.kind_limits from public, anon, authenticated;
grant select, insert, update, delete on supabase_jobs.kind_limits to service_role;

alter table supabase_jobs.kind_starts enable row level security;
create policy kind_starts_service_role on supabase_jobs.kind_starts for all to service_role using (true) with check (true);
revoke all on supabase_jobs.kind_starts from public, anon, authenticated;
grant select, insert, update, delete on supabase_jobs.kind_starts to service_role;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.register_job_kind, supabase_jobs.check_user_priority, supabase_jobs.admit_jobs_inserted,
  supabase_jobs.attach_admission, supabase_jobs.hold_of, supabase_jobs.hold_of_job, supabase_jobs.admissible,
  supabase_jobs.admit, public.job_set_concurrency
  from public, anon, authenticated, service_role;

-- Users and workers: each checks its caller (RLS, ownership, the attempt); the helpers run as the caller.
grant execute on function
  supabase_jobs.check_user_priority, supabase_jobs.hold_of_job
  to authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.register_job_kind, supabase_jobs.hold_of, supabase_jobs.admissible, supabase_jobs.admit,
  public.job_set_concurrency
  to service_role;
