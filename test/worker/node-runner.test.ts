/**
 * The Node runner: several runners share one table through claimNext (SKIP
 * LOCKED) and LISTEN/NOTIFY with a polling backstop; SIGTERM stops one
 * gracefully without losing or repeating work.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { defineJobHandler } from '../../src/lib/worker/job-handler.ts';
import { runWorkers, type WorkerRunner } from '../../src/lib/worker/node-runner.ts';
import { useTestDatabase, type Sql, type TestDatabase } from '../helpers/db.ts';
import { Signal } from '../store/harness.ts';
import { slowHandler } from './fixtures/slow-kind.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';

let db: TestDatabase;
let store: JobStore;

beforeAll(async () => {
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
	await db.sql`create table worker_effects (job_id uuid not null, attempt int not null, pid int not null, at timestamptz not null default clock_timestamp())`;
});

/** Resolves once `n` runs have settled, counted across runners. */
function settledCounter(n: number) {
	let count = 0;
	let done!: () => void;
	const reached = new Promise<void>((r) => (done = r));
	return {
		reached,
		tick() {
			if (++count === n) done();
		},
	};
}

const counted = defineJobKind({
	name: 'test.count',
	params: z.object({ n: z.number() }),
	plan: PhasePlan.fromSeconds({ work: 0.001 }),
});

describe('runWorkers', () => {
	it('4 runners over 2,000 jobs: every job done exactly once', async () => {
		const N = 2000;
		const runs = new Map<string, number>();
		const handler = defineJobHandler(counted, ({ job }) => {
			runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
		});
		const settled = settledCounter(N);
		const clients: Sql[] = [];
		const runners: WorkerRunner[] = [];
		for (let i = 0; i < 4; i++) {
			const sql = db.connect({ max: 3 });
			clients.push(sql);
			runners.push(
				runWorkers({
					sql,
					store: new JobStore(postgresAdapter(sql)),
					handlers: [handler],
					concurrency: 8,
					pollMs: 60_000, // NOTIFY must do the waking here; the poll is only the backstop
					handleSignals: false,
					logger: new RecordingLogger(),
					onJobSettled: settled.tick,
				}),
			);
		}
		// Let every runner LISTEN before the insert, so the notification is what wakes them.
		await Promise.all(clients.map((c) => c`select 1`));
		const started = performance.now();
		await db.sql`insert into jobs (kind, params) select 'test.count', jsonb_build_object('n', g) from generate_series(1, ${N}) g`;
		await settled.reached;
		const seconds = (performance.now() - started) / 1000;
		console.log(
			`[figures] Node runner throughput: ${N} jobs in ${seconds.toFixed(2)} s = ${Math.round(N / seconds)} jobs/s (4 runners x concurrency 8)`,
		);
		await Promise.all(runners.map((r) => r.stop({ graceMs: 1000 })));

		expect(runs.size).toBe(N);
		expect([...runs.values()].every((n) => n === 1)).toBe(true);
		const [counts] =
			await db.sql`select count(*)::int as total, count(*) filter (where status = 'done' and attempts = 1)::int as done_once from jobs where kind = 'test.count'`;
		expect(counts).toEqual({ total: N, done_once: N });
		expect(runners.reduce((sum, r) => sum + (r.stats.outcomes.done ?? 0), 0)).toBe(N);
		expect(runners.filter((r) => r.stats.claimed > 0).length).toBeGreaterThanOrEqual(2);
	});

	it('NOTIFY wakes it on insert and on requeue, with no poll in sight', async () => {
		const handler = defineJobHandler(counted, () => {});
		const seen: string[] = [];
		let next: (() => void) | null = null;
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [handler],
			concurrency: 1,
			pollMs: 600_000,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (job) => {
				seen.push(job.id);
				next?.();
			},
		});
		const settledOnce = () => new Promise<void>((r) => (next = r));

		let settled = settledOnce();
		const inserted = await store.enqueue(counted, { params: { n: 1 } });
		await settled;
		expect(seen).toEqual([inserted.id]);

		// Inserted and claimed by someone else in one transaction (so the runner never saw it queued), then given back:
		// only the requeue notification can wake the runner.
		const third = await db.sql.begin(async (tx) => {
			const [row] = await tx`insert into jobs (kind, params) values ('test.count', '{"n": 3}') returning id`;
			await tx`select id from job_claim(${row!.id})`;
			return row!.id as string;
		});
		const claimed = await store.get(third);
		expect(claimed).toMatchObject({ status: 'running', attempts: 1 });
		settled = settledOnce();
		await store.release(third, { attempt: claimed.attempts });
		await settled;
		expect(seen).toEqual([inserted.id, third]);
		await runner.stop();
	});

	it('a job queued for later, or retried after a backoff, starts within moments of its time: a timer to the nearest available_at, no poll', async () => {
		let attempt1 = true;
		const handler = defineJobHandler(counted, ({ job }) => {
			if (job.params.n === 2 && attempt1) {
				attempt1 = false;
				throw new Error('flaky once');
			}
		});
		const settled: { job: Job; outcome: string }[] = [];
		const signal = new Signal();
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [handler],
			concurrency: 2,
			pollMs: 600_000,
			retry: { baseSeconds: 1.5 },
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (job, outcome) => {
				settled.push({ job, outcome });
				signal.notify();
			},
		});
		await runner.ready;
		const later = await store.enqueue(counted, { params: { n: 1 }, delayMs: 1200 });
		const flaky = await store.enqueue(counted, { params: { n: 2 } });
		await signal.until(() => settled.filter((s) => s.outcome === 'done').length === 2);
		await runner.stop();
		const lag = (id: string) => {
			const run = settled.find((s) => s.job.id === id && s.outcome === 'done')!.job;
			return run.startedAt!.getTime() - run.availableAt.getTime();
		};
		expect(settled.find((s) => s.job.id === flaky.id && s.outcome === 'retried')).toBeDefined();
		const retried = settled.find((s) => s.job.id === flaky.id && s.outcome === 'done')!.job;
		expect(retried.attempts).toBe(2);
		console.log(
			`Node runner: delayed enqueue started ${lag(later.id)} ms after its time, retry after its backoff ${lag(flaky.id)} ms (bound 1000 ms)`,
		);
		for (const id of [later.id, flaky.id]) {
			expect(lag(id)).toBeGreaterThanOrEqual(0);
			expect(lag(id)).toBeLessThan(1000);
		}
	});

	it('ready resolves once it listens and its first claim answered; a job enqueued then starts at once, with no poll', async () => {
		const handler = defineJobHandler(counted, () => {});
		let settled!: () => void;
		const ran = new Promise<void>((r) => (settled = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [handler],
			concurrency: 2,
			pollMs: 600_000,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: () => settled(),
		});
		await runner.ready;
		expect(runner.stats.claimed).toBe(0);
		await store.enqueue(counted, { params: { n: 7 } });
		await ran;
		expect(runner.stats.claimed).toBe(1);
		await runner.stop();
	});

	/**
	 * A store whose claims are recorded: `calls` in order, `answered(n)` once n claimNext calls have
	 * answered, and `steal()` makes the next by-id claim find its job taken by another worker.
	 */
	function spiedStore() {
		const spied = new JobStore(postgresAdapter(db.sql));
		const calls: string[] = [];
		const claim = spied.claim.bind(spied);
		const claimNext = spied.claimNext.bind(spied);
		let stealNext = false;
		let answered = 0;
		const waiters: { n: number; resolve: () => void }[] = [];
		spied.claim = async (id, options) => {
			calls.push(`claim ${id}`);
			if (stealNext) {
				stealNext = false;
				await store.claim(id); // another worker, a moment earlier
			}
			return await claim(id, options);
		};
		spied.claimNext = async (options) => {
			calls.push('claimNext');
			const jobs = await claimNext(options);
			answered++;
			for (const w of waiters.filter((w) => answered >= w.n)) w.resolve();
			return jobs;
		};
		return {
			store: spied,
			calls,
			answered: (n: number) => new Promise<void>((resolve) => waiters.push({ n, resolve })),
			steal: () => void (stealNext = true),
		};
	}

	/** A runner over `on` that reports each settled job; idle once its first two claims have answered. */
	function idleRunner(on: ReturnType<typeof spiedStore>) {
		const settled: string[] = [];
		let next: (() => void) | null = null;
		const runner = runWorkers({
			sql: db.sql,
			store: on.store,
			handlers: [defineJobHandler(counted, () => {})],
			concurrency: 2,
			pollMs: 600_000,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: (job) => (settled.push(job.id), next?.()),
		});
		// Its first claim and the one its LISTEN's start asks for, both on an empty table.
		const idle = on.answered(2);
		return { runner, idle, settledOne: () => new Promise<void>((r) => (next = r)) };
	}

	it("an idle runner woken by one job's notification claims that job by id, not through the claim order", async () => {
		const spied = spiedStore();
		const { runner, idle, settledOne } = idleRunner(spied);
		try {
			await idle;
			expect(spied.calls).toEqual(['claimNext', 'claimNext']);
			const ran = settledOne();
			const job = await store.enqueue(counted, { params: { n: 1 } });
			await ran;
			expect(spied.calls[2]).toBe(`claim ${job.id}`);
			expect(await store.get(job.id)).toMatchObject({ status: 'done', attempts: 1 });
		} finally {
			await runner.stop();
		}
	});

	it('an announced job another worker took first: the by-id claim finds nothing and the claim order decides', async () => {
		const spied = spiedStore();
		const { runner, idle } = idleRunner(spied);
		try {
			await idle;
			spied.steal();
			const fellBack = spied.answered(3);
			const stolen = await store.enqueue(counted, { params: { n: 2 } });
			await fellBack;
			expect(spied.calls.slice(2, 4)).toEqual([`claim ${stolen.id}`, 'claimNext']);
			expect(await store.get(stolen.id)).toMatchObject({ status: 'running', attempts: 1 });
			expect(runner.stats.claimed).toBe(0);
			await store.succeed(stolen.id, { attempt: 1 });
		} finally {
			await runner.stop();
		}
	});

	it('two jobs announced together are claimed in claim order (the higher priority first), not the one announced last', async () => {
		const started: number[] = [];
		let settled!: () => void;
		const both = new Promise<void>((r) => (settled = r));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [defineJobHandler(counted, ({ params }) => void started.push(params.n))],
			concurrency: 1,
			pollMs: 600_000,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: () => started.length === 2 && settled(),
		});
		await runner.ready;
		// Two statements in one transaction: two notifications, delivered together at commit.
		await db.sql.begin(async (tx) => {
			const inTx = new JobStore(postgresAdapter(tx as unknown as Sql));
			await inTx.enqueue(counted, { params: { n: 1 }, priority: 0 });
			await inTx.enqueue(counted, { params: { n: 2 }, priority: 5 });
		});
		await both;
		expect(started).toEqual([2, 1]);
		await runner.stop();
	});

	it('runWorkers declares its heartbeat at claim: the row carries the liveness contract the runner keeps', async () => {
		let started!: () => void;
		const running = new Promise<void>((r) => (started = r));
		let finish!: () => void;
		const held = new Promise<void>((r) => (finish = r));
		const kind = defineJobKind({ name: 'test.heartbeat', params: z.object({}) });
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [
				defineJobHandler(kind, async () => {
					started();
					await held;
				}),
			],
			concurrency: 1,
			heartbeatMs: 1234,
			handleSignals: false,
			logger: new RecordingLogger(),
		});
		const job = await store.enqueue(kind, { params: {} });
		await running;
		expect(await store.get(job.id)).toMatchObject({ status: 'running', heartbeatMs: 1234 });
		finish();
		await runner.stop();
		expect((await store.get(job.id)).status).toBe('done');
	});

	it('the poll backstop finds a job that no notification announced', async () => {
		const handler = defineJobHandler(counted, () => {});
		let next: (() => void) | null = null;
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [handler],
			concurrency: 1,
			pollMs: 150,
			handleSignals: false,
			logger: new RecordingLogger(),
			onJobSettled: () => next?.(),
		});
		let settled = new Promise<void>((r) => (next = r));
		await store.enqueue(counted, { params: { n: 1 } });
		await settled; // the runner is idle now, waiting on NOTIFY or its poll
		settled = new Promise<void>((r) => (next = r));
		const silent = await db.sql.begin(async (tx) => {
			await tx`alter table jobs disable trigger after_jobs_inserted`;
			const [row] = await tx`insert into jobs (kind, params) values ('test.count', '{"n": 2}') returning id`;
			await tx`alter table jobs enable trigger after_jobs_inserted`;
			return row!.id as string;
		});
		await settled;
		expect(await store.get(silent)).toMatchObject({ status: 'done' });
		await runner.stop();
	});

	it('stop() waits for running jobs within the grace, then releases the rest', async () => {
		const handler = slowHandler(db.sql);
		const jobs = await Promise.all([1, 2].map(() => store.enqueue('test.slow', { params: { ms: 60_000 } })));
		const runner = runWorkers({
			sql: db.sql,
			store,
			handlers: [handler],
			concurrency: 2,
			pollMs: 100,
			handleSignals: false,
			logger: new RecordingLogger(),
		});
		while (runner.running < 2) await new Promise((r) => setTimeout(r, 20));
		await runner.stop({ graceMs: 50 });
		await runner.done;
		expect(runner.stats.outcomes).toEqual({ released: 2 });
		for (const j of jobs) expect(await store.get(j.id)).toMatchObject({ status: 'queued', attempts: 0 });
		await Promise.all(jobs.map((j) => store.cancel(j.id)));
	});
});

interface Child {
	lines: string[];
	waitFor(pattern: RegExp, count?: number): Promise<void>;
	exited: Promise<number | null>;
	kill(signal: NodeJS.Signals): void;
}

function startChild(graceMs: number): Child {
	// Plain node with tsx as an import hook, not the tsx command: that one is a
	// wrapper process relaying signals to the real one, and under load it could
	// exit 143 itself before the runner had stopped. Here SIGTERM reaches the
	// runner's own handler.
	const child = spawn(process.execPath, ['--import', 'tsx', 'test/worker/fixtures/runner-child.ts'], {
		env: { ...process.env, DATABASE_URL: db.url, GRACE_MS: String(graceMs) },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const lines: string[] = [];
	let waiters: { pattern: RegExp; count: number; resolve: () => void }[] = [];
	const check = () => {
		waiters = waiters.filter((w) =>
			lines.filter((l) => w.pattern.test(l)).length >= w.count ? (w.resolve(), false) : true,
		);
	};
	for (const stream of [child.stdout!, child.stderr!]) {
		createInterface({ input: stream }).on('line', (line) => {
			lines.push(line);
			check();
		});
	}
	const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
	return {
		lines,
		exited,
		kill: (signal) => child.kill(signal),
		waitFor: (pattern, count = 1) =>
			new Promise<void>((resolveWait, reject) => {
				waiters.push({ pattern, count, resolve: resolveWait });
				check();
				void exited.then(() =>
					reject(new Error(`runner child exited before ${count} x ${pattern}:\n${lines.join('\n')}`)),
				);
			}),
	};
}

/** Waits until more than `slots` test.slow rows are running; returns how many beyond the slots. */
async function runningBeyond(slots: number): Promise<number> {
	for (;;) {
		const [{ n }] = await db.sql`select count(*)::int as n from jobs where kind = 'test.slow' and status = 'running'`;
		if (n > slots) return n - slots;
		await new Promise((r) => setTimeout(r, 10));
	}
}

/**
 * Waits until the server has ended every session of a killed runner child: a
 * statement it sent just before the SIGKILL (a batch of closes) runs to its
 * commit after the process is gone, so the rows are read after that.
 */
async function childSessionsGone(): Promise<void> {
	for (;;) {
		const [{ n }] =
			await db.sql`select count(*)::int as n from pg_stat_activity where application_name = 'runner-child'`;
		if (n === 0) return;
		await new Promise((r) => setTimeout(r, 10));
	}
}

async function finishTheRest(kind: string, expected: number, msOverride: number) {
	const settled = settledCounter(expected);
	const handler = slowHandler(db.sql, msOverride);
	const runner = runWorkers({
		sql: db.sql,
		store,
		handlers: [handler],
		kinds: [kind],
		concurrency: 8,
		pollMs: 200,
		handleSignals: false,
		logger: new RecordingLogger(),
		onJobSettled: settled.tick,
	});
	await settled.reached;
	await runner.stop();
	return runner.stats;
}

describe('SIGTERM on a runner process', () => {
	it('mid-run with time to finish: running jobs finish, nothing new is claimed, another runner does the rest; none lost, none done twice', async () => {
		await db.sql`delete from worker_effects`;
		const jobs = await Promise.all(
			Array.from({ length: 24 }, () => store.enqueue('test.slow', { params: { ms: 150 } })),
		);
		const child = startChild(10_000);
		await child.waitFor(/^runner-child: done /, 4);
		child.kill('SIGTERM');
		expect(await child.exited).toBe(0);
		const stopped = JSON.parse(
			child.lines.find((l) => l.startsWith('runner-child: stopped '))!.slice('runner-child: stopped '.length),
		);
		expect(stopped.outcomes.released ?? 0).toBe(0);
		expect(stopped.outcomes.done).toBe(stopped.claimed);
		const [{ running }] =
			await db.sql`select count(*)::int as running from jobs where kind = 'test.slow' and status = 'running'`;
		expect(running).toBe(0);

		const rest = jobs.length - stopped.claimed;
		expect(rest).toBeGreaterThan(0);
		expect((await finishTheRest('test.slow', rest, 1)).outcomes).toEqual({ done: rest });
		const rows =
			await db.sql`select j.status, j.attempts, (select count(*)::int from worker_effects e where e.job_id = j.id) as effects from jobs j where j.id in ${db.sql(jobs.map((j) => j.id))}`;
		expect(rows).toHaveLength(jobs.length);
		expect(rows.every((r) => r.status === 'done' && r.attempts === 1 && r.effects === 1)).toBe(true);
	});

	it('SIGTERM with jobs claimed ahead in memory: the unstarted ones go back unspent, another runner finishes them; none lost, none done twice', async () => {
		await db.sql`delete from jobs where kind = 'test.slow'`;
		await db.sql`delete from worker_effects`;
		const jobs = await store.enqueueMany(
			'test.slow',
			Array.from({ length: 1000 }, () => ({ params: { ms: 20 } })),
		);
		const child = startChild(10_000);
		await child.waitFor(/^runner-child: started/);
		// More running rows than its 4 slots: the rest are claimed ahead, waiting in its local queue.
		const ahead = await runningBeyond(4);
		child.kill('SIGTERM');
		expect(await child.exited).toBe(0);
		const [{ running }] =
			await db.sql`select count(*)::int as running from jobs where kind = 'test.slow' and status = 'running'`;
		expect(running).toBe(0);
		const stopped = JSON.parse(
			child.lines.find((l) => l.startsWith('runner-child: stopped '))!.slice('runner-child: stopped '.length),
		);
		const [{ unspent }] =
			await db.sql`select count(*)::int as unspent from jobs where kind = 'test.slow' and status = 'queued' and attempts = 0`;
		expect(unspent).toBe(jobs.length - stopped.claimed);
		expect(ahead).toBeGreaterThan(0);

		expect((await finishTheRest('test.slow', unspent, 1)).outcomes).toEqual({ done: unspent });
		const rows =
			await db.sql`select j.status, j.attempts, (select count(*)::int from worker_effects e where e.job_id = j.id) as effects from jobs j where j.kind = 'test.slow'`;
		expect(rows).toHaveLength(jobs.length);
		expect(rows.every((r) => r.status === 'done' && r.attempts === 1 && r.effects === 1)).toBe(true);
	});

	it('SIGKILL with jobs claimed ahead in memory: they stay running until reclaim readmits every one, and another runner finishes them', async () => {
		await db.sql`delete from jobs where kind = 'test.slow'`;
		await db.sql`delete from worker_effects`;
		const jobs = await store.enqueueMany(
			'test.slow',
			Array.from({ length: 1000 }, () => ({ params: { ms: 20 } })),
		);
		const child = startChild(10_000);
		await child.waitFor(/^runner-child: started/);
		expect(await runningBeyond(4)).toBeGreaterThan(0);
		child.kill('SIGKILL');
		await child.exited;
		await childSessionsGone();
		const held = await db.sql`select id from jobs where kind = 'test.slow' and status = 'running'`;
		// The 4 in its slots and those it held in memory at that instant (it held
		// some just before, as runningBeyond saw; under load its start rate, and
		// so what it claims ahead, can fall to none by the kill).
		expect(held.length).toBeGreaterThanOrEqual(4);
		// Its heartbeats stop; moved an hour back rather than waited for.
		await db.sql`update jobs set started_at = started_at - interval '1 hour', heartbeat_at = heartbeat_at - interval '1 hour' where kind = 'test.slow' and status = 'running'`;
		const reclaimer = new JobStore(postgresAdapter(db.sql), { staleAfterMs: 1000 });
		const reclaimed = await reclaimer.reclaimStale();
		expect(reclaimed.map((j) => j.id).sort()).toEqual(held.map((r) => r.id as string).sort());
		expect(reclaimed.every((j) => j.status === 'queued')).toBe(true);

		const [{ left }] =
			await db.sql`select count(*)::int as left from jobs where kind = 'test.slow' and status = 'queued'`;
		expect((await finishTheRest('test.slow', left, 1)).outcomes).toEqual({ done: left });
		const rows = await db.sql`select status from jobs j where j.kind = 'test.slow'`;
		expect(rows).toHaveLength(jobs.length);
		expect(rows.every((r) => r.status === 'done')).toBe(true);
	});

	it('mid-run with jobs longer than the grace: they are released (attempt not spent) and finished by another runner', async () => {
		await db.sql`delete from jobs where kind = 'test.slow'`;
		await db.sql`delete from worker_effects`;
		const jobs = await Promise.all(
			Array.from({ length: 6 }, () => store.enqueue('test.slow', { params: { ms: 60_000 } })),
		);
		const child = startChild(100);
		await child.waitFor(/^runner-child: started/);
		// Wait until the child holds four jobs (its concurrency).
		for (;;) {
			const [{ n }] = await db.sql`select count(*)::int as n from jobs where kind = 'test.slow' and status = 'running'`;
			if (n === 4) break;
			await new Promise((r) => setTimeout(r, 20));
		}
		child.kill('SIGTERM');
		expect(await child.exited).toBe(0);
		expect(child.lines.filter((l) => /^runner-child: released /.test(l))).toHaveLength(4);
		const after = await db.sql`select status, attempts from jobs where kind = 'test.slow'`;
		expect(after.every((r) => r.status === 'queued' && r.attempts === 0)).toBe(true);

		expect((await finishTheRest('test.slow', jobs.length, 1)).outcomes).toEqual({ done: jobs.length });
		const rows =
			await db.sql`select j.status, j.attempts, (select count(*)::int from worker_effects e where e.job_id = j.id) as effects from jobs j where j.kind = 'test.slow'`;
		expect(rows.every((r) => r.status === 'done' && r.attempts === 1 && r.effects === 1)).toBe(true);
	});
});
