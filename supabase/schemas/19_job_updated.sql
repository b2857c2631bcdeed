-- What a job's update sets off, in one AFTER UPDATE row trigger: its Realtime
-- message (09), its parent's progress and resume (11), a requeue's kick (13),
-- a finished asker's questions (16), the timeline's event (18). One trigger:
-- PostgreSQL reads and prepares the WHEN of every row trigger an UPDATE may
-- fire, once per statement (docs/architecture.md, "Statements PostgreSQL reads
-- again"); its one WHEN skips the rows a job_* function's statement handled.
-- Its first test is the one change all of them need, a visible one (a
-- heartbeat does nothing more); the tests of which of them runs are here, in
-- the order their separate triggers ran. The cancel cascade stays a trigger of
-- its own (11): it runs as the caller.

create or replace function supabase_jobs.after_jobs_updated()
returns trigger
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  j supabase_jobs.job;
begin
  if not (new.status is distinct from old.status or new.progress is distinct from old.progress
          or new.stage is distinct from old.stage or new.available_at is distinct from old.available_at
          or new.metadata is distinct from old.metadata) then
    return null;
  end if;
  j := row(new.*)::supabase_jobs.job;
  if new.parent_id is not null and (new.status is distinct from old.status or new.progress is distinct from old.progress
                                    or new.stage is distinct from old.stage) then
    perform supabase_jobs.child_changed(j, new.status in ('done', 'failed', 'cancelled') and old.status not in ('done', 'failed', 'cancelled'));
  end if;
  if pg_catalog.current_setting('supabase_jobs.statement_messages', true)
     = pg_catalog.concat(pg_catalog.pg_current_xact_id_if_assigned(), ' ', pg_catalog.pg_trigger_depth())
     or pg_catalog.current_setting('supabase_jobs.handled', true)
     = pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth() - 1, ' sent') then
    null; -- the statement sent it with its others (send_statement_messages, 09)
  elsif pg_catalog.now()::timestamp < coalesce(nullif(pg_catalog.current_setting('supabase_jobs.realtime_ready_until', true), '')::timestamp,
                                               '-infinity')
        or supabase_jobs.realtime_probe() then
    -- Whether realtime.messages can take it: the answer remembered for the session, else realtime_probe.
    -- Its id time-ordered, as every message's (09).
    insert into realtime.messages (id, payload, event, topic, private, extension)
    select pg_catalog.encode(pg_catalog.set_bit(pg_catalog.set_bit(pg_catalog.overlay(pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
             pg_catalog.substring(pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
               operator(pg_catalog.*) 1000)::pg_catalog.int8), 3), 1, 6), 52, 1), 53, 1), 'hex')::pg_catalog.uuid,
           m.body, 'job', m.topic, true, 'broadcast' from supabase_jobs.job_messages as m
     where m.job_table = new.job_table and m.id = new.id;
  else
    raise warning 'ErrorSendingBroadcastMessage: realtime.messages cannot take messages now; 1 dropped';
  end if;
  if new.status is distinct from old.status then
    if new.status in ('done', 'failed', 'cancelled') and old.status not in ('done', 'failed', 'cancelled')
       and (old.status = 'waiting' or new.resumed_at is not null) then
      perform supabase_jobs.forget_questions(new.id);
    end if;
    if new.status = 'queued' and old.status in ('running', 'waiting') then
      perform supabase_jobs.notify_requeued(new.job_table, new.kind, new.id, new.available_at);
    end if;
    if (old.status = 'running' and new.status in ('queued', 'waiting')) or (old.status = 'waiting' and new.status = 'queued')
       or new.status = 'cancelled' then
      perform supabase_jobs.record_job_event(row(old.*)::supabase_jobs.job, j);
    end if;
  elsif new.status = 'queued' and new.available_at is distinct from old.available_at then
    -- A queued job moved to another time (job_reschedule): the same news as a requeue.
    perform supabase_jobs.notify_requeued(new.job_table, new.kind, new.id, new.available_at);
  end if;
  return null;
end
$$;
comment on function supabase_jobs.after_jobs_updated is
  'AFTER UPDATE row trigger on supabase_jobs.job (cloned onto every job table); when a screen column (status, progress, stage, available_at, metadata) changed: the one Realtime message of that change on the job''s one topic (job_messages); a child''s parent (child_changed); a requeue or reschedule''s kick (notify_requeued); a finished asker''s questions (forget_questions); the timeline''s event (record_job_event). A heartbeat runs nothing. Runs as its owner (SECURITY DEFINER): a user''s cancel or answer sends the job''s Realtime message, moves its parent, kicks the worker, forgets its questions and writes its timeline: rows the user may not write.';

-- Skipped for a row a job_* function's statement wrote and sent itself (the
-- mark ' sent', as the guard reads it, 03) unless it has a parent or was
-- resumed, whose effects are this trigger's: no event is even queued.
create trigger after_jobs_updated after update on supabase_jobs.job for each row
  when (pg_catalog.current_setting('supabase_jobs.handled', true)
          is distinct from pg_catalog.concat(pg_catalog.statement_timestamp(), ' ', pg_catalog.pg_trigger_depth(), ' sent')
        or new.parent_id is not null or new.resumed_at is not null
        or pg_catalog.row_security_active('supabase_jobs.job'::pg_catalog.regclass))
  execute function supabase_jobs.after_jobs_updated();

revoke all on function supabase_jobs.after_jobs_updated from public, anon, authenticated, service_role;
