-- DEMO ONLY — not part of the supabase-jobs package (never in supabase/migrations,
-- never copied by `npx supabase-jobs init`). Applied after the package's schema by
-- the demo stack and the test template (src/local/postgres/migrate.ts applyDemoSql),
-- at every start: each statement is idempotent.
--
-- The record the demo's `document.analyse` job produces: the worker's summarise
-- phase writes one row per analysed document and returns its id, which becomes
-- the job's result_id, so the page links straight to it. A user reads only their
-- own analyses (RLS); only the worker writes; job_id outlives its job as null.

create table if not exists public.document_analyses (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references auth.users (id) on delete cascade,
  job_id uuid references public.jobs (id) on delete set null,
  filename text not null,
  stats jsonb not null default '{}'::jsonb,
  summary text not null default '',
  keywords text[] not null default '{}',
  created_at timestamptz not null default now(),
  constraint document_analyses_stats_is_object check (jsonb_typeof(stats) = 'object'),
  constraint document_analyses_filename_not_blank check (btrim(filename) <> '')
);
comment on table public.document_analyses is
  'Demo app only: the result of a document.analyse job (counts, keywords, extractive summary). Not part of supabase-jobs.';
comment on column public.document_analyses.owner_id is 'The user who uploaded the document (the job''s owner).';
comment on column public.document_analyses.job_id is 'The job that produced this row; null once that job was cleaned up.';
comment on column public.document_analyses.stats is
  'Totals: characters, words, sentences, readingSeconds, chunks, pages (null for text), format, language; plus per-chunk findings under "chunks".';
comment on column public.document_analyses.summary is 'Extractive summary: the highest-scoring sentences, in document order.';
comment on column public.document_analyses.keywords is 'Most frequent content words (English and Portuguese stopwords left out), most frequent first.';

create index if not exists document_analyses_owner_created on public.document_analyses (owner_id, created_at desc);
create index if not exists document_analyses_job on public.document_analyses (job_id);

alter table public.document_analyses enable row level security;
drop policy if exists document_analyses_owner_reads on public.document_analyses;
create policy document_analyses_owner_reads on public.document_analyses
  for select to authenticated using (owner_id = (select auth.uid()));

revoke all on public.document_analyses from public, anon, authenticated;
grant select on public.document_analyses to authenticated;
grant select, insert, update, delete on public.document_analyses to service_role;
