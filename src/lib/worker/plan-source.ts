/**
 * Which PhasePlan a job runs under, and what it predicts for the job's size.
 */
import { PhasePlan, type PhaseSizes } from '../toolkit/phase-plan.ts';
import type { JobStore } from '../store/job-store.ts';
import type { JobHandler } from './job-handler.ts';

/**
 * The plan of a kind that declares none and has no history yet: one phase,
 * `work`. A handler without a plan runs `tracker.run('work', ...)` or
 * `tracker.report('work', { done })`.
 *
 * @example
 * ```ts
 * await tracker.report(DEFAULT_PHASE, { done: i / n });
 * ```
 */
export const DEFAULT_PHASE = 'work';

const DEFAULT_PLAN = PhasePlan.fromSeconds({ [DEFAULT_PHASE]: 1 });

/**
 * Seconds a plan predicts for a whole job: the sum of every phase's expected
 * seconds at the job's size(s).
 *
 * @example
 * ```ts
 * estimateSeconds(PhasePlan.fromSeconds({ pdf: 1, table: 30 }, { perKilochar: { table: 0.5 } }), 10_000); // 36
 * ```
 */
export function estimateSeconds(plan: PhasePlan, size?: PhaseSizes | null): number {
	const sizeOf = (phase: string) => (typeof size === 'number' ? size : size?.[phase]);
	return plan.phases.reduce((total, phase) => total + plan.expectedSeconds(phase, sizeOf(phase) ?? null), 0);
}

/**
 * Resolves plans per kind: the kind's declared PhasePlan, else one fitted from
 * the kind's recorded timings (PhasePlan.fromHistory, cached for `ttlMs`),
 * else the one-phase {@link DEFAULT_PHASE} plan.
 *
 * @internal
 * @example
 * ```ts
 * const plans = new PlanSource({ ttlMs: 300_000 });
 * const plan = await plans.planFor(handler, store);
 * ```
 */
export class PlanSource {
	readonly #ttlMs: number;
	readonly #cache = new Map<string, { plan: Promise<PhasePlan>; at: number; value?: PhasePlan }>();
	readonly #onError: (kind: string, e: unknown) => void;

	constructor(options: { ttlMs?: number; onError?: (kind: string, e: unknown) => void } = {}) {
		this.#ttlMs = options.ttlMs ?? 300_000;
		this.#onError = options.onError ?? (() => {});
	}

	planFor(handler: JobHandler, store: JobStore): Promise<PhasePlan> {
		const declared = handler.kind.plan;
		if (declared instanceof PhasePlan) return Promise.resolve(declared);
		const key = `${store.table}\u0000${handler.kind.name}`;
		const cached = this.#cache.get(key);
		const now = Date.now();
		if (cached && now - cached.at < this.#ttlMs) return cached.plan;
		const plan: Promise<PhasePlan> = PhasePlan.fromHistory(store, handler.kind.name).then(
			(fitted) => (entry.value = fitted ?? DEFAULT_PLAN),
			(e: unknown) => {
				// A plan is a nicety: without history the job still runs, under the default plan.
				this.#onError(handler.kind.name, e);
				this.#cache.delete(key);
				return DEFAULT_PLAN;
			},
		);
		const entry: { plan: Promise<PhasePlan>; at: number; value?: PhasePlan } = { plan, at: now };
		this.#cache.set(key, entry);
		return plan;
	}

	/** As {@link planFor} when the plan is at hand (declared, or fitted and fresh): no promise per job. */
	planNow(handler: JobHandler, store: JobStore): PhasePlan | undefined {
		const declared = handler.kind.plan;
		if (declared instanceof PhasePlan) return declared;
		const cached = this.#cache.get(`${store.table}\u0000${handler.kind.name}`);
		return cached && Date.now() - cached.at < this.#ttlMs ? cached.value : undefined;
	}
}
