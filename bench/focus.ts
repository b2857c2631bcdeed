/**
 * One section of the bench, alone, for an A/B of a schema change (the whole
 * `npm run bench` takes ten minutes): BENCH_FOCUS=batch (enqueueMany against
 * graphile-worker's add_jobs, 500 a call), one (enqueue one at a time against
 * addJob), keyed (runWorkers with priority and concurrency keys against the
 * same without), tick (job_tick p50), realtime (Realtime messages per second of
 * BENCH_REALTIME_JOBS running watched jobs, 100, beside the Free plan's 100/s).
 * Prints one JSON line of figures; sizes as
 * in bench/run.ts (BENCH_ROUNDS, BENCH_JOBS, BENCH_BATCH, BENCH_ENQUEUE_ONE,
 * BENCH_PATH_JOBS, BENCH_TICKS).
 *
 * Run: BENCH_FOCUS=batch node --import tsx bench/focus.ts
 */
import postgres from 'postgres';
import { startLocalPostgres } from '../src/local/postgres/embedded.ts';
import { withDatabase } from '../src/local/postgres/migrate.ts';
import { graphileWorker } from './graphile.ts';
import { ours, tickCost } from './ours.ts';
import { messagesPerSecond, messagesPerSecondSection } from './realtime-messages.ts';
import { median } from './stats.ts';
import type { BenchSystem } from './system.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const FOCUS = process.env.BENCH_FOCUS ?? 'batch';
const ROUNDS = env('BENCH_ROUNDS', 3);
const JOBS = env('BENCH_JOBS', 5000);
const BATCH = env('BENCH_BATCH', 500);
const ENQUEUE_ONE = env('BENCH_ENQUEUE_ONE', 1000);
const PATH_JOBS = env('BENCH_PATH_JOBS', 4000);
const TICKS = env('BENCH_TICKS', 1000);
const CONCURRENCY = 8;

/** Median ms of each named run over ROUNDS interleaved rounds. */
async function rounds(entries: { name: string; reset: () => Promise<void>; run: () => Promise<number> }[]) {
	const times = new Map<string, number[]>();
	for (let r = 0; r < ROUNDS; r++)
		for (const e of entries) {
			await e.reset();
			times.set(e.name, [...(times.get(e.name) ?? []), await e.run()]);
		}
	return new Map([...times].map(([name, ms]) => [name, median(ms)]));
}

const pg = await startLocalPostgres();
const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
const systems: BenchSystem[] = [];
try {
	for (const db of ['focus_ours', 'focus_graphile']) await admin.unsafe(`create database ${db}`);
	const us = ours(withDatabase(pg.url, 'focus_ours'), 'focus');
	systems.push(us);
	await us.setup();
	const peer = async () => {
		const g = graphileWorker(withDatabase(pg.url, 'focus_graphile'), 'focus');
		systems.push(g);
		await g.setup();
		return g;
	};
	let figures: Record<string, number>;
	if (FOCUS === 'batch' || FOCUS === 'one') {
		const g = await peer();
		const pick = (s: BenchSystem) =>
			FOCUS === 'batch' ? () => s.enqueueBatch!(JOBS, BATCH) : () => s.enqueueOne(ENQUEUE_ONE);
		const m = await rounds([us, g].map((s) => ({ name: s.name, reset: () => s.reset(), run: pick(s) })));
		const n = FOCUS === 'batch' ? JOBS : ENQUEUE_ONE;
		figures = {
			ours_jobs_s: (n / m.get(us.name)!) * 1000,
			graphile_jobs_s: (n / m.get(g.name)!) * 1000,
			ratio: m.get(g.name)! / m.get(us.name)!,
		};
	} else if (FOCUS === 'keyed') {
		const m = await rounds([
			{ name: 'without', reset: () => us.reset(), run: () => us.process(PATH_JOBS, CONCURRENCY) },
			{ name: 'keyed', reset: () => us.reset(), run: () => us.processKeyed(PATH_JOBS, CONCURRENCY) },
		]);
		figures = {
			without_jobs_s: (PATH_JOBS / m.get('without')!) * 1000,
			keyed_jobs_s: (PATH_JOBS / m.get('keyed')!) * 1000,
			ratio: m.get('without')! / m.get('keyed')!,
		};
	} else if (FOCUS === 'tick') {
		const t = await tickCost(withDatabase(pg.url, 'focus_ours'), TICKS);
		figures = { p50_ms: t.p50, p95_ms: t.p95 };
	} else if (FOCUS === 'realtime') {
		const m = await messagesPerSecond(withDatabase(pg.url, 'focus_ours'), env('BENCH_REALTIME_JOBS', 100));
		console.log(messagesPerSecondSection(m).join('\n'));
		figures = {
			jobs: m.jobs,
			unpaced_messages_s: m.unpaced.measured,
			paced_messages_s: m.paced.measured,
			free_plan_messages_s: m.freePlan,
		};
	} else throw new Error(`BENCH_FOCUS is batch, one, keyed, tick or realtime; got ${FOCUS}`);
	console.log(JSON.stringify({ focus: FOCUS, ...figures }));
} finally {
	for (const s of systems) await s.close();
	await admin.end();
	await pg.stop();
}
