/**
 * The production-durability section of `npm run bench`: the paths the targets
 * are judged on, measured twice, each time on an embedded PostgreSQL of its
 * own: once with fsync, synchronous_commit and full_page_writes on (what every
 * hosted Supabase database runs) and once with them off (the local test
 * settings of the rest of the bench). Per path and participant (ours, the
 * peers in their default and fastest documented configurations, the floors)
 * it prints jobs/s, the server's CPU per job (bench/server-cpu.ts) and the WAL
 * written per job (`pg_current_wal_insert_lsn()` before and after), both read when the
 * timed part starts (bench/stats.ts `clockStart` waits for them, after the
 * untimed fill) and after the call returns; and the bytes of a Realtime message. The targets
 * are judged on the production-durability figures; the fast ratios are
 * printed beside.
 *
 * Alone: `node --import ./bench/ts-loader.mjs bench/production.ts` (BENCH_QUICK=1 for a
 * few-minute check of small counts; sizes BENCH_PROD_ROUNDS, BENCH_PROD_PROCESS,
 * BENCH_PROD_PATH_JOBS, BENCH_PROD_JOBS, BENCH_PROD_REGIMES=production,fast; a probe of one change
 * narrows it with BENCH_PROD_PATHS and BENCH_PROD_ONLY, comma-separated path and participant names).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { projectRoot, withDatabase } from '../src/local/postgres/migrate.ts';
import { batchFloor, rowFloor, updateFloor } from './floors.ts';
import { GRAPHILE_FASTEST, graphileWorker } from './graphile.ts';
import { ours } from './ours.ts';
import { pgBoss } from './pgboss.ts';
import { findPostmaster, serverCpuMs } from './server-cpu.ts';
import { median, whenClockStarts } from './stats.ts';
import type { BenchSystem } from './system.ts';

const quick = process.env.BENCH_QUICK === '1';
const env = (name: string, full: number, small: number) => Number(process.env[name] ?? (quick ? small : full));
export const PROD_ROUNDS = env('BENCH_PROD_ROUNDS', 3, 1);
const PROCESS = env('BENCH_PROD_PROCESS', 20000, 2000);
const PATH_JOBS = env('BENCH_PROD_PATH_JOBS', 4000, 800);
const JOBS = env('BENCH_PROD_JOBS', 5000, 1000);
const BATCH = 500;
const CLAIM_BATCH = 100;
const CONCURRENCY = 8;

/** One measurement, per job: throughput, the server's CPU and the WAL it wrote. */
export interface Measured {
	rate: number;
	cpuMs: number;
	walBytes: number;
}

export const PATHS = ['enqueue batched', 'runWorkers drain', 'per-job path'] as const;
export type PathName = (typeof PATHS)[number];

export const OURS = 'supabase-jobs';
export const FLOOR = 'floor with every guarantee on';

/** What one regime measured: per path, per participant, the median of each figure over the rounds. */
export interface RegimeResult {
	durable: boolean;
	settings: string;
	paths: Map<PathName, Map<string, Measured>>;
	/** Realtime messages the per-job path wrote per job, and their mean size (payload text, whole row). */
	messages: { perJob: number; payloadBytes: number; rowBytes: number };
	/** How each participant was driven. */
	notes: string[];
}

interface Entry {
	name: string;
	jobs: number;
	reset(): Promise<void>;
	run(): Promise<number>;
	after?(): Promise<void>;
}

const versionOf = async (pkg: string) =>
	(JSON.parse(await readFile(join(projectRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
		.version;

/** Measures every path on a server of its own, `durable` or not. */
export async function measureRegime(durable: boolean, log: (line: string) => void): Promise<RegimeResult> {
	const pg = await startLocalPostgres({ durable });
	const postmaster = findPostmaster(Number(new URL(pg.url).port));
	if (postmaster === null) throw new Error('production section: the server process was not found in /proc');
	const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
	const closers: (() => Promise<void>)[] = [];
	try {
		const [settings] = await admin<{ s: string }[]>`select string_agg(name || ' ' || setting, ', ' order by name) as s
			from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes')`;
		const names = ['p_ours', 'p_graphile', 'p_graphile_fastest', 'p_pgboss', 'p_pgboss_fastest'];
		for (const db of names) await admin.unsafe(`create database ${db}`);
		const url = (db: string) => withDatabase(pg.url, db);
		const [graphileVersion, bossVersion] = await Promise.all([versionOf('graphile-worker'), versionOf('pg-boss')]);
		const us = ours(url('p_ours'), 'this checkout');
		const graphile = graphileWorker(url('p_graphile'), graphileVersion);
		const graphileFastest = graphileWorker(url('p_graphile_fastest'), graphileVersion, true);
		const boss = pgBoss(url('p_pgboss'), bossVersion);
		const bossFastest = pgBoss(url('p_pgboss_fastest'), bossVersion, true);
		const systems: BenchSystem[] = [us, graphile, graphileFastest, boss, bossFastest];
		for (const s of systems) {
			closers.push(() => s.close());
			log(`${durable ? 'production' : 'fast'}: setting up ${s.name}`);
			await s.setup();
		}
		const rows = rowFloor(url('p_ours'), { triggers: true });
		const updates = updateFloor(url('p_ours'));
		const batched = batchFloor(url('p_ours'));
		closers.push(
			() => rows.close(),
			() => updates.close(),
			() => batched.close(),
		);
		const oursSql = postgres(url('p_ours'), { max: 1, onnotice: () => {} });
		closers.push(() => oursSql.end());
		let messages = { perJob: Number.NaN, payloadBytes: Number.NaN, rowBytes: Number.NaN };
		const entry = (s: BenchSystem, jobs: number, run: () => Promise<number>): Entry => ({
			name: s.name,
			jobs,
			reset: () => s.reset(),
			run,
		});
		const entries: Record<PathName, Entry[]> = {
			'enqueue batched': [
				...[us, graphile, boss].map((s) => entry(s, JOBS, () => s.enqueueBatch!(JOBS, BATCH))),
				{ name: FLOOR, jobs: JOBS, reset: () => us.reset(), run: () => rows.enqueueBatch(JOBS, BATCH) },
			],
			'runWorkers drain': [
				...systems.map((s) => entry(s, PROCESS, () => s.process(PROCESS, CONCURRENCY))),
				{
					name: FLOOR,
					jobs: PROCESS,
					reset: () => us.reset(),
					run: () => batched.processBatched(PROCESS, CONCURRENCY, CLAIM_BATCH),
				},
			],
			'per-job path': [
				{
					...entry(us, PATH_JOBS, () => us.processById!(PATH_JOBS, CONCURRENCY)),
					after: async () => {
						const [m] = await oursSql<{ n: number; payload: number; row: number }[]>`
							select count(*)::float8 as n, avg(octet_length(m.payload::text))::float8 as payload,
							       avg(pg_column_size(m.*))::float8 as row
							  from realtime.messages m`;
						messages = { perJob: m!.n / PATH_JOBS, payloadBytes: m!.payload, rowBytes: m!.row };
					},
				},
				// graphile-worker has no per-job path: its runner in its default configuration, as section 2 compares.
				entry(graphile, PATH_JOBS, () => graphile.process(PATH_JOBS, CONCURRENCY)),
				{
					name: FLOOR,
					jobs: PATH_JOBS,
					reset: () => us.reset(),
					run: () => updates.processById(PATH_JOBS, CONCURRENCY),
				},
			],
		};
		// For a probe of one change: BENCH_PROD_PATHS and BENCH_PROD_ONLY (participant names) narrow the run.
		const onlyPaths = process.env.BENCH_PROD_PATHS?.split(',');
		const only = process.env.BENCH_PROD_ONLY?.split(',');
		for (const path of PATHS) {
			if (onlyPaths && !onlyPaths.includes(path)) entries[path] = [];
			if (only) entries[path] = entries[path].filter((e) => only.includes(e.name));
		}
		const samples = new Map<string, Measured[]>();
		for (let round = 0; round < PROD_ROUNDS; round++)
			for (const path of PATHS)
				for (const e of entries[path]) {
					await e.reset();
					log(`${durable ? 'production' : 'fast'}: ${path}, ${e.name}, round ${round + 1}/${PROD_ROUNDS}`);
					const m = await metered(admin, postmaster, e);
					await e.after?.();
					const key = `${path}\u0000${e.name}`;
					samples.set(key, [...(samples.get(key) ?? []), m]);
				}
		const paths = new Map<PathName, Map<string, Measured>>();
		for (const path of PATHS)
			paths.set(
				path,
				new Map(
					entries[path].map((e) => {
						const got = samples.get(`${path}\u0000${e.name}`) ?? [];
						const of = (k: keyof Measured) => median(got.map((m) => m[k]));
						return [e.name, { rate: of('rate'), cpuMs: of('cpuMs'), walBytes: of('walBytes') }];
					}),
				),
			);
		const notes = systems.flatMap((s) => s.notes.map((n) => `${s.name}: ${n}`));
		return { durable, settings: settings!.s, paths, messages, notes };
	} finally {
		for (const close of closers.reverse()) await close().catch((e: unknown) => log(`closing: ${String(e)}`));
		await admin.end();
		await pg.stop();
	}
}

/** Runs `e`, reading the server's CPU and WAL position when its clock starts and after it returns. */
async function metered(admin: postgres.Sql, postmaster: number, e: Entry): Promise<Measured> {
	let cpuAtStart = Number.NaN;
	let lsnAtStart: string | null = null;
	whenClockStarts(async () => {
		if (lsnAtStart) return;
		[{ l: lsnAtStart }] = await admin<{ l: string }[]>`select pg_current_wal_insert_lsn()::text as l`;
		cpuAtStart = serverCpuMs(postmaster);
	});
	try {
		const ms = await e.run();
		const cpuAtEnd = serverCpuMs(postmaster);
		if (!lsnAtStart) throw new Error(`${e.name}: its clock never started (clockStart)`);
		const start: string = lsnAtStart;
		const [{ bytes }] = await admin<{ bytes: number }[]>`
			select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${start}::pg_lsn)::float8 as bytes`;
		return { rate: (e.jobs / ms) * 1000, cpuMs: (cpuAtEnd - cpuAtStart) / e.jobs, walBytes: bytes! / e.jobs };
	} finally {
		whenClockStarts(null);
	}
}

const fmt = (n: number, digits = 0) =>
	Number.isFinite(n)
		? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
		: 'n/a';

const NONE: Measured = { rate: Number.NaN, cpuMs: Number.NaN, walBytes: Number.NaN };
/** One figure of a regime; n/a when that participant was not run (a probe narrowed to some). */
const figure = (r: RegimeResult | null | undefined, path: PathName, name: string): Measured =>
	r?.paths.get(path)?.get(name) ?? NONE;

/** The peer each path's ratios are taken against. */
const PEER: Record<PathName, string> = {
	'enqueue batched': 'graphile-worker',
	'runWorkers drain': GRAPHILE_FASTEST,
	'per-job path': 'graphile-worker',
};

/** The section's markdown (both regimes side by side) and its targets, judged on the production figures. */
export function productionSection(
	prod: RegimeResult,
	fast: RegimeResult | null,
): { lines: string[]; targets: string[] } {
	const lines = [
		'## Production durability',
		'',
		`The paths the targets are judged on, on an embedded PostgreSQL of their own with ${prod.settings} ` +
			`(hosted Supabase's defaults), and beside them${fast ? ` on one with ${fast.settings}` : ' (fast regime not run)'}; ` +
			`${PROD_ROUNDS} interleaved rounds, medians. Server CPU: every process of the server (bench/server-cpu.ts), ` +
			`WAL: \`pg_current_wal_insert_lsn()\` difference; both from the start of the timed part (after an untimed fill) to its end.`,
		'',
	];
	for (const path of PATHS) {
		const p = prod.paths.get(path)!;
		const f = fast?.paths.get(path);
		const peer = PEER[path];
		lines.push(
			`### ${path}`,
			'',
			'| participant | jobs/s | server CPU ms/job | WAL bytes/job | / ' +
				`${peer} | fast: jobs/s | fast: CPU ms/job | fast: WAL bytes/job | fast: / ${peer} |`,
			'| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
		);
		for (const [name, m] of p) {
			const fm = f?.get(name);
			const fp = f?.get(peer);
			lines.push(
				`| ${name} | ${fmt(m.rate)} | ${fmt(m.cpuMs, 3)} | ${fmt(m.walBytes)} | ${fmt(m.rate / figure(prod, path, peer).rate, 2)}x | ` +
					`${fm ? fmt(fm.rate) : 'n/a'} | ${fm ? fmt(fm.cpuMs, 3) : 'n/a'} | ${fm ? fmt(fm.walBytes) : 'n/a'} | ` +
					`${fm && fp ? `${fmt(fm.rate / fp.rate, 2)}x` : 'n/a'} |`,
			);
		}
		lines.push('');
	}
	const m = prod.messages;
	lines.push(
		`Realtime messages on the per-job path: ${fmt(m.perJob, 2)} per job (claim + succeed: two visible changes), ` +
			`${fmt(m.payloadBytes)} bytes of payload JSON and ${fmt(m.rowBytes)} bytes of row per message.`,
		'',
		`${FLOOR}: enqueue batched, \`INSERT ... SELECT\` of ${BATCH} into \`public.jobs\` by plain SQL with every ` +
			`trigger on; runWorkers drain, claim + complete in SKIP LOCKED batches of ${CLAIM_BATCH} by plain SQL through ` +
			`\`supabase_jobs.job\`, each statement's messages in one insert; per-job path, two plain UPDATEs by id ` +
			`(bench/floors.ts). The per-job path's peer is graphile-worker's runner in its default configuration.`,
		'',
	);
	const ratio = (path: PathName, r: RegimeResult | null, name = OURS) =>
		figure(r, path, name).rate / figure(r, path, PEER[path]).rate;
	const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
	const perJob = figure(prod, 'per-job path', OURS);
	const fastNote = (path: PathName) => `; fast regime ${fmt(ratio(path, fast), 2)}x, no target`;
	const floorNote = (path: PathName) => `; its floor ${fmt(ratio(path, prod, FLOOR), 2)}x`;
	/** A throughput target: ours / the path's peer, at least `min`, its floor and the fast ratio beside. */
	const throughput = (label: string, path: PathName, peer: string, min: number) =>
		`production: ${label} ${fmt(ratio(path, prod), 2)}x ${peer} (target ≥ ${fmt(min, 2)}x` +
		`${floorNote(path)}${fastNote(path)}) ${verdict(ratio(path, prod) >= min)}`;
	const targets = [
		throughput('`runWorkers` defaults', 'runWorkers drain', GRAPHILE_FASTEST, 1),
		throughput('enqueueMany', 'enqueue batched', 'graphile-worker addJobs', 1),
		throughput('per-job path', 'per-job path', 'graphile-worker', 0.75),
		`production: per-job path server CPU ${fmt(perJob.cpuMs, 3)} ms/job (target ≤ 0.65 ms) ${verdict(perJob.cpuMs <= 0.65)}`,
		`production: per-job path WAL ${fmt(perJob.walBytes)} bytes/job (target ≤ 1,600 bytes) ${verdict(perJob.walBytes <= 1600)}`,
		`production: Realtime messages on the per-job path ${fmt(m.perJob, 2)} per job, one per visible change ` +
			`(target 2.00) ${verdict(Math.abs(m.perJob - 2) < 0.001)}`,
	];
	lines.push('### How each participant was driven', '', ...prod.notes.map((n) => `- ${n}`), '');
	return { lines, targets };
}

/** Both regimes, production first. */
export async function productionRun(log: (line: string) => void): Promise<{ lines: string[]; targets: string[] }> {
	const regimes = (process.env.BENCH_PROD_REGIMES ?? 'production,fast').split(',');
	const prod = await measureRegime(true, log);
	const fast = regimes.includes('fast') ? await measureRegime(false, log) : null;
	return productionSection(prod, fast);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/bench\//, '/bench/'))) {
	const { lines, targets } = await productionRun((l) => console.error(`[bench] ${l}`));
	console.log([...lines, '### Targets', '', ...targets.map((t) => `- ${t}`), ''].join('\n'));
}
