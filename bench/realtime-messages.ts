/**
 * Realtime messages written per job: rows inserted into realtime.messages
 * (Broadcast from Database) while N jobs go through enqueue, claim and
 * complete, and per progress tick, all through the public API (store.enqueue,
 * runWorkers, store.claimNext + store.tick). Counted twice: for jobs without an
 * owner (a worker's own jobs) and for jobs a user owns (these also go to the
 * owner's list topic). Each message is a row the database writes, replicates
 * and, on Supabase, keeps until Realtime's retention drops it.
 */
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { z } from 'zod';
import { JobStore, defineJobKind, postgresAdapter } from '../src/lib/index.ts';
import { defineJobHandler } from '../src/lib/worker.ts';
import { runWorkers } from '../src/lib/node.ts';
import { deferred } from './stats.ts';

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
