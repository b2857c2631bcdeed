/**
 * One drain, for an A/B of a change to runWorkers (not part of `npm run bench`):
 * starts embedded PostgreSQL, then runs BENCH_PROBE_SYSTEMS (ours, graphile,
 * graphile-fastest, pgboss-fastest, and the floors of the runWorkers targets:
 * floor-guarded, plain SQL batches through supabase_jobs.job with every
 * trigger on, and floor-bare, bare SQL batches with one message row per change
 * and no guarantee, both in claims of BENCH_PROBE_CLAIM_BATCH (default 100);
 * comma-separated) through `process(n, 8)` (or, with BENCH_PROBE_PATH=byid,
 * the per-job path) for each size in BENCH_PROBE_SIZES, BENCH_PROBE_ROUNDS
 * times, interleaved, and prints jobs/s and, per size, the median of each.
 */
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase } from '../src/local/postgres/migrate.ts';
import postgres from 'postgres';
import { bareSql } from './bare-sql.ts';
import { batchFloor } from './floors.ts';
import { graphileWorker } from './graphile.ts';
import { ours } from './ours.ts';
import { pgBoss } from './pgboss.ts';
import { findPostmaster, serverCpuMs } from './server-cpu.ts';
import { median, percentile } from './stats.ts';
import type { BenchSystem } from './system.ts';

/** What a probe drives: a system, or a floor (a drain only: no per-job path, no latency). */
type Probed = Pick<BenchSystem, 'name' | 'setup' | 'reset' | 'process' | 'close'> &
	Partial<Pick<BenchSystem, 'processById' | 'latency'>>;

const sizes = (process.env.BENCH_PROBE_SIZES ?? '20000').split(',').map(Number);
const rounds = Number(process.env.BENCH_PROBE_ROUNDS ?? 1);
const names = (process.env.BENCH_PROBE_SYSTEMS ?? 'ours').split(',');
// 'process' (runWorkers / each peer's runner), 'byid' (the per-job path: claim by id + succeed, 8 loops)
// or 'latency' (enqueue -> handler start on an idle runner; the size is the number of samples).
const path = process.env.BENCH_PROBE_PATH ?? 'process';
const claimBatch = Number(process.env.BENCH_PROBE_CLAIM_BATCH ?? 100);

/** The runWorkers floor with every guarantee on (bench/floors.ts), on a database prepared as ours. */
function guardedFloor(url: string): Probed {
	const db = ours(url, 'probe');
	const floor = batchFloor(url);
	return {
		name: 'floor with every guarantee on',
		setup: () => db.setup(),
		reset: () => db.reset(),
		process: (n, concurrency) =>
			floor.processBatched(n, Number(process.env.BENCH_PROBE_FLOOR_LOOPS ?? concurrency), claimBatch),
		async close() {
			await floor.close();
			await db.close();
		},
	};
}

/** The runWorkers floor with every guarantee left out (bench/bare-sql.ts). */
function bareFloor(url: string): Probed {
	const bare = bareSql(url);
	return {
		name: 'floor with every guarantee left out',
		setup: () => bare.setup(),
		reset: async () => {},
		process: (n, concurrency) => bare.claimCompleteBatchedWithMessages(n, concurrency, claimBatch),
		close: () => bare.close(),
	};
}
const pg = await startLocalPostgres();
const postmaster = findPostmaster(Number(new URL(pg.url).port));
const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
const systems: Probed[] = [];
// jobs/s of each round, by "<name> <size>".
const rates = new Map<string, number[]>();
for (const name of names) {
	await admin.unsafe(`create database probe_${name.replace('-', '_')}`);
	const url = withDatabase(pg.url, `probe_${name.replace('-', '_')}`);
	systems.push(
		name === 'ours'
			? ours(url, 'probe')
			: name === 'floor-guarded'
				? guardedFloor(url)
				: name === 'floor-bare'
					? bareFloor(url)
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
					if (!s.latency) throw new Error(`${s.name} has no latency probe`);
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
				const server = postmaster && serverCpuMs(postmaster);
				// A peer without a per-job path (graphile-worker) runs its runner, as npm run bench compares them.
				const ms = path === 'byid' && s.processById ? await s.processById(n, 8) : await s.process(n, 8);
				const used = process.cpuUsage(cpu);
				const perJob = (used.user + used.system) / n;
				const serverPerJob = postmaster
					? `, server CPU ${(((serverCpuMs(postmaster) - server!) * 1000) / n).toFixed(0)} us/job`
					: '';
				console.log(
					`${s.name} ${n}: ${Math.round((n / ms) * 1000)} jobs/s, Node CPU ${perJob.toFixed(0)} us/job${serverPerJob}`,
				);
				const key = `${s.name} ${n}`;
				rates.set(key, [...(rates.get(key) ?? []), (n / ms) * 1000]);
			}
	// Per size, the median of each and its ratio to every other probed in the same rounds.
	for (const n of path === 'latency' ? [] : sizes) {
		const medians = systems.map((s) => ({ name: s.name, value: median(rates.get(`${s.name} ${n}`)!) }));
		for (const m of medians)
			console.log(
				`median ${m.name} ${n}: ${Math.round(m.value)} jobs/s` +
					medians
						.filter((o) => o !== m)
						.map((o) => `, ${(m.value / o.value).toFixed(2)}x ${o.name}`)
						.join(''),
			);
	}
} finally {
	for (const s of systems) await s.close();
	await admin.end();
	await pg.stop();
}
