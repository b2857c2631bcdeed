/**
 * What a wake-up of the edge worker does, apart from HTTP: claims the job it
 * names or drains queued jobs of the kinds it handles, within the isolate's
 * wall clock and the worker's slots, and reports what it claimed and why it
 * stopped. A job no isolate could ever finish is claimed to be failed with a
 * sentence for its user, not left to block the queue.
 */
import { isJobError } from '../errors.ts';
import type { Job } from '../store/job.ts';
import { JobStore } from '../store/job-store.ts';
import type { CreateWorkerOptions, KickReport, KickStop } from './create-worker.ts';
import { HandlerRegistry } from './job-handler.ts';
import { DEFAULT_HEARTBEAT_MS, JobRunner, type JobOutcome } from './job-runner.ts';
import type { KickRequest } from './kick-request.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';
import { pickLocale, TOO_LONG_FOR_WORKER } from './messages.ts';
import { estimateSeconds, PlanSource } from './plan-source.ts';
import { Slots } from './slots.ts';
import { WallClockBudget } from './wall-clock.ts';
import { resolveRealtimeBudget } from '../internal/tick-budget.ts';

const count = (report: KickReport, outcome: JobOutcome) => {
	report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
};

export class KickProcessor {
	readonly runner: JobRunner;
	#stopping = false;
	readonly #options: CreateWorkerOptions;
	readonly #logger: WorkerLogger;
	readonly #registry: HandlerRegistry;
	readonly #plans: PlanSource;
	readonly #budget: WallClockBudget;
	readonly #slots: Slots;
	readonly #stores: Map<string, JobStore>;
	#deadline: ReturnType<typeof setTimeout> | null = null;

	constructor(options: CreateWorkerOptions, logger: WorkerLogger) {
		this.#options = options;
		this.#logger = logger;
		this.#registry = new HandlerRegistry(options.handlers);
		this.#plans = new PlanSource({
			ttlMs: options.planTtlMs,
			onError: (kind, e) =>
				logger.warn(`${PREFIX} could not fit a plan for ${kind} from history; using the default`, e),
		});
		this.runner = new JobRunner({
			handlers: this.#registry,
			plans: this.#plans,
			backoff: options.retry ?? {},
			tickIntervalMs: options.tickIntervalMs ?? 1000,
			realtimeBudget: resolveRealtimeBudget(options.realtimeBudget),
			heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
			logger,
			onSettled: options.onJobSettled,
		});
		this.#budget = new WallClockBudget({
			wallClockMs: options.wallClockMs,
			marginMs: options.marginMs,
			startedAtMs: options.startedAtMs,
		});
		this.#slots = new Slots(options.concurrency ?? 2);
		this.#stores = new Map<string, JobStore>([[options.store.table, options.store]]);
	}

	/** Set by releaseAll: no wake-up claims from then on. */
	get stopping(): boolean {
		return this.#stopping;
	}

	/** Does what a wake-up asks and resolves when every job it claimed has closed. */
	async process(kick: Partial<KickRequest> = {}): Promise<KickReport> {
		const report: KickReport = { claimed: [], outcomes: {}, stoppedBy: 'empty' };
		if (this.#stopping) return { ...report, stoppedBy: 'shutdown' };
		this.#armDeadline();
		const store = this.#storeFor(kick.jobTable ?? null);
		try {
			return kick.jobId
				? await this.#claimNamed(store, kick.jobId, report)
				: await this.#drain(store, kick.kind ?? null, report);
		} catch (e) {
			if (isJobError(e, 'unknown_job_table')) {
				this.#logger.warn(`${PREFIX} a wake-up named the job table "${store.table}", which does not exist`);
				return { ...report, stoppedBy: 'unknown_table' };
			}
			throw e;
		}
	}

	/** Stops claiming and gives every running job back (release: the attempt is not spent). */
	async releaseAll(reason = 'the worker is shutting down'): Promise<void> {
		this.#stopping = true;
		await this.runner.releaseAll(reason);
	}

	/**
	 * At the end of the budget (the wall clock less its margin) every job still
	 * running is given back (released, its attempt not spent) before the
	 * platform kills the isolate mid-await: the requeue wakes a fresh isolate,
	 * which runs it again. Nothing is claimed after the deadline anyway (no job
	 * fits). Armed by the first wake-up; does not keep a process alive.
	 */
	#armDeadline(): void {
		if (this.#deadline !== null) return;
		const remaining = this.#budget.remainingMs();
		if (!Number.isFinite(remaining)) return;
		const timer = setTimeout(() => void this.#handBack(), Math.max(0, remaining));
		// A Node timer is unref'd by its own method; a Deno timer (a number) by Deno.unrefTimer.
		if (typeof timer === 'number')
			(globalThis as { Deno?: { unrefTimer?(id: number): void } }).Deno?.unrefTimer?.(timer);
		else (timer as { unref?: () => void }).unref?.();
		this.#deadline = timer;
	}

	async #handBack(): Promise<void> {
		const running = this.runner.running.size;
		if (running === 0 || this.#stopping) return;
		const why = "the isolate's wall clock is nearly spent";
		this.#logger.warn(`${PREFIX} ${why}: giving ${running} running job(s) back before it ends`);
		await this.runner.releaseAll(why);
	}

	/** Stops the deadline timer (the worker is closed). */
	close(): void {
		if (this.#deadline !== null) clearTimeout(this.#deadline);
	}

	#storeFor(table: string | null): JobStore {
		const name = table ?? this.#options.store.table;
		let store = this.#stores.get(name);
		if (!store) {
			store = new JobStore(this.#options.store.adapter, {
				table: name,
				staleAfterMs: this.#options.store.staleAfterMs,
			});
			this.#stores.set(name, store);
		}
		return store;
	}

	/** Seconds the job is expected to take, from its kind's plan at its size. */
	async #estimate(job: Job, store: JobStore): Promise<number> {
		const handler = this.#registry.get(job.kind);
		if (!handler) return 0;
		return estimateSeconds(await this.#plans.planFor(handler, store), this.runner.sizeOf(handler, job));
	}

	/** The kinds whose smallest job (no size) fits what is left, or that no isolate could ever fit (to be failed). */
	async #fittingKinds(kinds: readonly string[], store: JobStore): Promise<string[]> {
		const fitting: string[] = [];
		for (const k of kinds) {
			const smallest = estimateSeconds(await this.#plans.planFor(this.#registry.get(k)!, store));
			if (this.#budget.fits(smallest) || !this.#budget.couldEverFit(smallest)) fitting.push(k);
		}
		return fitting;
	}

	/** Closes a job no isolate could finish in time, with a sentence for its user. */
	async #failTooLong(job: Job, store: JobStore, seconds: number): Promise<JobOutcome> {
		this.#logger.warn(
			`${PREFIX} job ${job.id} (${job.kind}) needs ~${seconds.toFixed(1)} s, more than a whole isolate allows: failed (run this kind on the Node runner)`,
		);
		try {
			await store.fail(job.id, pickLocale(TOO_LONG_FOR_WORKER, job.locale), {
				errorCode: 'too_long_for_worker',
				attempt: job.attempts,
			});
			return 'failed';
		} catch (e) {
			this.#logger.warn(`${PREFIX} job ${job.id}: could not fail it`, e);
			return 'lost';
		}
	}

	async #claimNamed(store: JobStore, id: string, report: KickReport): Promise<KickReport> {
		let seen: Job;
		try {
			seen = await store.get(id);
		} catch (e) {
			if (isJobError(e, 'job_not_found')) return { ...report, stoppedBy: 'not_found' };
			throw e;
		}
		if (seen.status !== 'queued') return { ...report, stoppedBy: 'not_queued' };
		if (!this.#registry.get(seen.kind)) {
			this.#logger.warn(`${PREFIX} job ${id}: no handler for the kind "${seen.kind}" here; not claimed`);
			return { ...report, stoppedBy: 'no_handler' };
		}
		const seconds = await this.#estimate(seen, store);
		await this.#slots.acquire();
		try {
			if (this.#stopping) return { ...report, stoppedBy: 'shutdown' };
			if (!this.#budget.fits(seconds) && this.#budget.couldEverFit(seconds)) {
				this.#logger.info(
					`${PREFIX} job ${id} needs ~${seconds.toFixed(1)} s; ${Math.max(0, this.#budget.remainingMs() / 1000).toFixed(1)} s left in this isolate: not claimed`,
				);
				return { ...report, stoppedBy: 'over_budget' };
			}
			const job = await store.claim(id, { heartbeatMs: this.runner.heartbeatMs });
			if (!job) return { ...report, stoppedBy: 'not_claimed' };
			if (!this.#budget.couldEverFit(seconds)) {
				report.claimed.push(job.id);
				count(report, await this.#failTooLong(job, store, seconds));
				return { ...report, stoppedBy: 'done' };
			}
			report.claimed.push(job.id);
			count(report, await this.runner.run(job, store));
			return { ...report, stoppedBy: 'done' };
		} finally {
			this.#slots.release();
		}
	}

	async #drain(store: JobStore, kind: string | null, report: KickReport): Promise<KickReport> {
		const kinds = kind === null ? this.#registry.kinds : this.#registry.get(kind) ? [kind] : [];
		if (kinds.length === 0) return { ...report, stoppedBy: 'no_handler' };
		const runs: Promise<void>[] = [];
		let stoppedBy: KickStop;
		for (;;) {
			if (this.#stopping) {
				stoppedBy = 'shutdown';
				break;
			}
			// The smallest job of a kind (no size) must fit, or claiming one is pointless —
			// unless no isolate could ever fit it: then it is claimed to be failed, not left to block.
			const fitting = await this.#fittingKinds(kinds, store);
			if (fitting.length === 0) {
				stoppedBy = 'over_budget';
				break;
			}
			await this.#slots.acquire();
			let job: Job | undefined;
			try {
				if (!this.#stopping)
					[job] = await store.claimNext({ kinds: fitting, limit: 1, heartbeatMs: this.runner.heartbeatMs });
			} catch (e) {
				this.#slots.release();
				throw e;
			}
			if (this.#stopping || !job) {
				this.#slots.release();
				stoppedBy = this.#stopping ? 'shutdown' : 'empty';
				break;
			}
			const seconds = await this.#estimate(job, store);
			if (!this.#budget.couldEverFit(seconds)) {
				// No isolate could finish it: given back, it would stop every drain after it.
				report.claimed.push(job.id);
				count(report, await this.#failTooLong(job, store, seconds));
				this.#slots.release();
				continue;
			}
			if (!this.#budget.fits(seconds)) {
				// Its size only shows once claimed: give it back unspent and stop here.
				this.#logger.info(
					`${PREFIX} job ${job.id} needs ~${seconds.toFixed(1)} s, more than this isolate has left: released`,
				);
				await store
					.release(job.id, { attempt: job.attempts })
					.catch((e: unknown) => this.#logger.warn(`${PREFIX} job ${job!.id}: release failed`, e));
				this.#slots.release();
				stoppedBy = 'over_budget';
				break;
			}
			report.claimed.push(job.id);
			const claimed = job;
			runs.push(
				this.runner
					.run(claimed, store)
					.then((outcome) => count(report, outcome))
					.finally(() => this.#slots.release()),
			);
		}
		await Promise.all(runs);
		return { ...report, stoppedBy };
	}
}
