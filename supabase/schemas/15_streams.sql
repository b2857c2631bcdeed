-- Streamed output: a running job appends text to named streams (a summary as
-- it is written), and its owner sees it on the job's own Realtime topic.
-- job_stream_append (workers only) writes one chunk, guarded by the attempt
-- like job_tick, numbered (attempt, seq) so a watcher that joins late reads
-- what came before (job_stream_read, RLS: owner or admin) and then the rest
-- with no gap or duplicate. A job's streams hold at most stream_max_bytes;
-- a new attempt starts them over. They are the job's output: kept after it
-- ends, deleted with its row.

create or replace function supabase_jobs.stream_max_bytes()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 4194304; end $$;

create or replace function supabase_jobs.stream_chunk_max_bytes()
returns integer
language plpgsql immutable parallel safe
set search_path = ''
as $$ begin return 65536; end $$;

create table supabase_jobs.job_stream (
  job_id     uuid not null,
  attempt    integer not null,
  seq        integer not null,
  stream     text not null,
  body       text not null,
  job_bytes  integer not null,
  job_table  text not null,
  owner_id   uuid,
  created_at timestamptz not null default now(),
  primary key (job_id, attempt, seq)
);
comment on table supabase_jobs.job_stream is
  'The streamed output of jobs, one row per chunk a worker wrote (job_stream_append). Read through job_stream_read; deleted with the job.';
comment on column supabase_jobs.job_stream.attempt is
  'The attempt that wrote it: a new attempt''s first chunk deletes the earlier attempts'' (its output starts over).';
comment on column supabase_jobs.job_stream.seq is
  'The chunk''s place in its attempt, from 0, across every stream of the job: watchers resume from (attempt, seq).';
comment on column supabase_jobs.job_stream.stream is
  'The stream''s name, e.g. summary.';
comment on column supabase_jobs.job_stream.job_bytes is
  'UTF-8 bytes of every stream of this attempt up to and including this chunk (at most stream_max_bytes).';
comment on column supabase_jobs.job_stream.owner_id is
  'The job''s owner, copied from the job: the read policy checks it.';

create or replace function supabase_jobs.send_stream_chunk(j supabase_jobs.job, payload jsonb)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if supabase_jobs.realtime_probe() then
    -- On the job's one topic (job_messages decides it), as its own event; its id time-ordered, as every message's (09).
    insert into realtime.messages (id, payload, event, topic, private, extension)
    select pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
             pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
               operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
           send_stream_chunk.payload, 'job_stream', m.topic, true, 'broadcast'
      from supabase_jobs.job_messages as m where m.job_table = j.job_table and m.id = j.id;
  else
    raise warning 'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; 1 dropped';
  end if;
end
$$;
comment on function supabase_jobs.send_stream_chunk is
  'Sends one chunk of a job''s stream on the job''s topic (event job_stream), as send_job_messages does for a change: the caller (job_stream_append, workers only) may not write realtime.messages itself. Runs as its owner (SECURITY DEFINER): the caller (job_stream_append, workers only) may not write realtime.messages itself.';

create or replace function public.job_stream_append(
  id uuid,
  stream text,
  body text,
  attempt integer default null,
  job_table text default 'jobs'
)
returns public.job_status
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  j supabase_jobs.job;
  last_attempt integer;
  last_seq integer;
  last_bytes integer;
  total bigint;
begin
  perform supabase_jobs.check_call(id, attempt);
  if stream is null or stream !~ '^[A-Za-z][A-Za-z0-9_-]{0,63}$' then
    perform supabase_jobs.invalid('stream', pg_catalog.format('a stream name is a letter then up to 63 letters, digits, _ or -; got %L', left(stream, 80)));
  end if;
  if body is null or body = '' then
    perform supabase_jobs.invalid('body', 'a chunk of a stream is non-empty text');
  end if;
  if pg_catalog.octet_length(body) > supabase_jobs.stream_chunk_max_bytes() then
    perform supabase_jobs.invalid('body', pg_catalog.format('a chunk of a stream is at most %s bytes; got %s',
      supabase_jobs.stream_chunk_max_bytes(), pg_catalog.octet_length(body)));
  end if;
  -- The job row locked for this attempt: appends of one job take their turn, and a cancel or reclaim refuses them.
  select t.* into j from supabase_jobs.job as t
   where t.job_table = label and t.id = job_stream_append.id and t.status = 'running'
     and (attempt is null or t.attempts = attempt)
     for no key update;
  if j.id is null then
    perform supabase_jobs.raise_not_closable(label, id, attempt, 'write a stream of');
  end if;
  select s.attempt, s.seq, s.job_bytes into last_attempt, last_seq, last_bytes
    from supabase_jobs.job_stream s where s.job_id = j.id order by s.attempt desc, s.seq desc limit 1;
  if last_attempt is distinct from j.attempts then
    -- This attempt's first chunk: the output of an earlier attempt is replaced, not continued.
    delete from supabase_jobs.job_stream s where s.job_id = j.id;
    last_seq := -1;
    last_bytes := 0;
  end if;
  total := last_bytes + pg_catalog.octet_length(body);
  if total > supabase_jobs.stream_max_bytes() then
    perform supabase_jobs.invalid('streams.' || stream, pg_catalog.format(
      'the streams of a job hold at most %s bytes; writing %s more bytes to %s would make %s',
      supabase_jobs.stream_max_bytes(), pg_catalog.octet_length(body), stream, total));
  end if;
  insert into supabase_jobs.job_stream (job_id, attempt, seq, stream, body, job_bytes, job_table, owner_id)
  values (j.id, j.attempts, last_seq + 1, stream, body, total, j.job_table, j.owner_id);
  perform supabase_jobs.send_stream_chunk(j, pg_catalog.jsonb_build_object(
    'id', j.id, 'job_table', j.job_table, 'stream', stream, 'attempt', j.attempts, 'seq', last_seq + 1, 'text', body));
  return j.status;
end
$$;
comment on function public.job_stream_append is
  'Appends one chunk of text to a named stream of a running job and sends it on the job''s Realtime topic (event job_stream: id, job_table, stream, attempt, seq, text). Workers only; refused like job_tick when another attempt owns the job (PT409) or it was cancelled (PT410); 22023 naming streams.<name> past stream_max_bytes per job.';

create or replace function public.job_stream_read(
  id uuid,
  attempt integer default null,
  from_seq integer default 0,
  job_table text default 'jobs'
)
returns jsonb
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  label text := supabase_jobs.job_table_label(job_table);
  found_status public.job_status;
  found_attempts integer;
  found_owner uuid;
  found_parent uuid;
  chunks jsonb;
begin
  perform supabase_jobs.check_call(id, attempt);
  if from_seq is null or from_seq < 0 then
    perform supabase_jobs.invalid('from_seq', 'from_seq is a chunk number from 0');
  end if;
  -- As the caller: RLS shows a user their own jobs only (admins and workers every one).
  select j.status, j.attempts, j.owner_id, j.parent_id into found_status, found_attempts, found_owner, found_parent
    from supabase_jobs.job j where j.job_table = label and j.id = job_stream_read.id;
  if found_status is null then
    raise exception using errcode = 'PT404', message = pg_catalog.format('job %s not found', id);
  end if;
  select pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('stream', s.stream, 'attempt', s.attempt, 'seq', s.seq, 'text', s.body)
                              order by s.attempt, s.seq)
    into chunks
    from supabase_jobs.job_stream s
   where s.job_id = job_stream_read.id
     and (job_stream_read.attempt is null or s.attempt > job_stream_read.attempt
          or (s.attempt = job_stream_read.attempt and s.seq >= from_seq));
  return pg_catalog.jsonb_build_object('status', found_status, 'attempts', found_attempts,
                                       'owner_id', found_owner, 'parent_id', found_parent,
                                       'chunks', coalesce(chunks, '[]'::jsonb));
end
$$;
comment on function public.job_stream_read is
  'What a job''s streams hold from (attempt, from_seq) on (everything without attempt), with where the job stands: {status, attempts, owner_id, parent_id (its Realtime topic), chunks: [{stream, attempt, seq, text}]} in order. A watcher reads it on (re)joining, then follows the job_stream messages. PT404 for a job the caller cannot see.';

-- Retention: a job's streams go with its row (cleanup deletes finished jobs through the parent table).
create or replace function supabase_jobs.after_jobs_deleted()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from supabase_jobs.job_stream s using old_rows o where s.job_id = o.id;
  return null;
end
$$;
comment on function supabase_jobs.after_jobs_deleted is
  'AFTER DELETE statement trigger on supabase_jobs.job: deletes the streams of the deleted jobs. Runs as its owner (SECURITY DEFINER): whoever deletes a job (an admin, retention, a deleted owner) deletes its streams too, which no user may write.';

create trigger after_jobs_deleted after delete on supabase_jobs.job
  referencing old table as old_rows
  for each statement execute function supabase_jobs.after_jobs_deleted();

-- Security: users read the chunks of their own jobs (admins every job's); only workers write.
alter table supabase_jobs.job_stream enable row level security;
create policy owner_reads_streams on supabase_jobs.job_stream for select to authenticated
  using (owner_id = (select auth.uid()) or (select supabase_jobs.is_admin()));
revoke all on supabase_jobs.job_stream from public, anon, authenticated, service_role;
grant select on supabase_jobs.job_stream to authenticated;
grant select, insert, delete on supabase_jobs.job_stream to service_role;

revoke all on function
  public.job_stream_append, public.job_stream_read, supabase_jobs.after_jobs_deleted, supabase_jobs.send_stream_chunk,
  supabase_jobs.stream_max_bytes, supabase_jobs.stream_chunk_max_bytes, supabase_jobs.metadata_max_bytes
  from public, anon, authenticated, service_role;
grant execute on function public.job_stream_read to authenticated, service_role;
grant execute on function public.job_stream_append, supabase_jobs.send_stream_chunk, supabase_jobs.stream_max_bytes, supabase_jobs.stream_chunk_max_bytes,
  supabase_jobs.metadata_max_bytes to service_role;
