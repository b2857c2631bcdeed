/**
 * OpenTelemetry spans, recorded by the SDK's in-memory exporter: enqueue,
 * claim, run and close, with the job's id, kind and attempt; the run span is
 * the parent of the handler's own spans and of the close; a failed job marks
 * its run span as an error. On the edge worker and the Node runner alike. With
 * `@opentelemetry/api` absent (its import stubbed to fail, as in an app
 * without it) the same jobs run and nothing is recorded.
 */
import { context, trace, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
	BasicTracerProvider,
	InMemorySpanExporter,
	SimpleSpanProcessor,
	type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { postgresAdapter } from '../../src/lib/adapters/postgres.ts';
import { setTracingImporter } from '../../src/lib/internal/tracing.ts';
import { defineJobKind } from '../../src/lib/store/job-kind.ts';
import { JobStore } from '../../src/lib/store/job-store.ts';
import type { Job } from '../../src/lib/store/job.ts';
import { PhasePlan } from '../../src/lib/toolkit/phase-plan.ts';
import { createWorker } from '../../src/lib/worker/create-worker.ts';
import { defineJobHandler } from '../../src/lib/worker/job-handler.ts';
import type { JobOutcome } from '../../src/lib/worker/job-runner.ts';
import { JobUserError } from '../../src/lib/worker/job-user-error.ts';
import { runWorkers } from '../../src/lib/worker/node-runner.ts';
import { useTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { RecordingLogger } from './helpers/recording-logger.ts';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();
let db: TestDatabase;
let store: JobStore;

beforeAll(async () => {
	context.setGlobalContextManager(contextManager.enable());
	trace.setGlobalTracerProvider(provider);
	setTracingImporter(null);
	db = await useTestDatabase();
	store = new JobStore(postgresAdapter(db.sql));
});
afterEach(() => exporter.reset());
afterAll(async () => {
	setTracingImporter(null);
	trace.disable();
	context.disable();
	await provider.shutdown();
});

const traced = defineJobKind({
	name: 'test.traced',
	params: z.object({ fail: z.enum(['no', 'user', 'crash']) }),
	plan: PhasePlan.fromSeconds({ work: 0.001 }),
});

const handler = defineJobHandler(
	traced,
	async ({ params }) => {
		// The user's own span: it must nest under the run span.
		await trace.getTracer('app').startActiveSpan('ocr page', async (span) => {
			await Promise.resolve();
			span.end();
		});
		if (params.fail === 'user') throw new JobUserError('The file is not a PDF.', { errorCode: 'not_pdf' });
		if (params.fail === 'crash') throw new Error('parser crashed');
	},
	{},
);

async function onEdge(job: Job): Promise<JobOutcome | undefined> {
	let outcome: JobOutcome | undefined;
	const worker = createWorker({
		store,
		handlers: [handler],
		secret: 'tracing-test-secret-0123456789abcdef',
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

async function onNode(job: Job): Promise<JobOutcome> {
	let settle!: (o: JobOutcome) => void;
	const settled = new Promise<JobOutcome>((r) => (settle = r));
	const runner = runWorkers({
		sql: db.sql,
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

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('the enqueue span', () => {
	it('is a producer span with the job id, kind and attempt, under the caller span', async () => {
		const job = await trace.getTracer('app').startActiveSpan('POST /upload', async (request) => {
			const j = await store.enqueue(traced, { params: { fail: 'no' } });
			request.end();
			return j;
		});
		const [enqueue] = named('enqueue jobs');
		expect(enqueue?.attributes).toMatchObject({
			'messaging.system': 'supabase_jobs',
			'messaging.operation.type': 'send',
			'messaging.operation.name': 'enqueue',
			'messaging.destination.name': 'jobs',
			'messaging.message.id': job.id,
			'supabase_jobs.job.kind': 'test.traced',
			'supabase_jobs.job.attempt': 0,
		});
		expect(parentOf(enqueue!)).toBe(named('POST /upload')[0]!.spanContext().spanId);
	});
});

for (const [where, run] of [
	['the edge worker', onEdge],
	['the Node runner', onNode],
] as const) {
	describe(`spans on ${where}`, () => {
		it('claim, run and close carry the job id, kind and attempt; the handler span and the close nest under run', async () => {
			const job = await store.enqueue(traced, { params: { fail: 'no' } });
			expect(await run(job)).toBe('done');
			const mine = spans().filter((s) => s.attributes['messaging.message.id'] === job.id);
			const byOp = Object.fromEntries(mine.map((s) => [s.attributes['messaging.operation.name'], s]));
			for (const op of ['claim', 'run', 'close'])
				expect(byOp[op]?.attributes, op).toMatchObject({
					'messaging.system': 'supabase_jobs',
					'messaging.destination.name': 'jobs',
					'supabase_jobs.job.kind': 'test.traced',
					'supabase_jobs.job.attempt': 1,
				});
			const runSpan = byOp.run!;
			expect(runSpan.attributes['supabase_jobs.job.outcome']).toBe('done');
			expect(runSpan.status.code).not.toBe(SpanStatusCode.ERROR);
			const ocr = named('ocr page').find((s) => s.spanContext().traceId === runSpan.spanContext().traceId);
			expect(ocr && parentOf(ocr), "the handler's span is a child of run").toBe(runSpan.spanContext().spanId);
			expect(parentOf(byOp.close!)).toBe(runSpan.spanContext().spanId);
		});

		it('a job failed by its handler marks its run span as an error', async () => {
			const job = await store.enqueue(traced, { params: { fail: 'user' } });
			expect(await run(job)).toBe('failed');
			const runSpan = named('run jobs').find((s) => s.attributes['messaging.message.id'] === job.id)!;
			expect(runSpan.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'The file is not a PDF.' });
			expect(runSpan.attributes['supabase_jobs.job.outcome']).toBe('failed');
			expect(runSpan.events.map((e) => e.name)).toContain('exception');
		});

		it('a crash that will be retried marks its run span as an error too', async () => {
			const job = await store.enqueue(traced, { params: { fail: 'crash' } });
			expect(await run(job)).toBe('retried');
			const runSpan = named('run jobs').find((s) => s.attributes['messaging.message.id'] === job.id)!;
			expect(runSpan.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'parser crashed' });
		});
	});
}

describe('without @opentelemetry/api', () => {
	it('the same jobs run on both runners and no span is made', async () => {
		setTracingImporter(() => Promise.reject(new Error("Cannot find package '@opentelemetry/api'")));
		try {
			const first = await store.enqueue(traced, { params: { fail: 'no' } });
			expect(await onEdge(first)).toBe('done');
			const second = await store.enqueue(traced, { params: { fail: 'no' } });
			expect(await onNode(second)).toBe('done');
			expect(spans().filter((s) => s.instrumentationScope.name === 'supabase-jobs')).toEqual([]);
		} finally {
			setTracingImporter(null);
		}
	});
});
