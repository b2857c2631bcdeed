import postgres from 'postgres';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase, prepareDatabase } from '../src/local/postgres/migrate.ts';
import { JobStore, postgresAdapter } from '../src/lib/index.ts';
const pg = await startLocalPostgres();
const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
await admin.unsafe('create database d');
const url = withDatabase(pg.url, 'd');
await prepareDatabase(url);
const sql = postgres(url, { max: 8, onnotice: () => {} });
const store = new JobStore(postgresAdapter(sql));
const N = 20000;
if (process.env.NOAV) await sql.unsafe('alter table public.jobs set (autovacuum_enabled = false)');
for (let i = 0; i < N; i += 500) await store.enqueueMany('noop', Array.from({ length: 500 }, () => ({ params: {} })));
const explain = async (label: string) => {
  const ex = await sql.unsafe(`explain (analyze, buffers, costs off) select n.id from supabase_jobs.job as n where n.job_table = 'jobs' and n.status = 'queued' and n.available_at <= now() order by n.priority desc, n.available_at, n.created_at, n.id limit 1 for update skip locked`);
  const text = ex.map((r: any) => r['QUERY PLAN']).join(' | ');
  console.log(label, text.match(/shared hit=\d+/)?.[0], text.match(/Execution Time: [\d.]+ ms/)?.[0]);
};
const batch = Number(process.env.BATCH ?? 1);
let done = 0;
await explain('claimed 0');
const t0 = performance.now();
let tSlice = t0;
while (done < N) {
  const jobs = await store.claimNext({ kinds: ['noop'], limit: batch });
  await Promise.all(jobs.map((j) => store.succeed(j.id, { attempt: j.attempts })));
  const before = done; done += jobs.length;
  if (Math.floor(done / 5000) !== Math.floor(before / 5000)) { await explain(`claimed ${done}`); const n = performance.now(); console.log(`  slice ${Math.round(5000 / (n - tSlice) * 1000)}/s`); tSlice = n; }
}
console.log('batch', batch, Math.round(N / (performance.now() - t0) * 1000), '/s');
await sql.end(); await admin.end(); await pg.stop();
