import postgres from 'postgres';
import { z } from 'zod';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase, prepareDatabase } from '../src/local/postgres/migrate.ts';
import { JobStore, postgresAdapter, defineJobKind } from '../src/lib/index.ts';
import { defineJobHandler } from '../src/lib/worker.ts';
import { runWorkers } from '../src/lib/node.ts';
const noop = defineJobKind({ name: 'noop', params: z.object({ i: z.number().int().optional() }) });
const quiet = { debug() {}, info() {}, warn() {}, error: (...a: unknown[]) => console.error(...a) };
const pg = await startLocalPostgres();
const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
await admin.unsafe('create database d');
const url = withDatabase(pg.url, 'd');
await prepareDatabase(url);
const sql = postgres(url, { max: 8, onnotice: () => {} });
const store = new JobStore(postgresAdapter(sql));
const N = Number(process.env.N ?? 20000);
for (const round of [1, 2]) {
  await sql.unsafe('truncate public.jobs, realtime.messages cascade');
  let done = 0; let t = 0; const slices: number[] = [];
  let fin!: () => void; const finished = new Promise<void>((r) => (fin = r));
  const runner = runWorkers({ sql, store, handlers: [defineJobHandler(noop, () => null)], concurrency: 8, handleSignals: false, logger: quiet,
    onJobSettled: () => { if (++done % 2000 === 0) { const n = performance.now(); slices.push(Math.round(2000 / (n - t) * 1000)); t = n; } if (done === N) fin(); } });
  await runner.ready;
  await sql.begin(async (tx) => { const s = new JobStore(postgresAdapter(tx as unknown as postgres.Sql)); for (let i = 0; i < N; i += 500) await s.enqueueMany(noop, Array.from({ length: 500 }, () => ({ params: {} }))); });
  t = performance.now(); const t0 = t;
  await finished;
  console.log(`round ${round}: ${Math.round(N / (performance.now() - t0) * 1000)}/s slices ${slices.join(' ')}`);
  await runner.stop({ graceMs: 1000 });
}
await sql.end(); await admin.end(); await pg.stop();
