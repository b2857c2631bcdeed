/**
 * Realtime messages written per job: rows inserted into realtime.messages
 * (Broadcast from Database) while N jobs go through enqueue, claim and
 * complete, and per progress tick, all through the public API (store.enqueue,
 * runWorkers, store.claimNext + store.tick). Counted twice: for jobs without an
 * owner (a worker's own jobs) and for jobs a user owns (these also go to the
 * owner's list topic). Each message is a row the database writes, replicates
 * and, on Supabase, keeps until Realtime's retention drops it. And messages
 * per second, as hosted Realtime counts them, of running watched jobs
 * (messagesPerSecond), beside the Free plan's 100.
 */
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { z } from 'zod';
import { JobStore, defineJobKind, postgresAdapter } from '../src/lib/index.ts';
import { defineJobHandler } from '../src/lib/worker.ts';
import { runWorkers } from '../src/lib/node.ts';
import { deferred } from './stats.ts';
import { createStandin } from '../src/local/standin/server.ts';
import {
	DEFAULT_REALTIME_BUDGET,
	FREE_PLAN_MESSAGES_PER_SECOND,
	tickFloorMs,
	tickMessagesPerSecond,
} from '../src/lib/internal/tick-budget.ts';
import { realtimeLoad } from './realtime-load.ts';

/** runWorkers' default tick interval. */
const DEFAULT_TICK_MS = 1000;

const counted = defineJobKind({ name: 'counted', params: z.object({}) });
const quiet = { debug() {}, info() {}, warn() {}, error: (...args: unknown[]) => console.error(...args) };

export interface MessagesPerJob {
	jobs: number;
	ticks: number;
	/** Per job: messages at enqueue, at claim + complete (runWorkers), and in all. */
	enqueue: number;
	claimComplete: number;
	total: number;
	/** Per progress tick that changes progress and stage. */
	perTick: number;
}

/** Runs the count on the database at `url` (a migrated supabase-jobs database; it empties public.jobs). */
export async function messagesPerJob(
	url: string,
	jobs: number,
	ticks: number,
): Promise<{ unowned: MessagesPerJob; owned: MessagesPerJob }> {
	const sql = postgres(url, { max: 8, onnotice: () => {} });
	try {
		const store = new JobStore(postgresAdapter(sql));
		const messages = async () => (await sql<{ n: number }[]>`select count(*)::int as n from realtime.messages`)[0]!.n;
		const owner = randomUUID();
		await sql`insert into auth.users (id, email, role, aud) values (${owner}, ${`${owner}@bench.test`}, 'authenticated', 'authenticated')`;

		const measure = async (ownerId: string | undefined): Promise<MessagesPerJob> => {
			await sql`truncate public.jobs cascade`;
			const m0 = await messages();
			for (let i = 0; i < jobs; i++) await store.enqueue(counted, { params: {}, ...(ownerId ? { ownerId } : {}) });
			const m1 = await messages();
			const finished = deferred();
			let settled = 0;
			const runner = runWorkers({
				sql,
				store,
				handlers: [defineJobHandler(counted, () => null)],
				concurrency: 8,
				handleSignals: false,
				logger: quiet,
				onJobSettled: () => {
					if (++settled === jobs) finished.resolve();
				},
			});
			await finished.promise;
			await runner.stop({ graceMs: 1000 });
			const m2 = await messages();

			await store.enqueue('tick-count', ownerId ? { ownerId } : {});
			const [job] = await store.claimNext({ kinds: ['tick-count'], limit: 1 });
			if (!job) throw new Error('messages per tick: nothing claimed');
			const t0 = await messages();
			for (let i = 1; i <= ticks; i++)
				await store.tick(job.id, { progress: (i * 90) / ticks, stage: `step ${i}`, attempt: job.attempts });
			const t1 = await messages();
			await store.succeed(job.id, { attempt: job.attempts });
			return {
				jobs,
				ticks,
				enqueue: (m1 - m0) / jobs,
				claimComplete: (m2 - m1) / jobs,
				total: (m2 - m0) / jobs,
				perTick: (t1 - t0) / ticks,
			};
		};
		const unowned = await measure(undefined);
		const owned = await measure(owner);
		await sql`truncate public.jobs cascade`;
		return { unowned, owned };
	} finally {
		await sql.end();
	}
}

/** Running watched jobs per second of Realtime messages: measured with ticks at the default interval, unpaced and paced. */
export interface MessagesPerSecond {
	jobs: number;
	viewersPerJob: number;
	tickIntervalMs: number;
	/** The Free plan's rate, for comparison. */
	freePlan: number;
	/** Ticks every interval (realtimeBudget: false): measured, and the formula's ticks alone. */
	unpaced: { measured: number; ticksByFormula: number };
	/** Ticks paced by the default budget (the Free plan, one viewer): measured, and the formula's ticks alone. */
	paced: { measured: number; ticksByFormula: number };
}

/**
 * Messages per second, as hosted Realtime counts them, of `jobs` running jobs
 * (5 per owner, one viewer each) ticking at the default interval for
 * `seconds`: through a stand-in whose message quota is lifted, so the demand
 * itself is counted, not what a Free project would let through.
 */
export async function messagesPerSecond(url: string, jobs = 100, seconds = 6): Promise<MessagesPerSecond> {
	const sql = postgres(url, { max: 8, onnotice: () => {} });
	const standin = await createStandin({
		databaseUrl: url,
		jwtSecret: 'bench-realtime-messages-secret-of-at-least-32-characters',
		realtime: { maxEventsPerSecond: 1_000_000_000, maxJoinsPerSecond: 1_000_000_000 },
	});
	try {
		const load = { users: Math.ceil(jobs / 5), jobsPerUser: 5, viewersPerUser: 1, jobSeconds: seconds };
		const n = load.users * load.jobsPerUser;
		const unpaced = await realtimeLoad(sql, standin, { ...load, realtimeBudget: false });
		const paced = await realtimeLoad(sql, standin, load);
		return {
			jobs: n,
			viewersPerJob: 1,
			tickIntervalMs: DEFAULT_TICK_MS,
			freePlan: FREE_PLAN_MESSAGES_PER_SECOND,
			unpaced: { measured: unpaced.messagesPerSecond, ticksByFormula: tickMessagesPerSecond(n, DEFAULT_TICK_MS, 1) },
			paced: {
				measured: paced.messagesPerSecond,
				ticksByFormula: tickMessagesPerSecond(n, Math.max(DEFAULT_TICK_MS, tickFloorMs(n, DEFAULT_REALTIME_BUDGET)), 1),
			},
		};
	} finally {
		await standin.close();
		await sql.end();
	}
}

/** The markdown section of {@link messagesPerSecond}'s figures. */
export function messagesPerSecondSection(m: MessagesPerSecond): string[] {
	const row = (name: string, f: { measured: number; ticksByFormula: number }) =>
		`| ${name} | ${f.measured.toFixed(1)} | ${f.ticksByFormula.toFixed(1)} | ${m.freePlan} |`;
	return [
		`## 5b. Realtime messages per second: ${m.jobs} running watched jobs (supabase-jobs)`,
		'',
		'| progress ticks | messages/s, measured | ticks alone, by the formula | Free plan |',
		'| --- | --- | --- | --- |',
		row(`every ${m.tickIntervalMs} ms (\`realtimeBudget: false\`)`, m.unpaced),
		row('paced by the default `realtimeBudget` (Free plan, one viewer)', m.paced),
		'',
		`Messages as hosted Realtime counts them (each broadcast once, each delivery to each of ${m.viewersPerJob} viewer per job once), ` +
			`counted by the stand-in with its quota lifted, from the first claim to the last watch's end (enqueue before, claims and closes included). ` +
			'Formula: running jobs x (1 + viewers) x 1000 / tick gap (ms); paced, the gap is at least running x (1 + viewers) x 1000 / (0.5 x plan rate).',
		'',
	];
}
