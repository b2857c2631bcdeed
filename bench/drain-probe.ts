/**
 * One drain, for an A/B of a change to runWorkers (not part of `npm run bench`):
 * starts embedded PostgreSQL, then runs BENCH_PROBE_SYSTEMS (ours, graphile,
 * graphile-fastest, pgboss-fastest; comma-separated) through `process(n, 8)`
 * (or, with BENCH_PROBE_PATH=byid, the per-job path) for each size in
 * BENCH_PROBE_SIZES, BENCH_PROBE_ROUNDS times, and prints jobs/s.
 */
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase } from '../src/local/postgres/migrate.ts';
import postgres from 'postgres';
import { graphileWorker } from './graphile.ts';
import { ours } from './ours.ts';
import { pgBoss } from './pgboss.ts';
import { percentile } from './stats.ts';
import type { BenchSystem } from './system.ts';

const sizes = (process.env.BENCH_PROBE_SIZES ?? '20000').split(',').map(Number);
const rounds = Number(process.env.BENCH_PROBE_ROUNDS ?? 1);
const names = (process.env.BENCH_PROBE_SYSTEMS ?? 'ours').split(',');
// 'process' (runWorkers / each peer's runner), 'byid' (the per-job path: claim by id + succeed, 8 loops)
// or 'latency' (enqueue -> handler start on an idle runner; the size is the number of samples).
const path = process.env.BENCH_PROBE_PATH ?? 'process';
const pg = await startLocalPostgres();
const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
const systems: BenchSystem[] = [];
for (const name of names) {
	await admin.unsafe(`create database probe_${name.replace('-', '_')}`);
	const url = withDatabase(pg.url, `probe_${name.replace('-', '_')}`);
	systems.push(
		name === 'ours'
			? ours(url, 'probe')
			: name.startsWith('graphile')
				? graphileWorker(url, 'probe', name.endsWith('fastest'))
				: pgBoss(url, 'probe', name.endsWith('fastest')),
	);
}
try {
	for (const s of systems) await s.setup();
	for (let r = 0; r < rounds; r++)
		for (const n of sizes)
			for (const s of systems) {
				await s.reset();
				if (path === 'latency') {
					const probe = await s.latency();
					await new Promise((r) => setTimeout(r, 300));
					const times: number[] = [];
					for (let i = 0; i < n; i++) {
						await new Promise((r) => setTimeout(r, Math.random() * probe.jitterMs));
						times.push(await probe.sample());
					}
					await probe.stop();
					console.log(
						`${s.name}: enqueue -> handler start p50 ${percentile(times, 50).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms (${n} samples)`,
					);
					continue;
				}
				const cpu = process.cpuUsage();
				// A peer without a per-job path (graphile-worker) runs its runner, as npm run bench compares them.
				const ms = path === 'byid' && s.processById ? await s.processById(n, 8) : await s.process(n, 8);
				const used = process.cpuUsage(cpu);
				const perJob = (used.user + used.system) / n;
				console.log(`${s.name} ${n}: ${Math.round((n / ms) * 1000)} jobs/s, Node CPU ${perJob.toFixed(0)} us/job`);
			}
} finally {
	for (const s of systems) await s.close();
	await admin.end();
	await pg.stop();
}
