/**
 * The edge worker under the hosted Edge Functions limits, over the whole
 * local stack (real PostgreSQL, the stand-in's functions gateway, the Deno
 * worker, the dispatcher playing pg_net and pg_cron): inserts kick the
 * worker through the gateway, which kills an isolate at its wall clock or at
 * the CPU limit with SIGKILL (no cleanup) and starts a fresh one for the
 * next request.
 *
 * The wall clock is 20 s here instead of the Free plan's 150 s, the worker's
 * margin 4 s instead of 15 s, so each case takes seconds instead of minutes;
 * the CPU limit is the hosted 2 s. Everything is awaited on events (rows,
 * log lines, process exits), never on sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import { startLocalDemo, type DemoStack } from '../../src/local/demo/stack.ts';
import type { IsolateKill } from '../../src/local/standin/function-isolates.ts';
import { RECOVERY_TARGETS } from '../chaos/figures.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { TEST_ENTRY } from './helpers/deno-worker.ts';
import { follow } from './helpers/watch.ts';

const LIMITS = { wallClockMs: 20_000, cpuMs: 2_000 };
const MARGIN_MS = 4_000;

let db: TestDatabase;
let store: JobStore;
let stack: DemoStack;

beforeAll(async () => {
	db = await useTestDatabase();
	await db.sql`create table if not exists public.resumable_steps (job_id uuid not null, step int not null, pid int not null)`;
	store = new JobStore(postgresAdapter(db.sql));
	stack = await startLocalDemo({
		databaseUrl: db.url,
		app: false,
		workerEntry: TEST_ENTRY,
		functionLimits: LIMITS,
		workerMarginMs: MARGIN_MS,
	});
}, 180_000);

afterAll(async () => {
	await stack?.stop();
});

/** The gateway's kill of `pid`, once it happens (within `timeoutMs`). */
async function killOf(pid: number, timeoutMs: number): Promise<IsolateKill> {
	await stack.worker!.waitForLine(new RegExp(`isolate ${pid} killed`), timeoutMs);
	return stack.worker!.kills.find((k) => k.pid === pid)!;
}

/** The pid a handler's first line names (`test.<kind>: pid N ... holding job <id>`). */
async function pidHolding(kind: string, id: string, timeoutMs: number): Promise<number> {
	const line = await stack.worker!.waitForLine(new RegExp(`${kind}: pid (\\d+) .* holding job ${id}`), timeoutMs);
	return Number(/pid (\d+)/.exec(line)![1]);
}

describe('the edge worker under the hosted Edge Functions limits', () => {
	it('a handler longer than what is left of the wall clock is given back before the kill and finishes in a later isolate', async () => {
		// 14 steps of 1.5 s: 21 s of work, more than one isolate's 16 s budget.
		const job = await store.enqueue('test.resumable', { params: { steps: 14, stepMs: 1500 } });
		const row = follow(store, job.id, 100, 120_000);
		await stack.worker!.waitForLine(/the isolate's wall clock is nearly spent: giving 1 running job\(s\) back/, 60_000);
		await stack.worker!.waitForLine(new RegExp(`job ${job.id} released`), 10_000);
		const final = await row.finished;
		// Released, not reclaimed: the attempt was not spent and no worker died holding it.
		expect(final).toMatchObject({ status: 'done', attempts: 1, error: null });
		const statuses = row.frames.map((f) => f.status).filter((s, i, all) => s !== all[i - 1]);
		expect(statuses.slice(0, 2)).toEqual(['queued', 'running']);
		expect(statuses).toContain('queued');
		expect(statuses.at(-1)).toBe('done');
		const steps = await db.sql<{ step: number; pid: number }[]>`
			select step, pid from public.resumable_steps where job_id = ${job.id} order by step`;
		// Every step ran once, and the work was shared by more than one isolate.
		expect(steps.map((s) => s.step)).toEqual([...Array(14).keys()]);
		expect(new Set(steps.map((s) => s.pid)).size).toBeGreaterThan(1);
		// The isolate that gave it back was killed later, at its wall clock, holding nothing.
		const first = steps[0]!.pid;
		expect(await killOf(first, LIMITS.wallClockMs)).toMatchObject({ limit: 'wall_clock' });
	});

	it('a handler that blocks its isolate past the wall clock loses no job: the isolate is killed, and the job runs again and ends done within the recovery bound', async () => {
		const job = await store.enqueue('test.blocks', { params: { ms: 600_000 } });
		const row = follow(store, job.id, 100, 120_000);
		const pid = await pidHolding('test.blocks', job.id, 60_000);
		const kill = await killOf(pid, LIMITS.wallClockMs + 5_000);
		expect(kill.limit).toBe('wall_clock');
		const final = await row.finished;
		expect(final).toMatchObject({ status: 'done', attempts: 2, error: null });
		const runningAgainMs = runningAgainAt(final) - kill.at;
		console.log(`blocked isolate killed at its wall clock; running again after ${runningAgainMs} ms`);
		expect(runningAgainMs).toBeLessThanOrEqual(RECOVERY_TARGETS.runningAgainMs);
	});

	it('a handler that uses more than 2 s of CPU gets its isolate killed at the CPU limit; the job runs again and ends done within the recovery bound', async () => {
		const job = await store.enqueue('test.burns', { params: { ms: 60_000 } });
		const row = follow(store, job.id, 100, 120_000);
		const pid = await pidHolding('test.burns', job.id, 60_000);
		const kill = await killOf(pid, 60_000);
		expect(kill.limit).toBe('cpu');
		expect(kill.cpuMs).toBeGreaterThan(LIMITS.cpuMs);
		const final = await row.finished;
		expect(final).toMatchObject({ status: 'done', attempts: 2, error: null });
		const runningAgainMs = runningAgainAt(final) - kill.at;
		console.log(
			`isolate killed at the CPU limit after ${kill.cpuMs} ms of CPU; running again after ${runningAgainMs} ms`,
		);
		expect(runningAgainMs).toBeLessThanOrEqual(RECOVERY_TARGETS.runningAgainMs);
	});
});

/** When the last attempt started (claimed), by the database's clock: the same host as the test's. */
function runningAgainAt(job: Job): number {
	return job.startedAt!.getTime();
}
