-- Stand-in only SQL, applied by the local stand-in at start; NEVER a migration.
-- Supabase Realtime streams new realtime.messages rows from logical replication
-- (lib/realtime/tenants/replication_connection.ex), whatever their extension.
-- The stand-in has no replication slot, so a trigger NOTIFYs the new row's id
-- and its transaction's id at commit and the stand-in reads the row back; the
-- transaction id tells whether it committed before replication was ready
-- (realtime/tenant.ts). Rolled-back inserts (Realtime's own authorization
-- probes) are never delivered, exactly as with replication.
create schema if not exists supabase_jobs_standin;

create or replace function supabase_jobs_standin.notify_broadcast() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_catalog.pg_notify('supabase_jobs_standin_broadcast',
                               new.id::text operator(pg_catalog.||) ':' operator(pg_catalog.||) pg_catalog.pg_current_xact_id()::text);
  return null;
end
$$;

create or replace trigger supabase_jobs_standin_broadcast
  after insert on realtime.messages
  for each row execute function supabase_jobs_standin.notify_broadcast();

-- postgres_changes: committed row changes of tables a subscriber asked for.
-- The row images are kept in an unlogged table (NOTIFY payloads cap at 8000
-- bytes) and read back by id; the stand-in deletes them once delivered.
create unlogged table if not exists supabase_jobs_standin.changes (
  id bigint generated always as identity primary key,
  schema_name text not null,
  table_name text not null,
  type text not null,
  record jsonb,
  old_record jsonb,
  commit_timestamp timestamptz not null default now()
);

create or replace function supabase_jobs_standin.capture_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  change_id bigint;
begin
  insert into supabase_jobs_standin.changes (schema_name, table_name, type, record, old_record)
  values (tg_table_schema, tg_table_name, tg_op,
          case when tg_op = 'DELETE' then null else to_jsonb(new) end,
          case when tg_op = 'INSERT' then null else to_jsonb(old) end)
  returning id into change_id;
  perform pg_notify('supabase_jobs_standin_changes', change_id::text);
  return null;
end
$$;
