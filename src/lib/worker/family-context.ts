/**
 * The parent-and-child part of a handler's context (`ctx.enqueueChild`,
 * `ctx.children`, `ctx.waitForChildren`), bound to one run. A child whose
 * caller gave no `expectedSeconds` is weighed by its own kind's plan.
 */
import type { JobKind } from '../store/job-kind.ts';
import type { Job } from '../store/job.ts';
import type { ChildInput, JobStore } from '../store/job-store.ts';
import type { PhaseSizes } from '../toolkit/phase-plan.ts';
import type { HandlerRegistry, JobHandler } from './job-handler.ts';
import { estimateSeconds, type PlanSource } from './plan-source.ts';
import { WaitingForChildren } from './waiting-for-children.ts';

export function familyContext(
	settings: { handlers: HandlerRegistry; plans: PlanSource },
	sizeOf: (handler: JobHandler, job: Job) => PhaseSizes | null,
	job: Job,
	store: JobStore,
) {
	const attempt = job.attempts;
	const expectedSeconds = async (kind: string | JobKind, input: ChildInput): Promise<number | undefined> => {
		if (input.expectedSeconds !== undefined) return input.expectedSeconds;
		const child = settings.handlers.get(typeof kind === 'string' ? kind : kind.name);
		if (!child) return undefined;
		const plan = await settings.plans.planFor(child, store);
		const seconds = estimateSeconds(plan, sizeOf(child, { ...job, params: (input.params ?? {}) as never }));
		return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
	};
	return {
		enqueueChild: async (kind: string | JobKind, input: ChildInput = {}) =>
			store.enqueueChild(
				job.id,
				kind as string,
				{
					...input,
					expectedSeconds: await expectedSeconds(kind, input),
				} as ChildInput,
			),
		children: () => store.children(job.id),
		waitForChildren: async () => {
			if ((await store.waitForChildren(job.id, { attempt })) === 'waiting') throw new WaitingForChildren(job.id);
			return await store.children(job.id);
		},
	};
}
