/**
 * ctx.log in a handler, through the edge worker (createWorker) and the Node
 * runner (runWorkers), each over both adapters (postgres.js, and supabase-js
 * through the stand-in's PostgREST): lines land on the job's timeline before
 * its close, batched, bounded, checked; the owner reads only the user-facing
 * ones over REST, another user nothing, an admin everything.
 */
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { supabaseAdapter } from '../../src/lib/adapters/supabase.ts';
import { isJobError } from '../../src/lib/errors.ts';
import type { JobAdapter } from '../../src/lib/store/adapter.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { createWorker } from '../../src/lib/worker/create-worker.ts';
import { defineJobHandler } from '../../src/lib/worker/job-handler.ts';
import type { JobOutcome } from '../../src/lib/worker/job-runner.ts';
import { runWorkers } from '../../src/lib/worker/node-runner.ts';
import { useRealtimeFixture } from '../realtime/helpers.ts';
import { counting } from '../store/harness.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';

const f = await useRealtimeFixture();

const logged = defineJobKind({
	name: 'test.logged',
	params: z.object({ mode: z.enum(['story', 'burst', 'flood', 'bad']) }),
	plan: PhasePlan.fromSeconds({ work: 0.001 }),
});

/** What each bad call threw, by job id: the field the error named. */
const refusals = new Map<string, (string | null)[]>();

const handler = defineJobHandler(logged, ({ params, log, job }) => {
	if (params.mode === 'story') {
		log('info', 'Page 3 read', { userFacing: true, page: 3 });
		log('debug', 'cache miss on page 3', { key: 'p3' });
		log('warn', 'slow page');
		log('error', 'retrying the OCR', { attempt: 1 });
	} else if (params.mode === 'burst') {
		for (let i = 0; i < 250; i++) log('debug', `line ${i}`);
	} else if (params.mode === 'flood') {
		for (let i = 0; i < 600; i++) log('info', `line ${i}`);
	} else {
		const fields: (string | null)[] = [];
		const tryLog = (call: () => void) => {
			try {
				call();
				fields.push('accepted');
			} catch (e) {
				fields.push(isJobError(e, 'invalid_input') ? e.field : 'other');
			}
		};
		tryLog(() => log('trace' as never, 'x'));
		tryLog(() => log('info', 'x'.repeat(2001)));
		tryLog(() => log('info', 'x', { blob: 'x'.repeat(5000) }));
		tryLog(() => log('info', 'x', { userFacing: 'yes' as never }));
		tryLog(() => log('info', 'x', [1] as never));
		tryLog(() => log('info', 42 as never));
		refusals.set(job.id, fields);
	}
});

type Transport = { name: string; adapter: () => JobAdapter };
const transports: Transport[] = [
	{ name: 'postgres.js', adapter: () => postgresAdapter(f.db.sql) },
	{ name: 'supabase-js (stand-in REST)', adapter: () => f.harness.adapter({ role: 'service_role' }) },
];

/** Runs one job to its close on the edge worker, in this process. */
async function onEdge(store: JobStore, job: Job): Promise<JobOutcome | undefined> {
	let outcome: JobOutcome | undefined;
	const worker = createWorker({
		store,
		handlers: [handler],
		secret: 'job-log-test-secret-0123456789abcdef',
		logger: new RecordingLogger(),
		releaseOnUnload: false,
		onJobSettled: (_j, o) => (outcome = o),
	});
	try {
		await worker.process({ jobId: job.id });
	} finally {
		worker.close();
	}
	return outcome;
}

/** Runs one job to its close on the Node runner. */
async function onNode(store: JobStore, job: Job): Promise<JobOutcome | undefined> {
	let settle!: (o: JobOutcome) => void;
	const settled = new Promise<JobOutcome>((r) => (settle = r));
	const runner = runWorkers({
		sql: f.db.sql,
		store,
		handlers: [handler],
		handleSignals: false,
		logger: new RecordingLogger(),
		onJobSettled: (j, o) => j.id === job.id && settle(o),
	});
	try {
		return await settled;
	} finally {
		await runner.stop({ graceMs: 0 });
	}
}

const runners = [
	['the edge worker', onEdge],
	['the Node runner', onNode],
] as const;

const lines = async (id: string) =>
	(await f.worker.timeline(id)).filter((e) => e.source === 'log').map((e) => `${e.event}:${e.message}`);

for (const transport of transports) {
	for (const [where, run] of runners) {
		describe(`ctx.log on ${where} over ${transport.name}`, () => {
			it('lines land on the timeline, in order, before the close; userFacing is kept apart from the fields', async () => {
				const user = await f.user();
				const job = await user.store.enqueue(logged, { params: { mode: 'story' } });
				expect(await run(new JobStore(transport.adapter()), job)).toBe('done');
				const entries = await f.worker.timeline(job.id);
				expect(entries.map((e) => `${e.source}:${e.event}`)).toEqual([
					'transition:queued',
					'transition:claimed',
					'log:info',
					'log:debug',
					'log:warn',
					'log:error',
					'transition:done',
				]);
				const first = entries[2]!;
				expect(first).toMatchObject({ message: 'Page 3 read', userFacing: true, fields: { page: 3 }, attempt: 1 });
				expect(entries[3]).toMatchObject({ userFacing: false, fields: { key: 'p3' } });
			});

			it('a burst of 250 lines goes out in a few batched writes, not one per line', async () => {
				const counted = counting(transport.adapter());
				const job = await f.worker.enqueue(logged, { params: { mode: 'burst' } });
				expect(await run(new JobStore(counted.adapter), job)).toBe('done');
				expect(await lines(job.id)).toHaveLength(250);
				expect(counted.count('job_log')).toBeLessThanOrEqual(3);
			});

			it('past 500 lines a job keeps 500 and counts the rest in one marker line', async () => {
				const job = await f.worker.enqueue(logged, { params: { mode: 'flood' } });
				expect(await run(new JobStore(transport.adapter()), job)).toBe('done');
				const entries = (await f.worker.timeline(job.id)).filter((e) => e.source === 'log');
				expect(entries).toHaveLength(501);
				const marker = entries.find((e) => e.fields?.dropped !== undefined);
				expect(marker).toMatchObject({ event: 'warn', fields: { dropped: 100 } });
			});

			it('a bad line throws InvalidJobInputError naming the field, and nothing is written', async () => {
				const job = await f.worker.enqueue(logged, { params: { mode: 'bad' } });
				expect(await run(new JobStore(transport.adapter()), job)).toBe('done');
				expect(refusals.get(job.id)).toEqual(['level', 'message', 'fields', 'fields.userFacing', 'fields', 'message']);
				expect(await lines(job.id)).toEqual([]);
			});
		});
	}
}

describe('who reads the lines over REST (supabase-js through the stand-in)', () => {
	let jobId: string;
	let owner: { id: string; store: JobStore };
	const admins: ReturnType<typeof createClient>[] = [];
	beforeAll(async () => {
		owner = await f.user();
		const job = await owner.store.enqueue(logged, { params: { mode: 'story' } });
		jobId = job.id;
		await onEdge(f.worker, job);
	});
	afterAll(async () => {
		await Promise.all(admins.map((c) => c.removeAllChannels()));
	});

	it('the owner reads only the user-facing line', async () => {
		const entries = await owner.store.timeline(jobId);
		expect(entries.map((e) => e.message)).toEqual(['Page 3 read']);
	});

	it('another user reads nothing', async () => {
		const other = await f.user();
		expect(await other.store.timeline(jobId)).toEqual([]);
	});

	it('an admin (app_metadata.role admin) reads every transition and line', async () => {
		const admin = await f.user();
		const token = await f.standin.mintUserToken(admin.id, { claims: { app_metadata: { role: 'admin' } } });
		const client = createClient(f.standin.url, f.standin.anonKey, {
			realtime: { transport: WebSocket as never },
			auth: { persistSession: false, autoRefreshToken: false },
			accessToken: async () => token,
		});
		admins.push(client);
		const entries = await new JobStore(supabaseAdapter(client)).timeline(jobId);
		expect(entries.filter((e) => e.source === 'log')).toHaveLength(4);
		expect(entries.map((e) => e.event)).toContain('done');
	});
});
