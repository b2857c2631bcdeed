-- The kick path: how a worker learns there is work. A statement that queues
-- claimable jobs wakes the worker function once through pg_net (kick_body,
-- signed with the secret in Vault) and sends one NOTIFY for local runners; a
-- job requeued by a reclaim or a resume notifies too; a job queued for later
-- (run_at, a retry's backoff) leaves a due wake-up that the due schedule sends
-- at its time; the backstop schedule wakes the worker when a job has waited
-- claimable for too long. A kick that fails is a warning: the backstop
-- catches what it missed.

create or replace function supabase_jobs.worker_endpoint(out url text, out secret text)
returns record
language plpgsql stable
set search_path = ''
as $$
begin
  if pg_catalog.to_regclass('vault.decrypted_secrets') is null then
    return;
  end if;
  -- The URL first, through the name's index: where none is set (a Node-runner-only
  -- project), every enqueue asks this and no row is read, let alone decrypted.
  select nullif(pg_catalog.btrim(s.decrypted_secret), '') into url
    from vault.decrypted_secrets s where s.name = 'supabase_jobs_worker_url'
   order by s.updated_at desc limit 1;
  if url is null then
    return;
  end if;
  select nullif(s.decrypted_secret, '') into secret
    from vault.decrypted_secrets s where s.name = 'supabase_jobs_worker_secret'
   order by s.updated_at desc limit 1;
end
$$;
comment on function supabase_jobs.worker_endpoint is
  'The worker URL and secret from Vault (names supabase_jobs_worker_url, supabase_jobs_worker_secret). Executable by its owner only.';

create or replace function supabase_jobs.kick_token(secret text, at bigint)
returns text
language plpgsql immutable
set search_path = ''
as $$
declare
  k bytea := pg_catalog.convert_to(secret, 'UTF8');
  inner_key bytea;
  outer_key bytea;
  i int;
begin
  if pg_catalog.length(k) > 64 then
    k := pg_catalog.sha256(k);
  end if;
  k := k || pg_catalog.decode(pg_catalog.repeat('00', 64 - pg_catalog.length(k)), 'hex');
  inner_key := k;
  outer_key := k;
  for i in 0..63 loop
    inner_key := pg_catalog.set_byte(inner_key, i, pg_catalog.get_byte(k, i) # 54);
    outer_key := pg_catalog.set_byte(outer_key, i, pg_catalog.get_byte(k, i) # 92);
  end loop;
  return 'v1.' || at || '.' || pg_catalog.encode(
    pg_catalog.sha256(outer_key || pg_catalog.sha256(inner_key || pg_catalog.convert_to('v1.' || at, 'UTF8'))), 'hex');
end
$$;
comment on function supabase_jobs.kick_token is
  'The Bearer token of one wake-up: v1.<unix seconds>.<hex HMAC-SHA256(secret, "v1.<unix seconds>")>. The worker accepts it for 5 minutes.';

create or replace function supabase_jobs.kick_body(body jsonb)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
  endpoint record;
begin
  -- The endpoint first: unset, it is one index probe (pg_net's signature is parsed only when it is set).
  endpoint := supabase_jobs.worker_endpoint();
  if endpoint.url is null or endpoint.secret is null
     or pg_catalog.to_regprocedure('net.http_post(text, jsonb, jsonb, jsonb, integer)') is null then
    return null;
  end if;
  begin
    return net.http_post(
      url := endpoint.url,
      body := body,
      params := '{}'::jsonb,
      headers := pg_catalog.jsonb_build_object('Content-Type', 'application/json', 'Authorization',
        'Bearer ' || supabase_jobs.kick_token(endpoint.secret, pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.now()))::bigint)),
      timeout_milliseconds := (select s.kick_timeout_ms from supabase_jobs.settings s where s.id)
    );
  exception when others then
    raise warning using message = pg_catalog.format('supabase_jobs: the worker was not woken (%s); the backstop schedule will wake it', sqlerrm);
    return null;
  end;
end
$$;
comment on function supabase_jobs.kick_body is
  'POSTs one wake-up with the given body to the worker through pg_net (after commit). Null when pg_net, Vault or the secrets are missing. Never raises. Runs as its owner (SECURITY DEFINER): it reads the worker''s endpoint and secret from Vault, which no caller may read.';

create or replace function supabase_jobs.kick(
  job_table text,
  kind text default null,
  job_id uuid default null,
  count integer default 1,
  reason text default 'enqueue'
)
returns bigint
language sql
security definer
set search_path = ''
as $$
  select supabase_jobs.kick_body(pg_catalog.jsonb_build_object(
    'job_id', job_id, 'job_table', job_table, 'kind', kind, 'count', count, 'reason', reason))
$$;
comment on function supabase_jobs.kick is
  'POSTs a wake-up to the worker through pg_net (after commit). Returns the request id, or null when pg_net, Vault or the secrets are missing. Never raises. Runs as its owner (SECURITY DEFINER): it reads the worker''s endpoint and secret from Vault, which no caller may read.';

-- A wake-up owed to one job only carries its id: when that job moves (a
-- reschedule, a retry) its old wake-up goes, so a job never holds more than
-- one however often it is rescheduled. A time two jobs (or a rate window)
-- share carries none and stays until due.
create table supabase_jobs.due_wakeups (
  due_at    timestamptz not null,
  job_table text not null,
  kind      text not null,
  job_id    uuid,
  constraint due_wakeups_pkey primary key (due_at, job_table, kind)
);
comment on table supabase_jobs.due_wakeups is
  'Wake-ups owed to jobs queued for later (run_at, delay, a retry''s backoff, a reschedule): one row per time, job table and kind, written when such a job is queued (only where pg_net and pg_cron exist to send them) and taken by supabase_jobs.kick_due (the supabase-jobs-due schedule) once due.';
comment on column supabase_jobs.due_wakeups.job_id is
  'The one job this wake-up is owed to, null when several jobs or a rate window share its time: the job''s next requeue or reschedule deletes it (at most one per job).';
create index due_wakeups_job_idx on supabase_jobs.due_wakeups (job_id) where job_id is not null;

create or replace function supabase_jobs.due_wakeups_sent()
returns boolean
language sql
stable
set search_path = ''
as $$
  select pg_catalog.to_regprocedure('net.http_post(text, jsonb, jsonb, jsonb, integer)') is not null
     and pg_catalog.to_regclass('cron.job') is not null
$$;
comment on function supabase_jobs.due_wakeups_sent is
  'Whether due wake-ups (supabase_jobs.due_wakeups) are sent here: pg_net posts them and pg_cron runs kick_due. Where not, none is left to pile up.';

create or replace function supabase_jobs.after_jobs_inserted()
returns trigger
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  summary record;
begin
  -- One pass over the statement's rows: it refuses a row that does not start
  -- queued and untouched, checks the row rules of the others (job_row_rules
  -- raises naming the rule a row breaks), and builds the wake-up's body; the kinds
  -- are listed apart (a second pass, sorted) only when the statement mixed several.
  select pg_catalog.min(i.status::text) filter (where not fresh) as refused,
         pg_catalog.bool_and(case when fresh then supabase_jobs.job_row_rules(i.id, i.kind, i.status, i.params, i.payload,
           i.error, i.attempts, i.max_attempts, i.started_at, i.finished_at, i.progress, i.stage, i.locale, i.timings,
           i.heartbeat_ms, i.tags, i.idempotency_key, i.concurrency_key, i.parent_id, i.expected_seconds) end) as rules_held,
         pg_catalog.count(*)::integer as n,
         pg_catalog.min(i.available_at) as available_at,
         pg_catalog.count(*) filter (where i.available_at <= pg_catalog.now())::integer as claimable,
         pg_catalog.bool_or(i.owner_id is not null or i.parent_id is not null) as watched,
         -- job_table / kind / job_id are set when the statement is about one of each,
         -- null otherwise (a worker then drains every kind it handles).
         pg_catalog.jsonb_build_object(
           'job_table', case when pg_catalog.min(i.job_table) = pg_catalog.max(i.job_table) then pg_catalog.min(i.job_table) end,
           'kind', case when pg_catalog.min(i.kind) = pg_catalog.max(i.kind) then pg_catalog.min(i.kind) end,
           'kinds', case when pg_catalog.min(i.kind) = pg_catalog.max(i.kind) then pg_catalog.jsonb_build_array(pg_catalog.min(i.kind))
                    else (select pg_catalog.to_jsonb(pg_catalog.array_agg(distinct k.kind order by k.kind))
                            from inserted k where k.status = 'queued') end,
           'job_id', case when pg_catalog.count(*) = 1 then (pg_catalog.array_agg(i.id))[1] end,
           'count', pg_catalog.count(*)) as body
    into summary
    from inserted i
         cross join lateral (select i.status = 'queued' and i.attempts = 0 and i.started_at is null
                                    and i.finished_at is null and i.progress = 0 as fresh) f;
  if summary.refused is not null then
    raise exception using errcode = 'SJ001',
      message = pg_catalog.format('a job starts queued with no attempts and no progress; got status %s', summary.refused);
  end if;
  if summary.n = 0 then
    return null;
  end if;
  perform pg_catalog.pg_notify('supabase_jobs', (summary.body || pg_catalog.jsonb_build_object(
    'available_at', summary.available_at, 'reason', 'enqueue'))::text);
  if summary.claimable > 0 then
    perform supabase_jobs.kick_body(summary.body || '{"reason": "enqueue"}'::jsonb);
  end if;
  if summary.claimable < summary.n and supabase_jobs.due_wakeups_sent() then
    insert into supabase_jobs.due_wakeups as w (due_at, job_table, kind, job_id)
    select i.available_at, i.job_table, i.kind, case when pg_catalog.count(*) = 1 then (pg_catalog.array_agg(i.id))[1] end
      from inserted i
     where i.status = 'queued' and i.available_at > pg_catalog.now()
     group by i.available_at, i.job_table, i.kind
    on conflict on constraint due_wakeups_pkey do update set job_id = null where w.job_id is not null;
  end if;
  if summary.watched then
    perform supabase_jobs.send_job_messages(pg_catalog.array_agg(m.topic), pg_catalog.array_agg(m.body))
       from inserted i join supabase_jobs.job_messages m on m.job_table = i.job_table and m.id = i.id
      where i.status = 'queued' and (i.owner_id is not null or i.parent_id is not null);
  end if;
  return null;
end
$$;
comment on function supabase_jobs.after_jobs_inserted is
  'AFTER INSERT statement trigger on supabase_jobs.job and on every job table: refuses a row that does not start queued and untouched (SJ001) and checks the row rules of the rest (job_row_rules, 23514), then one NOTIFY supabase_jobs and one wake-up (pg_net) per statement, a due wake-up (supabase_jobs.due_wakeups) per time of the jobs queued for later, and the Realtime message of each job someone can already follow (an owned job, a child). Runs as its owner (SECURITY DEFINER): a user''s enqueue must wake the worker (Vault, pg_net), leave due wake-ups and send Realtime messages: tables the user may not read or write.';

create trigger after_jobs_inserted after insert on supabase_jobs.job
  referencing new table as inserted
  for each statement execute function supabase_jobs.after_jobs_inserted();

create or replace function supabase_jobs.notify_requeued(job_table text, kind text, job_id uuid, available_at timestamptz)
returns void
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('supabase_jobs', pg_catalog.json_build_object(
    'job_table', job_table, 'kind', kind, 'job_id', job_id,
    'count', 1, 'available_at', available_at, 'reason', 'requeue')::text);
  -- The job moved: the wake-up owed to it alone (its old time) goes; a time shared with another job stays.
  delete from supabase_jobs.due_wakeups as w where w.job_id = notify_requeued.job_id;
  if available_at <= pg_catalog.now() then
    perform supabase_jobs.kick_body(pg_catalog.jsonb_build_object(
      'job_table', job_table, 'kind', kind, 'kinds', pg_catalog.jsonb_build_array(kind),
      'job_id', job_id, 'count', 1, 'reason', 'requeue'));
  elsif supabase_jobs.due_wakeups_sent() then
    insert into supabase_jobs.due_wakeups as w (due_at, job_table, kind, job_id)
    values (notify_requeued.available_at, notify_requeued.job_table, notify_requeued.kind, notify_requeued.job_id)
    on conflict on constraint due_wakeups_pkey do update set job_id = null where w.job_id is not null;
  end if;
end
$$;
comment on function supabase_jobs.notify_requeued is
  'Run by after_jobs_updated (as the owner of the tables) when a job goes running or waiting -> queued, or a queued job is rescheduled: NOTIFY supabase_jobs that a retried, released, reclaimed, resumed or rescheduled job is claimable again, and wake the worker through pg_net (supabase_jobs.kick_body) when it is claimable now, or leave a due wake-up (supabase_jobs.due_wakeups) for when its backoff ends; the wake-up owed to this job alone at its old time is deleted, so a job holds at most one.';

create or replace function supabase_jobs.backstop()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  waited interval := (select s.backstop_after from supabase_jobs.settings s where s.id);
  batch record;
  sent integer := 0;
begin
  for batch in
    select j.job_table, j.kind, pg_catalog.count(*)::integer as n from supabase_jobs.job as j
     where j.status = 'queued' and j.available_at <= now() - waited
       -- A paused kind has nothing to claim; its resume wakes the worker (17_admin_actions).
       and not exists (select 1 from supabase_jobs.kind_limits l
                        where l.job_table = j.job_table and l.kind = j.kind and l.paused_at is not null)
     group by j.job_table, j.kind order by j.job_table, j.kind
  loop
    if supabase_jobs.kick(batch.job_table, batch.kind, null, batch.n, 'backstop') is not null then
      sent := sent + 1;
    end if;
  end loop;
  return sent;
end
$$;
comment on function supabase_jobs.backstop is
  'The supabase-jobs-backstop schedule: one wake-up per job table and kind (not paused) with jobs claimable for longer than settings.backstop_after. Returns the number queued.';

create or replace function supabase_jobs.leave_due_wakeup(due_at timestamptz, job_table text, kind text)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if due_at is null or not pg_catalog.isfinite(due_at) then
    perform supabase_jobs.invalid('due_at', 'due_at is a moment in time, not null or infinity');
  end if;
  if kind is null or not supabase_jobs.kind_is_valid(kind) then
    perform supabase_jobs.invalid('kind', pg_catalog.format('kind must be a job kind name; got %L', left(kind, 100)));
  end if;
  perform supabase_jobs.job_table_label(job_table);
  if supabase_jobs.due_wakeups_sent() then
    insert into supabase_jobs.due_wakeups (due_at, job_table, kind)
    values (leave_due_wakeup.due_at, leave_due_wakeup.job_table, leave_due_wakeup.kind)
    on conflict do nothing;
  end if;
end
$$;
comment on function supabase_jobs.leave_due_wakeup is
  'A due wake-up (supabase_jobs.due_wakeups) for one job table and kind at due_at, where pg_net and pg_cron send them: what a claim that finds a kind''s rate window full leaves for when the window frees a start. Whoever claims; only the function writes the table. Runs as its owner (SECURITY DEFINER): a claim that finds a rate window full writes supabase_jobs.due_wakeups, which no caller writes directly.';

create or replace function supabase_jobs.kick_due()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  batch record;
  sent integer := 0;
begin
  for batch in
    with due as (
      delete from supabase_jobs.due_wakeups as w where w.due_at <= now()
      returning w.job_table, w.kind)
    select d.job_table, d.kind, pg_catalog.count(*)::integer as n from due as d
     group by d.job_table, d.kind order by d.job_table, d.kind
  loop
    if supabase_jobs.kick(batch.job_table, batch.kind, null, batch.n, 'due') is not null then
      sent := sent + 1;
    end if;
  end loop;
  return sent;
end
$$;
comment on function supabase_jobs.kick_due is
  'The supabase-jobs-due schedule (every 5 seconds on pg_cron 1.5 and later, else every minute): takes the due wake-ups (supabase_jobs.due_wakeups) whose time has come and sends one wake-up per job table and kind, so a job queued for later or retried after a backoff starts within seconds of its time. Returns the number queued.';

-- Security: the due wake-ups are for workers and the schedules only.
alter table supabase_jobs.due_wakeups enable row level security;
create policy due_wakeups_service_role on supabase_jobs.due_wakeups for all to service_role using (true) with check (true);
revoke all on supabase_jobs.due_wakeups from public, anon, authenticated;
grant select, delete on supabase_jobs.due_wakeups to service_role;

-- Functions: nobody may call one unless granted below; one granted to no one
-- (a trigger, setup) runs only as its owner.
revoke all on function
  supabase_jobs.worker_endpoint, supabase_jobs.kick_token, supabase_jobs.kick_body, supabase_jobs.kick,
  supabase_jobs.due_wakeups_sent, supabase_jobs.after_jobs_inserted, supabase_jobs.notify_requeued,
  supabase_jobs.backstop, supabase_jobs.leave_due_wakeup, supabase_jobs.kick_due
  from public, anon, authenticated, service_role;

-- Workers and the schedules only.
grant execute on function
  supabase_jobs.kick_body, supabase_jobs.kick, supabase_jobs.backstop, supabase_jobs.leave_due_wakeup,
  supabase_jobs.kick_due
  to service_role;
