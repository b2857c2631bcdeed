-- DEMO ONLY — not part of the supabase-jobs package. Applied after the package's
-- schema by the demo stack and the test template, at every start: idempotent.
--
-- The file of each document.analyse job, kept beside it: a job drops its payload
-- when it ends, and "Try again" (job_try_again) makes a new job with the same
-- params and no payload. A row trigger keeps the upload under the job's id, and a
-- job tried again gets its predecessor's upload (retry_of), so the worker reads
-- the same file either way. Only the worker reads it; users see nothing here.

create table if not exists public.document_uploads (
  job_id uuid primary key references public.jobs (id) on delete cascade,
  bytes bytea not null,
  created_at timestamptz not null default now()
);
comment on table public.document_uploads is
  'Demo app only: the uploaded file of a document.analyse job, so a job tried again (retry_of) reads the same file. Not part of supabase-jobs.';

alter table public.document_uploads enable row level security;
drop policy if exists document_uploads_service_role on public.document_uploads;
create policy document_uploads_service_role on public.document_uploads for all to service_role using (true) with check (true);
revoke all on public.document_uploads from public, anon, authenticated;
grant select, insert, update, delete on public.document_uploads to service_role;

create or replace function public.keep_document_upload()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.document_uploads (job_id, bytes)
  select new.id, b.bytes
    from (select coalesce(new.payload, (select u.bytes from public.document_uploads u where u.job_id = new.retry_of)) as bytes) b
   where b.bytes is not null
  on conflict (job_id) do nothing;
  return null;
end
$$;
revoke all on function public.keep_document_upload() from public, anon, authenticated, service_role;

drop trigger if exists keep_document_upload on public.jobs;
create trigger keep_document_upload after insert on public.jobs for each row
  when (new.kind = 'document.analyse') execute function public.keep_document_upload();
