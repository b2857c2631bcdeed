import postgres from 'postgres';
import { startLocalPostgres } from '../../src/local/postgres/embedded.ts';
import { prepareDatabase, withDatabase } from '../../src/local/postgres/migrate.ts';
import { JobStore, postgresAdapter } from '../../src/lib/index.ts';
import { findPostmaster, serverCpuMs } from '../server-cpu.ts';
import { percentile } from '../stats.ts';
const pg = await startLocalPostgres();
const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
await admin.unsafe('create database t');
const url = withDatabase(pg.url, 't');
await prepareDatabase(url, { demo: false });
const pm = findPostmaster(Number(new URL(pg.url).port))!;
const sql = postgres(url, { max: 1, onnotice: () => {} });
const store = new JobStore(postgresAdapter(sql));
await store.enqueue('tick-probe');
const [job] = await store.claimNext({ kinds: ['tick-probe'], limit: 1 });
const mode = process.env.MODE ?? 'store';
for (let round = 0; round < 3; round++) {
	const times: number[] = [];
	const n = 2000;
	const c0 = process.cpuUsage(); const s0 = serverCpuMs(pm);
	for (let i = 0; i < n; i++) {
		const t0 = performance.now();
		if (mode === 'store') await store.tick(job!.id, { progress: (i % 100) + 0.5, stage: `step ${i % 7}`, attempt: job!.attempts });
		else if (mode === 'raw') await sql`select public.job_tick(id => ${job!.id}::uuid, progress => ${(i % 100) + 0.5}::real, stage => ${`step ${i % 7}`}::text, attempt => ${job!.attempts}::int)::text as value`;
		else await sql`select 1`;
		times.push(performance.now() - t0);
	}
	const c = process.cpuUsage(c0); const s = serverCpuMs(pm) - s0;
	console.log(mode, 'p50', percentile(times, 50).toFixed(3), 'node us/tick', ((c.user + c.system) / n).toFixed(0), 'server us/tick', ((s * 1000) / n).toFixed(0));
}
await sql.end(); await admin.end(); await pg.stop();
