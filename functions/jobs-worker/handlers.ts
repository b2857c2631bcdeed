/**
 * The kinds of work this worker runs: one `defineJobHandler` per kind, all in
 * `handlers`. To add a kind, declare it with `defineJobKind` (in a module the
 * app shares, so enqueue is typed by it too), write its handler here and
 * append it to `handlers`. The worker claims only the kinds listed.
 */
import { z } from 'npm:zod@^4';
import { defineJobKind } from 'supabase-jobs';
import { PhasePlan, defineJobHandler, delay, type JobHandler } from 'supabase-jobs/worker';
import { createDocumentAnalyseHandler } from '../../src/demo/worker/document-analyse.ts';

/**
 * A demo kind whose work is nothing but time: `steps` sleeps of `stepMs`,
 * each reported as a real count, then a short `wrapup` phase. Its size is the
 * total milliseconds, so the plan (one second per 1000 ms) predicts it exactly.
 *
 * @example
 * ```ts
 * const job = await store.enqueue(sleepSteps, { params: { steps: 10, stepMs: 200 } });
 * ```
 */
export const sleepSteps = defineJobKind({
	name: 'demo.sleep-steps',
	params: z.object({
		steps: z.number().int().min(1).max(10_000),
		stepMs: z.number().int().min(0).max(60_000),
	}),
	plan: PhasePlan.fromSeconds({ steps: 0, wrapup: 0.01 }, { perKilochar: { steps: 1 } }),
});

/**
 * Runs `demo.sleep-steps`: the steps through the tracker (a real count per
 * step), honouring the signal; returns a fresh id as the produced record.
 *
 * @example
 * ```ts
 * const handlers = [sleepStepsHandler, myExtractHandler];
 * ```
 */
export const sleepStepsHandler = defineJobHandler(
	sleepSteps,
	async ({ params, tracker }) => {
		// One phase, timed by the tracker (its seconds and size go to succeed's
		// timings); each step reports a real count, which the phase's next tick
		// writes together with the heartbeat and the "was it cancelled?" check.
		await tracker.run('steps', async (signal) => {
			for (let i = 0; i < params.steps; i++) {
				await delay(params.stepMs, signal);
				await tracker.report('steps', { done: (i + 1) / params.steps });
			}
		});
		await tracker.run('wrapup', () => Promise.resolve());
		return crypto.randomUUID();
	},
	{ size: ({ params }) => ({ steps: params.steps * params.stepMs }) },
);

/**
 * The demo app's kind (src/routes): analyse an uploaded document. The work
 * lives in src/demo/analysis (pure modules), the wiring in src/demo/worker.
 */
export const documentAnalyseHandler = createDocumentAnalyseHandler();

/**
 * Every handler this worker registers; append new kinds here.
 *
 * @example
 * ```ts
 * serveWorker(handlers);
 * ```
 */
export const handlers: JobHandler[] = [sleepStepsHandler, documentAnalyseHandler];
