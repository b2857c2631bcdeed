/**
 * The chaos run: thousands of jobs from simulated users through
 * supabase-js over the stand-in, while Node runners and Deno function
 * instances are SIGKILLed every few seconds, PostgreSQL is stopped and started
 * once and the REST/Realtime stand-in once, with pg_cron running the reclaim
 * schedule as installed in production. Afterwards every guarantee of
 * docs/reliability.md is checked from the database (what the rows and the
 * audit trail say) and from the watchers' streams, and the figures are
 * printed. Sizes: CHAOS_JOBS, CHAOS_USERS, CHAOS_WATCHERS, CHAOS_ENQUEUE_SECONDS,
 * CHAOS_KILL_MS (mean pause between kills), CHAOS_SEED.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJobError, isTerminalStatus, TERMINAL_JOB_STATUSES, type JobStatusValue } from '../../src/lib/index.ts';
import { spread } from './figures.ts';
import { startChaosStack, type ChaosStack } from './stack.ts';
import {
	persist,
	planJobs,
	seededRandom,
	signIn,
	spyOn,
	terminal,
	watch,
	type CancelAttempt,
	type Enqueued,
	type JobSpec,
	type SimUser,
	type Watcher,
} from './workload.ts';

const env = (name: string, fallback: number) => {
	const value = process.env[name];
	if (value === undefined || value === '') return fallback;
	const n = Number(value);
	if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number; got ${value}`);
	return n;
};

const config = {
	jobs: env('CHAOS_JOBS', 5000),
	users: env('CHAOS_USERS', 20),
	watchers: env('CHAOS_WATCHERS', 200),
	enqueueMs: env('CHAOS_ENQUEUE_SECONDS', 120) * 1000,
	killMs: env('CHAOS_KILL_MS', 4000),
	drainMs: env('CHAOS_DRAIN_SECONDS', 240) * 1000,
	nodeRunners: env('CHAOS_NODE_RUNNERS', 3),
	denoInstances: env('CHAOS_DENO_INSTANCES', 2),
	concurrency: env('CHAOS_CONCURRENCY', 6),
	heartbeatMs: 2000,
	seed: env('CHAOS_SEED', Date.now() % 2 ** 31),
};
const random = seededRandom(config.seed);
const log = (line: string) => console.log(`[chaos] ${line}`);

/** When the database and the stand-in restart, as fractions of the enqueue window. */
const RESTARTS_AT = [0.4, 0.7] as const;

interface Restart {
	what: 'postgres' | 'stand-in';
	downAt: number;
	upAt: number;
}

let stack: ChaosStack;
const users: SimUser[] = [];
const enqueued: Enqueued[] = [];
const cancels: CancelAttempt[] = [];
const watchers: Watcher[] = [];
const restarts: Restart[] = [];
const counters = { enqueueRetries: 0, cancelRetries: 0, enqueueErrors: [] as string[] };
let startedAt = 0;
let drainedAt = 0;

interface Row {
	id: string;
	status: JobStatusValue;
	attempts: number;
	max_attempts: number;
	has_payload: boolean;
	idempotency_key: string | null;
	owner_id: string;
	created_at: Date;
	finished_at: Date | null;
}
let rows: Row[] = [];
interface Run {
	job_id: string;
	worker: string;
	attempt: number;
	started_at: Date;
	ended_at: Date | null;
}
let runs: Run[] = [];

const transient = (error: unknown) =>
	!(
		isJobError(error) &&
		['invalid_input', 'permission_denied', 'quota_exceeded', 'unknown_job_table', 'job_not_found'].includes(error.code)
	);

async function runUser(user: SimUser, specs: JobSpec[], pending: Promise<unknown>[]): Promise<void> {
	for (const spec of specs) {
		const due = startedAt + spec.at - Date.now();
		// The user's pace (load shape), not a synchronisation.
		if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
		let result: Awaited<ReturnType<typeof persist<unknown>>>;
		try {
			result = await persist(
				() =>
					user.store.enqueue(spec.kind, {
						params: spec.params,
						payload: spec.payload,
						maxAttempts: spec.maxAttempts,
						idempotencyKey: spec.key,
					}),
				(e) => !transient(e),
				() => counters.enqueueRetries++,
				() => 100 + random() * 400,
			);
		} catch (error) {
			counters.enqueueErrors.push(String(error));
			continue;
		}
		const job = result.value as { id: string };
		const entry: Enqueued = { spec, id: job.id, ackAt: Date.now(), tries: result.tries };
		enqueued.push(entry);
		if (spec.watch) watchers.push(watch(user, job.id));
		if (spec.cancelAfterMs !== null) pending.push(cancelLater(user, entry, spec.cancelAfterMs));
	}
}

async function cancelLater(user: SimUser, entry: Enqueued, afterMs: number): Promise<void> {
	// A random moment chosen by the plan (fault timing), not a synchronisation.
	await new Promise((resolve) => setTimeout(resolve, afterMs));
	const { value, tries } = await persist(
		() => user.store.cancel(entry.id),
		(e) => !transient(e),
		() => counters.cancelRetries++,
		() => 100 + random() * 400,
	);
	cancels.push({ id: entry.id, at: Date.now(), outcome: value ? 'cancelled' : 'nothing to stop', tries });
}

/** Resolves at epoch ms `at` (a fault's planned moment, not a synchronisation). */
const at = (time: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, time - Date.now())));

/** The database restart at 40% of the enqueue window, the stand-in restart at 70%. */
async function restartsMidRun(): Promise<void> {
	await at(startedAt + config.enqueueMs * RESTARTS_AT[0]);
	let downAt = Date.now();
	await stack.pg.stopServer();
	log(`PostgreSQL stopped`);
	await stack.pg.startServer();
	restarts.push({ what: 'postgres', downAt, upAt: Date.now() });
	log(`PostgreSQL started again after ${Date.now() - downAt} ms`);
	await at(startedAt + config.enqueueMs * RESTARTS_AT[1]);
	downAt = Date.now();
	await stack.fleet.restartStandin();
	restarts.push({ what: 'stand-in', downAt, upAt: Date.now() });
	log(`stand-in restarted (${Date.now() - downAt} ms down)`);
}

/** Worker kills at random moments (killMs apart on average), preferring a worker that holds a job. */
async function killsUntil(done: () => boolean): Promise<void> {
	while (!done()) {
		await at(Date.now() + config.killMs * (0.5 + random()));
		if (done() || config.nodeRunners + config.denoInstances === 0) break;
		const busy = await stack.sql<{ worker: string }[]>`
			select distinct worker from chaos.runs where ended_at is null`.catch(() => []);
		const victim = await stack.fleet.killWorker(random, new Set(busy.map((b) => b.worker)));
		log(`SIGKILLed ${victim.name}`);
	}
}

function explain(error: unknown): string {
	if (error === null || error === undefined) return '';
	if (error instanceof Error) return `${error.name}: ${error.message} ${JSON.stringify(error)}`;
	return JSON.stringify(error);
}

function tally(values: readonly string[]): Record<string, number> {
	const counts: Record<string, number> = {};
	for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
	return counts;
}

/**
 * Resolves once `check` holds, asking again each time a job row changes (the
 * audit trigger notifies chaos_job_changed on commit); fails after `timeoutMs`.
 */
async function untilJobsSettle(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
	let changes = 0;
	let wake = () => {};
	const listening = await stack.sql.listen('chaos_job_changed', () => {
		changes++;
		wake();
	});
	let timer: ReturnType<typeof setTimeout> | undefined;
	const deadline = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what}: not within ${timeoutMs} ms`)), timeoutMs);
	});
	deadline.catch(() => {}); // read by the race below; a check in flight when it passes is not left unhandled
	try {
		for (;;) {
			const seen = changes;
			if (await check().catch(() => false)) return;
			if (changes === seen) await Promise.race([new Promise<void>((resolve) => (wake = resolve)), deadline]);
		}
	} finally {
		clearTimeout(timer);
		await listening.unlisten();
	}
}

describe(`chaos: ${config.jobs} jobs from ${config.users} users under worker kills, a database restart and a stand-in restart`, () => {
	beforeAll(async () => {
		log(`config ${JSON.stringify(config)}`);
		stack = await startChaosStack({
			nodeRunners: config.nodeRunners,
			denoInstances: config.denoInstances,
			concurrency: config.concurrency,
			heartbeatMs: config.heartbeatMs,
			echo: process.env.CHAOS_ECHO ? (line) => console.log(line) : undefined,
		});
		const ids = await stack.sql<{ id: string }[]>`
			insert into auth.users (id, email, role, aud)
			select gen_random_uuid(), 'chaos-' || i || '@example.test', 'authenticated', 'authenticated'
			from generate_series(1, ${config.users}) i returning id`;
		for (const [i, { id }] of ids.entries()) users.push(await signIn(stack, i, id));
		for (const [i, user] of users.entries())
			if (users.length > 1) spyOn(user, `jobs:${users[(i + 1) % users.length]!.id}`);

		const plan = planJobs({ ...config, cancelShare: 0.1, restartsAt: RESTARTS_AT, random });
		startedAt = Date.now();
		let enqueuing = true;
		const restarting = restartsMidRun();
		let restarted = false;
		void restarting.finally(() => (restarted = true));
		const killing = killsUntil(() => !enqueuing && restarted);
		const pending: Promise<unknown>[] = [];
		await Promise.all(
			users.map((user) =>
				runUser(
					user,
					plan.filter((s) => s.user === user.index),
					pending,
				),
			),
		);
		await Promise.all(pending);
		enqueuing = false;
		await restarting;
		await killing;
		log(`enqueued ${enqueued.length} in ${Date.now() - startedAt} ms; faults stopped; draining`);

		await untilJobsSettle(
			'every job terminal',
			async () => {
				const [{ n }] =
					await stack.sql`select count(*)::int as n from public.jobs where status not in ('done', 'failed', 'cancelled')`;
				return n === 0;
			},
			config.drainMs,
		).catch(async (error: unknown) => {
			const stuck = await stack.sql`
				select j.id, j.status::text, j.attempts, j.heartbeat_at, j.heartbeat_ms, j.available_at, now() as now,
				       (select json_agg(json_build_object('w', r.worker, 'a', r.attempt, 's', r.started_at, 'e', r.ended_at, 'o', r.outcome)) from chaos.runs r where r.job_id = j.id) as runs,
				       (select json_agg(json_build_object('o', a.old_status, 'n', a.new_status, 'at', a.at, 'q', left(a.query, 60)) order by a.seq)
				          from chaos.audit a where a.job_id = j.id and a.old_status is distinct from a.new_status) as audit
				from public.jobs j where j.status not in ('done', 'failed', 'cancelled') limit 5`;
			const cron =
				await stack.sql`select status, return_message, start_time from cron.job_run_details order by runid desc limit 6`;
			log(
				`stuck: ${JSON.stringify(stuck, null, 1)}\ncron: ${JSON.stringify(cron)}\ncrashes: ${stack.fleet.crashes.join('\n')}`,
			);
			throw error;
		});
		drainedAt = Date.now();
		// Every watcher should end on its own now (Realtime may still be delivering a backlog); bounded, a missed terminal state shows as one still open.
		await Promise.race([
			Promise.all(watchers.map((w) => w.ended)),
			new Promise((resolve) => setTimeout(resolve, 120_000)),
		]);
		rows = await stack.sql<Row[]>`
			select id, status::text as status, attempts, max_attempts, payload is not null as has_payload,
			       idempotency_key, owner_id, created_at, finished_at
			from public.jobs`;
		for (const end of stack.fleet.printedRunEnds)
			await stack.sql`update chaos.runs set ended_at = ${end.endedAt}, outcome = ${end.outcome} where id = ${end.id} and ended_at is null`;
		runs = await stack.sql<Run[]>`select job_id, worker, attempt, started_at, ended_at from chaos.runs`;
	}, 900_000);

	afterAll(async () => {
		for (const user of users) {
			user.stopList();
			await user.client.removeAllChannels().catch(() => {});
		}
		await stack?.stop();
	});

	it('every enqueued job exists exactly once, under its idempotency key, and is terminal', () => {
		expect(counters.enqueueErrors).toEqual([]);
		expect(enqueued).toHaveLength(config.jobs);
		const byKey = new Map<string, Row[]>();
		for (const row of rows) byKey.set(row.idempotency_key!, [...(byKey.get(row.idempotency_key!) ?? []), row]);
		const lost = enqueued.filter((e) => byKey.get(e.spec.key)?.[0]?.id !== e.id);
		const doubled = [...byKey.values()].filter((r) => r.length > 1);
		expect(lost).toEqual([]);
		expect(doubled).toEqual([]);
		expect(rows).toHaveLength(config.jobs);
		expect(rows.filter((r) => !isTerminalStatus(r.status))).toEqual([]);
	});

	it('no job ran in two workers at once, and no attempt was run twice', () => {
		const killed = stack.fleet.endTimes();
		const byJob = new Map<string, { worker: string; attempt: number; from: number; to: number }[]>();
		for (const run of runs) {
			const to = run.ended_at?.getTime() ?? killed.get(run.worker) ?? Infinity;
			const list = byJob.get(run.job_id) ?? [];
			list.push({ worker: run.worker, attempt: run.attempt, from: run.started_at.getTime(), to });
			byJob.set(run.job_id, list);
		}
		const overlapping: string[] = [];
		const repeated: string[] = [];
		const unended = runs.filter((r) => r.ended_at === null && !killed.has(r.worker));
		for (const [id, list] of byJob) {
			list.sort((a, b) => a.from - b.from);
			for (let i = 1; i < list.length; i++) {
				if (list[i]!.from < list[i - 1]!.to) overlapping.push(`${id}: ${JSON.stringify(list)}`);
				if (list.slice(0, i).some((r) => r.attempt === list[i]!.attempt))
					repeated.push(`${id}: ${JSON.stringify(list)}`);
			}
		}
		expect(unended).toEqual([]);
		expect(overlapping).toEqual([]);
		expect(repeated).toEqual([]);
		expect(runs.length).toBeGreaterThanOrEqual(config.jobs * 0.8);
	});

	it('a cancelled job stays cancelled: no progress, status or attempt written after its cancellation', async () => {
		const after = await stack.sql`
			with c as (select job_id, min(seq) as seq from chaos.audit where new_status = 'cancelled' group by job_id)
			select a.job_id, a.old_status, a.new_status, a.old_progress, a.new_progress, a.query
			from chaos.audit a join c on c.job_id = a.job_id and a.seq > c.seq`;
		expect(after).toEqual([]);
		const cancelledRows = new Set(rows.filter((r) => r.status === 'cancelled').map((r) => r.id));
		const stopped = cancels.filter((c) => c.outcome === 'cancelled');
		expect(stopped.filter((c) => !cancelledRows.has(c.id))).toEqual([]);
		expect(stopped.length).toBeGreaterThan(0);
	});

	it('attempts never exceed max_attempts, in any row written or any run', async () => {
		const [{ n }] = await stack.sql`select count(*)::int as n from chaos.audit where attempts > max_attempts`;
		expect(n).toBe(0);
		const max = new Map(rows.map((r) => [r.id, r.max_attempts]));
		expect(runs.filter((r) => r.attempt > (max.get(r.job_id) ?? 0))).toEqual([]);
	});

	it('no terminal row keeps its payload, and none was ever written terminal with one', async () => {
		expect(rows.filter((r) => r.has_payload)).toEqual([]);
		const [{ n }] = await stack.sql`
			select count(*)::int as n from chaos.audit where new_status in ('done', 'failed', 'cancelled') and has_payload`;
		expect(n).toBe(0);
		const [{ carried }] =
			await stack.sql`select count(distinct job_id)::int as carried from chaos.audit where has_payload`;
		expect(carried).toBeGreaterThan(0);
	});

	it("every watcher received its job's terminal state, last and once, as the database has it", () => {
		const final = new Map(rows.map((r) => [r.id, r.status]));
		expect(watchers.length).toBeGreaterThanOrEqual(Math.min(config.watchers, config.jobs));
		const wrong = watchers
			.map((w) => {
				const statuses = w.frames.map((f) => f.status);
				const terminals = statuses.filter((s) => isTerminalStatus(s));
				const ok =
					w.error === null &&
					w.endedAt !== null &&
					terminal(w.frames) &&
					terminals.length === 1 &&
					statuses.at(-1) === final.get(w.jobId);
				return ok ? null : { job: w.jobId, statuses, final: final.get(w.jobId), error: explain(w.error) };
			})
			.filter(Boolean);
		expect(wrong).toEqual([]);
	});

	it('watchers see rows in order: never an older row after a newer one, progress never backwards within an attempt', () => {
		const disorder: string[] = [];
		for (const w of watchers) {
			for (let i = 1; i < w.frames.length; i++) {
				const [a, b] = [w.frames[i - 1]!, w.frames[i]!];
				if (b.updatedAt < a.updatedAt) disorder.push(`${w.jobId}: updated_at went back at frame ${i}`);
				if (b.attempts < a.attempts) disorder.push(`${w.jobId}: attempts went back at frame ${i}`);
				if (b.attempts === a.attempts && a.status === 'running' && b.status === 'running' && b.progress < a.progress)
					disorder.push(`${w.jobId}: progress ${a.progress} -> ${b.progress} within attempt ${a.attempts}`);
			}
		}
		expect(disorder).toEqual([]);
	});

	it('the watchers open across the database restart and across the stand-in restart all got their terminal state', () => {
		expect(restarts.map((r) => r.what).sort()).toEqual(['postgres', 'stand-in']);
		for (const restart of restarts) {
			const across = watchers.filter((w) => w.startedAt < restart.downAt && (w.endedAt ?? Infinity) > restart.upAt);
			expect(across.length, `watchers open across the ${restart.what} restart`).toBeGreaterThan(0);
			expect(across.filter((w) => !terminal(w.frames)).map((w) => w.jobId)).toEqual([]);
		}
	});

	it("no user saw another user's job: list topics, watchers, REST listings, and joins of another user's topic refused", async () => {
		const owner = new Map(rows.map((r) => [r.id, r.owner_id]));
		for (const user of users) {
			expect(user.listed.filter((l) => l.ownerId !== user.id || owner.get(l.id) !== user.id)).toEqual([]);
			expect(user.leaks).toEqual([]);
			if (users.length > 1) expect(user.spyStatuses.some((s) => s.endsWith('CHANNEL_ERROR'))).toBe(true);
			expect(user.spyStatuses.filter((s) => s.endsWith('SUBSCRIBED'))).toEqual([]);
		}
		for (const w of watchers) expect(w.frames.filter((f) => f.ownerId !== users[w.user]!.id)).toEqual([]);
		const listedOverRest = await Promise.all(
			users.map(async (user) => {
				const ids: string[] = [];
				let cursor: string | undefined;
				for (;;) {
					const page = await user.store.listRecent({ limit: 100, ...(cursor ? { cursor } : {}) });
					ids.push(...page.jobs.filter((j) => j.ownerId === user.id).map((j) => j.id));
					expect(page.jobs.filter((j) => j.ownerId !== user.id)).toEqual([]);
					if (!page.nextCursor) break;
					cursor = page.nextCursor;
				}
				return ids.length;
			}),
		);
		expect(listedOverRest).toEqual(users.map((u) => rows.filter((r) => r.owner_id === u.id).length));
	});

	it('the faults happened: workers killed, stale jobs reclaimed by the pg_cron schedule, retries run', async () => {
		expect(stack.fleet.kills('node') + stack.fleet.kills('deno')).toBeGreaterThan(0);
		const [cron] = await stack.sql`
			select count(*) filter (where d.status = 'succeeded')::int as ok, count(*)::int as runs
			from cron.job_run_details d join cron.job j using (jobid) where j.jobname = 'supabase-jobs-reclaim'`;
		expect(cron!.ok).toBeGreaterThan(0);
		const [{ reclaims }] = await stack.sql`
			select count(*)::int as reclaims from chaos.audit where old_status = 'running' and query ilike '%reclaim%'`;
		expect(reclaims).toBeGreaterThan(0);
	});

	afterAll(async () => {
		if (!stack || rows.length === 0) return;
		const created = new Map(rows.map((r) => [r.id, r.created_at.getTime()]));
		const firstStart = new Map<string, number>();
		for (const run of runs)
			firstStart.set(run.job_id, Math.min(firstStart.get(run.job_id) ?? Infinity, run.started_at.getTime()));
		const toStart = [...firstStart].map(([id, at]) => at - created.get(id)!).filter(Number.isFinite);
		const toCallback = watchers.flatMap((w) => w.frames.slice(1).map((f) => f.at - f.updatedAt));
		const finished = rows.map((r) => r.finished_at?.getTime() ?? 0);
		const span = (Math.max(...finished) - Math.min(...rows.map((r) => r.created_at.getTime()))) / 1000;
		const [audit] = await stack.sql`
			select count(*) filter (where old_status = 'running' and query ilike '%reclaim%')::int as reclaims,
			       count(*) filter (where old_status = 'running' and new_status = 'queued' and query ilike '%job_retry%')::int as retries,
			       count(*) filter (where old_status = 'running' and new_status = 'cancelled')::int as cancelled_running,
			       count(*) filter (where old_status = 'queued' and new_status = 'cancelled')::int as cancelled_queued
			from chaos.audit`;
		const statuses = Object.fromEntries(
			TERMINAL_JOB_STATUSES.map((s) => [s, rows.filter((r) => r.status === s).length]),
		);
		const lines = [
			`jobs: ${rows.length} (${JSON.stringify(statuses)}) from ${users.length} users; ${runs.length} handler runs`,
			`sustained: ${(rows.length / span).toFixed(1)} jobs/s over ${span.toFixed(0)} s (first enqueue to last terminal)`,
			`enqueue -> start: ${spread(toStart)}`,
			`commit -> watcher callback: ${spread(toCallback)}`,
			`faults: ${stack.fleet.kills('node')} Node runners and ${stack.fleet.kills('deno')} Deno instances SIGKILLed, ` +
				restarts.map((r) => `${r.what} restart (${r.upAt - r.downAt} ms down)`).join(', '),
			`reclaims: ${audit!.reclaims}; retries: ${audit!.retries}; cancelled while queued: ${audit!.cancelled_queued}, while running: ${audit!.cancelled_running}; ` +
				`cancel calls with nothing left to stop: ${cancels.filter((c) => c.outcome !== 'cancelled').length}`,
			`processes that died by themselves (started again by their supervisor): ${stack.fleet.crashes.length}` +
				stack.fleet.crashes.map((c) => `\n    ${c.slice(0, 300)}`).join(''),
			`watchers' Realtime: ${JSON.stringify(tally(watchers.flatMap((w) => w.realtime)))}; frames per watcher ${spread(watchers.map((w) => w.frames.length)).replaceAll(' ms', '')}`,
			`client retries through outages: ${counters.enqueueRetries} enqueue, ${counters.cancelRetries} ` +
				`cancel; watchers: ${watchers.length}, drained ${((drainedAt - startedAt) / 1000).toFixed(0)} s ` +
				`after the first enqueue`,
		];
		for (const line of lines) console.log(`[chaos figures] ${line}`);
	});
});
