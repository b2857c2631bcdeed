/**
 * Bad input at every boundary: the SQL functions as anon,
 * authenticated and service_role; REST through the stand-in; the worker
 * endpoint under real Deno behind the functions gateway; the package API.
 * Malformed JSON, wrong types, missing fields, huge bodies, unknown kinds,
 * non-UUID and other users' ids, forged/expired/wrong-role JWTs, hostile
 * strings. Each boundary is wrapped in a snapshot of every table (nothing may
 * change), each answer must be a clear error naming the problem, and every
 * server must still serve a valid request afterwards.
 */
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { JobStore, postgresAdapter, supabaseAdapter } from '../../src/lib/index.ts';
import { createStandin, type Standin } from '../../src/local/standin/server.ts';
import { as, createUser, serviceRole, useTestDatabase, type Caller, type TestDatabase } from '../helpers/db.ts';
import { JWT_SECRET } from '../standin/helpers.ts';
import { startDenoWorker, WORKER_SECRET, type DenoWorker } from '../worker/helpers/deno-worker.ts';
import { definitionCases, runApiCase, userCases, workerCases as workerApiCases } from './inputs/api-boundary.ts';
import { restCases, sendCase, sweepRpc } from './inputs/rest-boundary.ts';
import { changedTables, snapshot, type Snapshot } from './inputs/snapshot.ts';
import { jobFunctions, sweepSqlFunctions } from './inputs/sql-boundary.ts';
import { Tally } from './inputs/tally.ts';
import { sendWorkerCase, workerCases } from './inputs/worker-boundary.ts';

let db: TestDatabase;
let userA: Caller & { sub: string };
let userB: Caller & { sub: string };
const fx = { ownJob: '', otherUsersJob: '', runningJob: '' };
const tally = new Tally();
let standin: Standin;
let deno: DenoWorker;
let userToken: string;

beforeAll(async () => {
	db = await useTestDatabase();
	// Closed to unknown kinds, as a deployed project is: only chaos.known may be enqueued by users.
	await db.sql`delete from supabase_jobs.job_kinds`;
	await db.sql`select supabase_jobs.register_job_kind('chaos.known')`;
	userA = await createUser(db.sql);
	userB = await createUser(db.sql);
	const enqueue = async (caller: Caller) =>
		(await as(db.sql, caller, (tx) => tx`select id from job_enqueue('chaos.known', '{"n": 1}')`))[0]!.id as string;
	fx.ownJob = await enqueue(userA);
	fx.otherUsersJob = await enqueue(userB);
	fx.runningJob = await enqueue(userA);
	await as(db.sql, serviceRole, (tx) => tx`select * from job_claim(${fx.runningJob})`);
	// No isolate wall clock: this file checks what bad input is refused with, and beside
	// the load run it can outlast a hosted isolate's 150 s, after which a wake-up is
	// rightly left for a fresh isolate (over_budget) and never reads the named table.
	deno = await startDenoWorker(db.url, { env: { JOBS_WORKER_WALL_CLOCK_MS: 'Infinity' } });
	standin = await createStandin({
		databaseUrl: db.url,
		jwtSecret: JWT_SECRET,
		functions: { 'jobs-worker': { url: deno.url, verifyJwt: false } },
	});
	userToken = await standin.mintUserToken(userA.sub);
});

afterAll(async () => {
	console.log(['[figures] bad input tried, per boundary:', ...tally.lines()].join('\n'));
	await standin?.close();
	await deno?.stop();
});

/**
 * Runs a boundary's barrage between two committed snapshots of every table;
 * asserts that no table changed and that every answer was the clear error expected.
 */
async function unchanged(boundary: string, barrage: () => Promise<void>): Promise<void> {
	const before: Snapshot = await snapshot(db.sql);
	const started = performance.now();
	await barrage();
	tally.elapsedMs.set(boundary, performance.now() - started);
	const changed = changedTables(before, await snapshot(db.sql));
	const problems = tally.problems.filter((p) => p.startsWith(`[${boundary}`));
	expect({ changed, problems: problems.slice(0, 200), count: problems.length }).toEqual({
		changed: [],
		problems: [],
		count: 0,
	});
}

describe('bad input at every boundary changes nothing and is refused with an error naming it', () => {
	it('SQL: every job_* and supabase_jobs function, as anon, authenticated and service_role', async () => {
		await unchanged('sql', () => sweepSqlFunctions(db.sql, { ...fx, user: userA }, tally));
		for (const role of ['anon', 'authenticated', 'service_role'])
			expect(tally.of(`sql as ${role}`)).toBeGreaterThan(100);
		// The database still answers a valid call from a user.
		const [job] = await as(db.sql, userA, (tx) => tx`select id, status from job_get(${fx.ownJob})`);
		expect(job).toMatchObject({ id: fx.ownJob, status: 'queued' });
	});

	it('REST through the stand-in: gateway, JWTs, every public function with wrong JSON, named cases', async () => {
		const ids = {
			userToken,
			userId: userA.sub,
			ownJob: fx.ownJob,
			otherUsersJob: fx.otherUsersJob,
			jwtSecret: JWT_SECRET,
		};
		await unchanged('rest', async () => {
			await sweepRpc(standin, await jobFunctions(db.sql), ids, tally);
			for (const c of await restCases(standin, ids)) await sendCase(standin, c, tally);
		});
		// Still serving: the user reads their job through supabase-js.
		const supabase = createClient(standin.url, standin.anonKey, {
			realtime: { transport: WebSocket as never },
			auth: { persistSession: false, autoRefreshToken: false },
			accessToken: async () => userToken,
		});
		const job = await new JobStore(supabaseAdapter(supabase)).get(fx.ownJob);
		expect(job).toMatchObject({ id: fx.ownJob, status: 'queued' });
	});

	it('the worker endpoint under Deno, through the functions gateway', async () => {
		const url = `${standin.url}/functions/v1/jobs-worker`;
		const ids = {
			secret: WORKER_SECRET,
			anonKey: standin.anonKey,
			serviceRoleKey: standin.serviceRoleKey,
			userToken,
			otherUsersJob: fx.otherUsersJob,
		};
		await unchanged('worker', async () => {
			for (const c of await workerCases(ids)) await sendWorkerCase(url, c, tally);
			// The wake-ups it accepted are worked on in the background: wait until they said what they found.
			await deno.waitForLine(/no handler for the kind "chaos\.known"/);
			await deno.waitForLine(/named the job table "no_such_table", which does not exist/);
		});
		expect(deno.process.exitCode).toBeNull();
		// Still serving: a real job, kicked through the gateway, runs to done.
		const store = new JobStore(postgresAdapter(db.sql));
		const job = await store.enqueue('demo.sleep-steps', { params: { steps: 1, stepMs: 1 } });
		const kicked = await fetch(url, {
			method: 'POST',
			headers: { authorization: `Bearer ${WORKER_SECRET}`, 'content-type': 'application/json' },
			body: JSON.stringify({ job_id: job.id }),
		});
		expect(kicked.status).toBe(202);
		let status = job.status as string;
		while (status !== 'done' && status !== 'failed') {
			await new Promise((r) => setTimeout(r, 50));
			status = (await store.get(job.id)).status;
		}
		expect(status).toBe('done');
	});

	it('the package API: JobStore over postgres.js and supabase-js, and defineJobKind', async () => {
		const asUser = new JobStore(postgresAdapter(db.sql, { claims: { sub: userA.sub, role: 'authenticated' } }));
		const supabase = createClient(standin.url, standin.anonKey, {
			realtime: { transport: WebSocket as never },
			auth: { persistSession: false, autoRefreshToken: false },
			accessToken: async () => userToken,
		});
		const overRest = new JobStore(supabaseAdapter(supabase));
		const worker = new JobStore(postgresAdapter(db.sql));
		await unchanged('api', async () => {
			for (const c of userCases(asUser, fx)) await runApiCase('api postgres.js (user)', c, tally);
			for (const c of userCases(overRest, fx)) await runApiCase('api supabase-js (user)', c, tally);
			for (const c of workerApiCases(worker, fx.runningJob)) await runApiCase('api postgres.js (worker)', c, tally);
			for (const c of definitionCases(worker.adapter)) await runApiCase('api definitions', c, tally);
		});
		expect((await overRest.get(fx.ownJob)).status).toBe('queued');
		expect((await worker.tick(fx.runningJob, { progress: 10, stage: 'still serving' })).valueOf()).toBe('running');
	});
});
