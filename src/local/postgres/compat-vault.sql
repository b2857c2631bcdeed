-- Local stand-in for Supabase Vault (supabase/vault 0.3), applied by applyCompat
-- only when the database has no `vault` schema. NOT a migration, never on Supabase.
--
-- Same surface as upstream: vault.secrets, vault.create_secret(new_secret,
-- new_name, new_description, new_key_id) returning the secret's uuid,
-- vault.update_secret(...), and the vault.decrypted_secrets view with
-- decrypted_secret. Unlike upstream the secret is stored in PLAIN TEXT (there is
-- no encryption key locally): use it for local development and tests only.
-- Nothing is granted to anon/authenticated/service_role, as on Supabase.

create schema vault;
comment on schema vault is 'Local stand-in for Supabase Vault (src/local/postgres/compat-vault.sql): secrets in plain text, for development only.';

create table vault.secrets (
  id uuid primary key default gen_random_uuid(),
  name text,
  description text not null default '',
  secret text not null,
  key_id uuid,
  nonce bytea,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
create unique index on vault.secrets using btree (name) where name is not null;

create view vault.decrypted_secrets as
select s.id, s.name, s.description, s.secret, s.secret as decrypted_secret,
       s.key_id, s.nonce, s.created_at, s.updated_at
  from vault.secrets s;

create function vault.create_secret(new_secret text, new_name text = null, new_description text = '', new_key_id uuid = null)
returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
  secret_id uuid;
begin
  insert into vault.secrets (secret, name, description)
  values (new_secret, new_name, new_description)
  returning id into secret_id;
  return secret_id;
end
$$;

create function vault.update_secret(secret_id uuid, new_secret text = null, new_name text = null, new_description text = null, new_key_id uuid = null)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  update vault.secrets s
     set secret = coalesce(new_secret, s.secret),
         name = coalesce(new_name, s.name),
         description = coalesce(new_description, s.description),
         updated_at = now()
   where s.id = secret_id;
end
$$;

revoke all on schema vault from public;
revoke all on all tables in schema vault from public;
revoke all on function vault.create_secret(text, text, text, uuid), vault.update_secret(uuid, text, text, text, uuid) from public;
