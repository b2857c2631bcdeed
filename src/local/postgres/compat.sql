-- Compat bootstrap: what a Supabase database already has and supabase-jobs relies on,
-- for a plain PostgreSQL (the embedded default, Debian's PostgreSQL 15 in CI).
--
-- It is NOT a migration: a Supabase project has all of this already, so it never
-- lives in supabase/migrations. Every block creates an object only where it is
-- absent, so running it against a real Supabase database changes nothing.
-- Definitions follow Supabase's own (supabase/postgres init scripts, supabase/auth
-- and supabase/realtime migrations) as far as our SQL depends on them.
-- Since 2026-10-30 Supabase grants nothing by default on new objects, so neither
-- does this file: no ALTER DEFAULT PRIVILEGES.

do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticator') then
    -- PostgREST and Realtime log in as authenticator and SET ROLE to the JWT's role.
    create role authenticator login noinherit password 'authenticator';
  end if;
  if not exists (select 1 from pg_roles where rolname = 'supabase_realtime_admin') then
    create role supabase_realtime_admin nologin noinherit;
  end if;
end
$$;

grant anon, authenticated, service_role to authenticator;

-- The API roles' statement timeouts of a hosted project (supabase/postgres
-- migrations/db/init-scripts/00000000000000-initial-schema.sql: anon 3 s,
-- authenticated 8 s; migrations/db/migrations/20221028101028_set_authenticator_timeout.sql:
-- authenticator 8 s, which service_role, having none of its own, runs under).
-- PostgREST applies the JWT role's settings in each request (the stand-in too:
-- src/local/standin/rest/role-settings.ts). Set only where the role has no
-- statement_timeout yet, so a project's own choice is kept.
do $$
declare
  r record;
begin
  for r in select * from (values ('anon', '3s'), ('authenticated', '8s'), ('authenticator', '8s')) as v(role, timeout) loop
    if not exists (select 1 from pg_roles g, unnest(g.rolconfig) c where g.rolname = r.role and c like 'statement\_timeout=%') then
      execute format('alter role %I set statement_timeout = %L', r.role, r.timeout);
    end if;
  end loop;
end
$$;
grant usage on schema public to anon, authenticated, service_role;

create schema if not exists extensions;
grant usage on schema extensions to anon, authenticated, service_role;

-- auth: the parts of GoTrue's schema that policies and foreign keys use.
create schema if not exists auth;
grant usage on schema auth to anon, authenticated, service_role;

create table if not exists auth.users (
  instance_id uuid,
  id uuid not null primary key,
  aud varchar(255),
  role varchar(255),
  email varchar(255),
  raw_app_meta_data jsonb,
  raw_user_meta_data jsonb,
  is_anonymous boolean not null default false,
  created_at timestamptz default now(),
  updated_at timestamptz default now()
);
alter table auth.users enable row level security;

do $$
begin
  if to_regprocedure('auth.uid()') is null then
    -- Supabase's definition (no SET clause, as upstream: the planner inlines it, so a
    -- policy or default that calls it costs no function call): the legacy per-claim
    -- GUC first, then PostgREST >= 12's claims object. Names are pg_catalog built-ins.
    execute $f$
      create function auth.uid() returns uuid
      language sql stable
      as $b$
        select coalesce(
          nullif(current_setting('request.jwt.claim.sub', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
        )::uuid
      $b$
    $f$;
  end if;
  if to_regprocedure('auth.role()') is null then
    execute $f$
      create function auth.role() returns text
      language sql stable
      as $b$
        select coalesce(
          nullif(current_setting('request.jwt.claim.role', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
        )::text
      $b$
    $f$;
  end if;
  if to_regprocedure('auth.email()') is null then
    execute $f$
      create function auth.email() returns text
      language sql stable
      as $b$
        select coalesce(
          nullif(current_setting('request.jwt.claim.email', true), ''),
          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
        )::text
      $b$
    $f$;
  end if;
  if to_regprocedure('auth.jwt()') is null then
    execute $f$
      create function auth.jwt() returns jsonb
      language sql stable
      set search_path = ''
      as $b$
        select coalesce(
          nullif(current_setting('request.jwt.claim', true), ''),
          nullif(current_setting('request.jwt.claims', true), '')
        )::jsonb
      $b$
    $f$;
  end if;
end
$$;
grant execute on function auth.uid(), auth.role(), auth.email(), auth.jwt() to anon, authenticated, service_role;

-- realtime: Broadcast from Database stores messages in realtime.messages; the
-- Realtime server streams new rows to the subscribers of their topic, and at join
-- probes SELECT (and INSERT) on this table as the user with realtime.topic set.
create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated, service_role;

do $$
begin
  if to_regclass('realtime.messages') is null then
    create table realtime.messages (
      topic text not null,
      extension text not null,
      payload jsonb,
      event text,
      private boolean default false,
      updated_at timestamp without time zone not null default now(),
      inserted_at timestamp without time zone not null default now(),
      id uuid not null default gen_random_uuid(),
      primary key (id, inserted_at)
    );
    alter table realtime.messages enable row level security;
    create index messages_inserted_at_topic_index on realtime.messages (inserted_at desc, topic)
      where extension = 'broadcast' and private is true;
  end if;
end
$$;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;

do $$
begin
  if to_regprocedure('realtime.topic()') is null then
    execute $f$
      create function realtime.topic() returns text
      language sql stable
      set search_path = ''
      as $b$ select nullif(current_setting('realtime.topic', true), '')::text $b$
    $f$;
  end if;
  if to_regprocedure('realtime.send(jsonb, text, text, boolean)') is null then
    -- As upstream: a failure to broadcast must never abort the caller's transaction.
    execute $f$
      create function realtime.send(payload jsonb, event text, topic text, private boolean default true)
      returns void
      language plpgsql
      set search_path = ''
      as $b$
      begin
        begin
          perform set_config('realtime.topic', topic, true);
          insert into realtime.messages (payload, event, topic, private, extension)
          values (payload, event, topic, private, 'broadcast');
        exception when others then
          raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
        end;
      end
      $b$
    $f$;
  end if;
end
$$;
grant execute on function realtime.topic() to anon, authenticated, service_role;
grant execute on function realtime.send(jsonb, text, text, boolean) to anon, authenticated, service_role;

-- The Supabase CLI records applied migrations here; we do the same so that a local
-- database and a `supabase db push`ed one can be compared.
create schema if not exists supabase_migrations;
create table if not exists supabase_migrations.schema_migrations (
  version text not null primary key,
  statements text[],
  name text
);
