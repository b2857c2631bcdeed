-- Local stand-in for pg_net (supabase/pg_net), applied by applyCompat only when
-- the database has no `net` schema. NOT a migration and never on Supabase.
--
-- Same public surface our SQL uses: net.http_post(url, body, params, headers,
-- timeout_milliseconds) with upstream's defaults, Content-Type handling and
-- bigint request id; requests land in net.http_request_queue and responses in
-- net._http_response with upstream's columns. Where upstream's C background
-- worker sends the queue after commit, here src/local/dispatcher.ts does: the
-- statement trigger below NOTIFYs it, and NOTIFY is delivered only on commit
-- (a rolled-back request is never seen). Not provided: http_get/http_delete,
-- the 6 h response TTL. Unlike Supabase (which grants net to anon/authenticated)
-- nothing is granted here: only the owner and SECURITY DEFINER code call it.

create schema net;
comment on schema net is 'Local stand-in for pg_net (src/local/postgres/compat-net.sql); src/local/dispatcher.ts sends the requests.';

create unlogged table net.http_request_queue (
  id bigserial,
  method text not null check (method ilike 'get' or method ilike 'post' or method ilike 'delete'),
  url text not null,
  headers jsonb,
  body bytea,
  timeout_milliseconds integer not null
);

create unlogged table net._http_response (
  id bigint,
  status_code integer,
  content_type text,
  headers jsonb,
  content text,
  timed_out boolean,
  error_msg text,
  created timestamptz not null default now()
);
create index on net._http_response (created);

-- Percent-encodes a query-string component (RFC 3986 unreserved characters stay).
create function net._urlencode_string(string text)
returns text
language sql immutable strict
set search_path = ''
as $$
  select coalesce(string_agg(
    case when b between 48 and 57 or b between 65 and 90 or b between 97 and 122 or b in (45, 46, 95, 126)
      then chr(b) else '%' || upper(lpad(to_hex(b), 2, '0')) end, '' order by i), '')
  from (select i, get_byte(convert_to(string, 'UTF8'), i) as b
          from generate_series(0, octet_length(convert_to(string, 'UTF8')) - 1) as i) bytes
$$;

create function net.http_post(
  url text,
  body jsonb default '{}'::jsonb,
  params jsonb default '{}'::jsonb,
  headers jsonb default '{"Content-Type": "application/json"}'::jsonb,
  timeout_milliseconds integer default 5000
)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  request_id bigint;
  content_type text;
  query text;
begin
  select h.value into content_type
    from jsonb_each_text(coalesce(headers, '{}'::jsonb)) h
   where lower(h.key) = 'content-type' limit 1;
  if content_type is null then
    headers := coalesce(headers, '{}'::jsonb) || '{"Content-Type": "application/json"}'::jsonb;
  elsif content_type <> 'application/json' then
    raise exception 'Content-Type header must be "application/json"';
  end if;
  select string_agg(net._urlencode_string(p.key) || '=' || net._urlencode_string(p.value), '&')
    into query from jsonb_each_text(coalesce(params, '{}'::jsonb)) p;
  insert into net.http_request_queue (method, url, headers, body, timeout_milliseconds)
  values ('POST',
          case when query is null then url when position('?' in url) > 0 then url || '&' || query else url || '?' || query end,
          headers, convert_to(body::text, 'UTF8'), timeout_milliseconds)
  returning id into request_id;
  return request_id;
end
$$;

-- The dispatcher LISTENs on this channel; notifications are sent at commit.
create function net._notify_dispatcher()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform pg_notify('net_http_request_queue', '');
  return null;
end
$$;
create trigger notify_dispatcher after insert on net.http_request_queue
  for each statement execute function net._notify_dispatcher();

revoke all on schema net from public;
revoke all on all tables in schema net from public;
revoke all on all functions in schema net from public;
