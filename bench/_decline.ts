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
const mode = process.env.MODE ?? 'plain';
for (let i = 0; i < N; i += 500) await store.enqueueMany('noop', Array.from({ length: 500 }, () => ({ params: {} })));
if (mode === 'msgs') await sql.unsafe(`insert into realtime.messages (topic, extension, payload, event, private) select 'job:x', 'broadcast', '{"a":1}', 'x', true from generate_series(1, 40000)`);
let done = 0; let t = performance.now(); const slices: number[] = [];
await Promise.all(Array.from({ length: 8 }, async () => {
  for (;;) {
    const [job] = await store.claimNext({ kinds: ['noop'], limit: 1 });
    if (!job) return;
    await store.succeed(job.id, { attempt: job.attempts });
    if (++done % 2000 === 0) { const n = performance.now(); slices.push(Math.round(2000 / (n - t) * 1000)); t = n; }
  }
}));
console.log(mode, slices.join(' '));
const ex = await sql.unsafe(`explain (analyze, buffers) select n.id from supabase_jobs.job as n where n.job_table = 'jobs' and n.status = 'queued' and n.available_at <= now() order by n.priority desc, n.available_at, n.created_at, n.id limit 1`);
console.log(ex.map((r: any) => r['QUERY PLAN']).join('\n'));
console.log((await sql`select relname, n_live_tup, n_dead_tup, last_autovacuum, autovacuum_count from pg_stat_user_tables where schemaname in ('supabase_jobs','public','realtime') and (n_live_tup > 0 or n_dead_tup > 0)`).map((r:any)=>JSON.stringify(r)).join("\n"));
await sql.end(); await admin.end(); await pg.stop();
