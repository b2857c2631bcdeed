/**
 * Recovery in seconds: the Deno worker is SIGKILLed in the middle of a job
 * while its owner watches through supabase-js (Realtime over the stand-in),
 * with the worker's default beat (5 s) and the schedules as installed where
 * pg_cron accepts seconds (the local dispatcher plays pg_cron 1.6: the
 * reclaimer every 5 seconds). Prints kill → "Not responding" → requeued →
 * running again → done, in seconds, and holds them to the targets of
 * docs/reliability.md. Every wait is on an event: a value the watch yields, a
 * NOTIFY.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/lib/index.ts';
import { DEMO_JWT_SECRET, startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import { mintUserToken } from '../../src/local/standin/jwt.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { RECOVERY_TARGETS, recoveryLine } from './figures.ts';
import { signIn, type SimUser } from './workload.ts';

/** The worker's default beat (createWorker's heartbeatMs), which the demo worker declares. */
const BEAT_MS = 5000;

let db: TestDatabase;
let stack: DemoStack;
let user: SimUser;

beforeAll(async () => {
	db = await useTestDatabase();
	stack = await startLocalDemo({ databaseUrl: db.url, app: false });
	const [{ id }] = await db.sql<{ id: string }[]>`
		insert into auth.users (id, email, role, aud)
		values (gen_random_uuid(), 'recovery@example.test', 'authenticated', 'authenticated') returning id`;
	const url = stack.supabaseUrl;
	user = await signIn(
		{
			url,
			anonKey: stack.anonKey,
			userToken: (sub) => mintUserToken(DEMO_JWT_SECRET, sub, { issuer: `${url}/auth/v1`, expiresIn: 3600 }),
		},
		0,
		id,
	);
});

afterAll(async () => {
	user?.stopList();
	await user?.client.removeAllChannels();
	await stack?.stop();
});

interface Seen {
	at: number;
	status: Job['status'];
	attempts: number;
	progress: number;
	silent: boolean;
}

describe('recovery in seconds', () => {
	it('a worker SIGKILLed mid-job: its watcher says "not responding" within 15 s, the job runs again within 25 s, and it ends done', async () => {
		const [{ schedule }] = await db.sql<{ schedule: string }[]>`
			select schedule from cron.job where jobname = 'supabase-jobs-reclaim'`;
		expect(schedule).toBe('5 seconds');

		// ~15 s of work in 60 counted steps.
		const job = await user.store.enqueue('demo.sleep-steps', { params: { steps: 60, stepMs: 250 } });
		const seen: Seen[] = [];
		let wake = () => {};
		const until = async (what: string, check: () => boolean, timeoutMs: number) => {
			const deadline = Date.now() + timeoutMs;
			while (!check()) {
				const left = deadline - Date.now();
				if (left <= 0) throw new Error(`${what}: not within ${timeoutMs} ms; seen ${JSON.stringify(seen.slice(-5))}`);
				let timer: ReturnType<typeof setTimeout> | undefined;
				await new Promise<void>((resolve) => {
					wake = resolve;
					timer = setTimeout(resolve, left);
				});
				clearTimeout(timer);
			}
		};
		const watching = (async () => {
			for await (const j of user.store.watch(job.id, { emitOn: ['status', 'progress', 'attempts'] })) {
				seen.push({
					at: Date.now(),
					status: j.status,
					attempts: j.attempts,
					progress: j.progress,
					silent: j.workerSilent,
				});
				wake();
			}
		})();
		let requeuedAt: number | undefined;
		const listening = await db.sql.listen('supabase_jobs', (payload) => {
			const note = JSON.parse(payload) as { job_id?: string; reason?: string };
			if (note.job_id === job.id && note.reason === 'requeue') requeuedAt ??= Date.now();
		});
		try {
			await until('the job at 20%', () => seen.some((s) => s.status === 'running' && s.progress >= 20), 60_000);
			const [held] = await db.sql<
				{ heartbeat_ms: number }[]
			>`select heartbeat_ms from public.jobs where id = ${job.id}`;
			expect(held!.heartbeat_ms, 'the worker declared the default beat').toBe(BEAT_MS);

			const killedAt = Date.now();
			stack.worker!.current.process.kill('SIGKILL');
			const killedAtProgress = seen.at(-1)!.progress;
			await until('"not responding"', () => seen.some((s) => s.at >= killedAt && s.silent), 60_000);
			const silentAt = seen.find((s) => s.at >= killedAt && s.silent)!.at;
			const again = () => seen.find((s) => s.at >= silentAt && s.status === 'running' && s.attempts === 2);
			await until('running again', () => again() !== undefined, 60_000);
			const runningAgainAt = again()!.at;
			await watching;
			const doneAt = seen.at(-1)!.at;

			const line = recoveryLine({ killedAt, silentAt, requeuedAt, runningAgainAt, doneAt });
			console.log(
				`[chaos figures] recovery (Deno worker SIGKILLed at ${Math.round(killedAtProgress)}%, watch over supabase-js, beat ${BEAT_MS / 1000} s): ${line}`,
			);
			expect(seen.at(-1)).toMatchObject({ status: 'done', attempts: 2, silent: false });
			// Never called silent before 2.5 beats could have passed since the last tick (one beat before the kill at most).
			expect(silentAt - killedAt).toBeGreaterThanOrEqual(BEAT_MS * 1.5);
			expect(silentAt - killedAt).toBeLessThanOrEqual(RECOVERY_TARGETS.silentMs);
			expect(requeuedAt, 'the reclaim requeued it').toBeDefined();
			expect(runningAgainAt - killedAt).toBeLessThanOrEqual(RECOVERY_TARGETS.runningAgainMs);
			// Not responding is said before the job is readmitted, never after.
			expect(silentAt).toBeLessThanOrEqual(requeuedAt!);
		} finally {
			await listening.unlisten();
		}
	});
});
