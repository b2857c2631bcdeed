/**
 * Running jobs watched over Realtime, measured at the stand-in as hosted
 * Realtime counts them: `users` owners with `jobsPerUser` jobs each, every
 * owner with `viewersPerUser` supabase-js clients (a tab each) watching all
 * of that owner's jobs through `store.watch`, and one runWorkers running
 * every job for `jobSeconds` in one tracker phase at `tickIntervalMs`. Every
 * message the project sends and every delivery to every channel counts
 * (`standin.realtime.stats()`); the rate counter's average is sampled each
 * second. Used by test/realtime/hosted-limits.test.ts and the bench.
 */
import { randomUUID } from 'node:crypto';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import type postgres from 'postgres';
import WebSocket from 'ws';
import { z } from 'zod';
import { JobStore, defineJobKind, postgresAdapter, type Job, type JobKind } from '../src/lib/index.ts';
import { PhasePlan } from '../src/lib/toolkit/phase-plan.ts';
import { supabaseAdapter } from '../src/lib/adapters/supabase.ts';
import { runWorkers } from '../src/lib/node.ts';
import { defineJobHandler } from '../src/lib/worker.ts';
import type { Standin } from '../src/local/standin/server.ts';

export interface RealtimeLoad {
	users: number;
	jobsPerUser: number;
	viewersPerUser: number;
	jobSeconds: number;
	tickIntervalMs?: number;
	/** runWorkers' realtimeBudget (false: ticks not paced). */
	realtimeBudget?: { messagesPerSecond?: number; viewersPerTopic?: number } | false;
}

export interface RealtimeLoadResult {
	jobs: number;
	viewers: number;
	/** From the first claim to the last watch's end. */
	seconds: number;
	/** Messages as hosted Realtime counts them (each broadcast once, each delivery once), over `seconds`. */
	messages: number;
	messagesPerSecond: number;
	/** The highest per-second average the project's rate counter reached (hosted: over up to a minute). */
	peakCounterAverage: number;
	closedForRate: number;
	droppedForRate: number;
	/** Watches whose last value was the job's row as it ended (status done, progress 100). */
	endedTrue: number;
	/** Watches in all. */
	watches: number;
}

const quiet = { debug() {}, info() {}, warn() {}, error: (...args: unknown[]) => console.error(...args) };

/** The owners, each with `viewersPerUser` supabase-js clients and `jobsPerUser` queued jobs (one enqueueMany each). */
async function openViewers(
	sql: postgres.Sql,
	standin: Standin,
	worker: JobStore,
	kind: JobKind,
	load: RealtimeLoad,
): Promise<{ clients: SupabaseClient[]; owners: { id: string; jobs: string[]; stores: JobStore[] }[] }> {
	const clients: SupabaseClient[] = [];
	const owners: { id: string; jobs: string[]; stores: JobStore[] }[] = [];
	for (let u = 0; u < load.users; u++) {
		const id = randomUUID();
		await sql`insert into auth.users (id, email, role, aud) values (${id}, ${`${id}@load.test`}, 'authenticated', 'authenticated')`;
		const token = await standin.mintUserToken(id);
		const stores: JobStore[] = [];
		for (let v = 0; v < load.viewersPerUser; v++) {
			const client = createClient(standin.url, standin.anonKey, {
				realtime: { transport: WebSocket as never },
				auth: { persistSession: false, autoRefreshToken: false },
				accessToken: async () => token,
			});
			clients.push(client);
			stores.push(new JobStore(supabaseAdapter(client)));
		}
		const jobs = await worker.enqueueMany(
			kind,
			Array.from({ length: load.jobsPerUser }, () => ({ params: {}, ownerId: id })),
		);
		owners.push({ id, jobs, stores });
	}
	return { clients, owners };
}

export async function realtimeLoad(
	sql: postgres.Sql,
	standin: Standin,
	load: RealtimeLoad,
): Promise<RealtimeLoadResult> {
	const kind = defineJobKind({
		name: `load_${randomUUID().slice(0, 8)}`,
		params: z.object({}),
		plan: PhasePlan.fromSeconds({ work: load.jobSeconds }),
	});
	const worker = new JobStore(postgresAdapter(sql));
	const { clients, owners } = await openViewers(sql, standin, worker, kind, load);
	const watches = owners.flatMap((o) => o.stores.flatMap((store) => o.jobs.map((id) => ({ store, id }))));
	let live = 0;
	const lasts = new Map<number, Job>();
	const watching = watches.map(async ({ store, id }, i) => {
		let counted = false;
		const onRealtime = (s: string) => {
			if (s === 'live' && !counted) {
				counted = true;
				live++;
			}
		};
		for await (const job of store.watch(id, { onRealtime, intervalMs: 60_000 })) lasts.set(i, job);
	});
	const joinedBy = Date.now() + 60_000;
	while (live < watches.length && Date.now() < joinedBy) await new Promise((r) => setTimeout(r, 100));
	if (live < watches.length) throw new Error(`only ${live} of ${watches.length} watches went live`);

	const before = standin.realtime.stats();
	let peak = 0;
	const sampler = setInterval(() => (peak = Math.max(peak, standin.realtime.stats().messagesPerSecond)), 1000);
	const started = Date.now();
	const runner = runWorkers({
		sql,
		store: worker,
		handlers: [
			defineJobHandler(kind, ({ tracker }) =>
				tracker.run('work', () => new Promise((r) => setTimeout(r, load.jobSeconds * 1000))),
			),
		],
		concurrency: load.users * load.jobsPerUser,
		handleSignals: false,
		logger: quiet,
		...(load.tickIntervalMs !== undefined ? { tickIntervalMs: load.tickIntervalMs } : {}),
		...(load.realtimeBudget !== undefined ? { realtimeBudget: load.realtimeBudget } : {}),
	});
	try {
		await Promise.all(watching);
	} finally {
		clearInterval(sampler);
		await runner.stop({ graceMs: 1000 });
	}
	const seconds = (Date.now() - started) / 1000;
	const after = standin.realtime.stats();
	peak = Math.max(peak, after.messagesPerSecond);
	await Promise.all(clients.map((c) => c.removeAllChannels().catch(() => {})));
	const messages = after.messages - before.messages;
	return {
		jobs: load.users * load.jobsPerUser,
		viewers: load.viewersPerUser,
		seconds,
		messages,
		messagesPerSecond: messages / seconds,
		peakCounterAverage: peak,
		closedForRate: after.closedForRate - before.closedForRate,
		droppedForRate: after.dropped.rate - before.dropped.rate,
		endedTrue: [...lasts.values()].filter((j) => j.status === 'done' && j.progress === 100).length,
		watches: watches.length,
	};
}
