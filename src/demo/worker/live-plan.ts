/**
 * A phase plan measured from the kind's own history: PhasePlan.fromHistory
 * with the declared plan as the fallback, refitted in the background (at
 * start and after finished jobs, at most every `minIntervalMs`).
 *
 * Why a live object: the worker reads `handler.kind.plan` for every job, and a
 * declared plan wins over history there. Handing the worker a kind whose `plan`
 * getter returns the latest fit gives each job the freshest measured plan
 * without changing the worker.
 */
import type { JobKind } from 'supabase-jobs';
import { PhasePlan } from 'supabase-jobs/worker';

/** Where PhasePlan.fromHistory reads a kind's finished jobs (the store). */
type PhaseHistorySource = Parameters<typeof PhasePlan.fromHistory>[0];

export class LivePlan {
	#current: PhasePlan;
	#fitting: Promise<PhasePlan> | null = null;
	#lastFit = -Infinity;
	readonly #fallback: PhasePlan;
	readonly #source: () => PhaseHistorySource | null;
	readonly #kind: string;
	readonly #minIntervalMs: number;
	readonly #onError: (e: unknown) => void;

	constructor(options: {
		kind: string;
		fallback: PhasePlan;
		/** Null while there is no database to read history from: the fallback stays. */
		source: () => PhaseHistorySource | null;
		minIntervalMs?: number;
		onError?: (e: unknown) => void;
	}) {
		this.#kind = options.kind;
		this.#fallback = options.fallback;
		this.#current = options.fallback;
		this.#source = options.source;
		this.#minIntervalMs = options.minIntervalMs ?? 30_000;
		this.#onError = options.onError ?? (() => {});
	}

	/** The plan the next job runs under. */
	get current(): PhasePlan {
		return this.#current;
	}

	/** Refits from history unless a fit ran within `minIntervalMs` (or `force`). Never rejects. */
	refresh(force = false): Promise<PhasePlan> {
		if (this.#fitting) return this.#fitting;
		if (!force && performance.now() - this.#lastFit < this.#minIntervalMs) return Promise.resolve(this.#current);
		const source = this.#source();
		if (!source) return Promise.resolve(this.#current);
		this.#lastFit = performance.now();
		this.#fitting = PhasePlan.fromHistory(source, this.#kind, { fallback: this.#fallback })
			.then(
				(plan) => (this.#current = plan),
				(e: unknown) => {
					this.#onError(e);
					return this.#current;
				},
			)
			.finally(() => (this.#fitting = null));
		return this.#fitting;
	}

	/**
	 * `kind` with its `plan` read from this live plan.
	 *
	 * @example
	 * const handler = defineJobHandler(live.bind(documentAnalyse), run);
	 */
	bind<K extends JobKind>(kind: K): K {
		const current = () => this.current;
		return Object.freeze({
			...kind,
			get plan() {
				return current();
			},
		});
	}
}
