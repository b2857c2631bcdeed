/**
 * The Node runner's claim loop: claims with claimNext up to `concurrency`
 * running jobs plus a prefetched hand (the local queue), hands them to free
 * slots oldest first, sleeps until a wake-up, and on stop gives back what
 * never started, waits out the grace and releases the rest.
 *
 * The wake-up's fast path: when the last claim came back short (the table
 * held nothing more for us) and then exactly one notification named exactly
 * one job, that job is the only one there can be, and it is claimed by id: a
 * primary-key read instead of the claim order's index walk
 * (docs/architecture.md, "The wake-up path"). Anything else announced since
 * (a second notification, one naming no job, the poll, a reconnect) leaves it
 * to claimNext.
 */
import type { Job } from '../store/job.ts';
import { tableLabel } from '../store/job-summary.ts';
import type { JobStore } from '../store/job-store.ts';
import { DueWakeups } from './due-wakeups.ts';
import type { JobOutcome, JobRunner } from './job-runner.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';
import { CLAIM_MAX, PrefetchSizer } from './prefetch.ts';
import { WakeSignal } from './wake-signal.ts';

/** Times of jobs announced as claimable later that the runner keeps a wake-up for (the nearest ones). */
const DUE_KEPT = 1024;

interface NotifyPayload {
	job_table?: string | null;
	kind?: string | null;
	kinds?: string[] | null;
	/** Set when the statement was about one job. */
	job_id?: string | null;
	available_at?: string;
}

/** What the loop does after a claim: claim again at once, sleep until a wake-up, or end. */
type Step = 'again' | 'wait' | 'stop';

export interface ClaimLoopOptions {
	store: JobStore;
	kinds: readonly string[];
	concurrency: number;
	pollMs: number;
	logger: WorkerLogger;
	/** Counted as jobs start (`claimed`); the runner's onSettled counts the outcomes. */
	stats: { claimed: number; outcomes: Partial<Record<JobOutcome, number>> };
	/** Builds the runner, given what to call once a run's handler is done (its slot is free). */
	runner: (onWorked: () => void) => JobRunner;
}

export class ClaimLoop {
	readonly runner: JobRunner;
	/** Resolves once the first claim has answered (jobs or an error). */
	readonly claimedOnce: Promise<void>;
	readonly #o: ClaimLoopOptions;
	readonly #wake = new WakeSignal();
	readonly #due = new DueWakeups(() => this.lookAgain(), DUE_KEPT);
	readonly #prefetch = new PrefetchSizer();
	/** Claimed jobs waiting in memory for a free slot (the local queue), in claim order. */
	readonly #local: Job[] = [];
	/** Who waits for every run to settle. */
	readonly #idleWaiters: (() => void)[] = [];
	#firstClaim!: () => void;
	#looping: Promise<void> = Promise.resolve();
	/** Runs not yet settled (their close may still be in flight). */
	#runs = 0;
	/** Jobs whose handler is running: what `concurrency` bounds. */
	#busy = 0;
	#stopping = false;
	/** The last claim came back full (or a notification or poll came since): the table may hold more. */
	#moreMayWait = true;
	/** The last claim came back short. */
	#dry = false;
	/** Since the last claim: nothing announced (undefined), one job by id, or anything else (null). */
	#announced: string | null | undefined;

	constructor(options: ClaimLoopOptions) {
		this.#o = options;
		this.claimedOnce = new Promise<void>((resolve) => (this.#firstClaim = resolve));
		// A slot is free once the handler is done: the next claim overlaps the close in flight.
		this.runner = options.runner(() => {
			this.#busy--;
			this.#dispatch();
			this.#wake.poke();
		});
	}

	/** Starts claiming. */
	start(): void {
		this.#looping = this.#loop();
	}

	/** Something may have changed that no notification named (a reconnect, a due time): look again. */
	lookAgain(): void {
		this.#mayHaveMore();
		this.#wake.poke();
	}

	/** A NOTIFY payload: wakes the loop when it concerns this table and these kinds, now or later. */
	onNotify(text: string): void {
		let payload: NotifyPayload = {};
		try {
			payload = JSON.parse(text) as NotifyPayload;
		} catch {
			// A payload we cannot read is still a hint that something changed.
		}
		// One notification per statement: job_table/kind are null when it mixed several.
		if (typeof payload.job_table === 'string' && payload.job_table !== tableLabel(this.#o.store.table)) return;
		const forKinds = payload.kinds ?? (typeof payload.kind === 'string' ? [payload.kind] : null);
		if (forKinds && !forKinds.some((k) => this.#o.kinds.includes(k))) return;
		const at = payload.available_at ? Date.parse(payload.available_at) : NaN;
		if (!(at > Date.now())) {
			this.#moreMayWait = true;
			this.#announced = this.#announced === undefined && typeof payload.job_id === 'string' ? payload.job_id : null;
			return this.#wake.poke();
		}
		// Claimable later: wake then rather than at the next poll.
		this.#due.add(at);
	}

	/** Stops claiming, gives back what never started, waits `graceMs` for the running jobs, releases the rest. */
	async stop(graceMs: number): Promise<void> {
		this.#stopping = true;
		this.#wake.poke();
		this.#due.close();
		await this.#looping;
		// Claimed but never started: back to the queue, unspent, before waiting for the running ones.
		await this.#giveBack(this.#local.splice(0));
		if (this.#runs > 0) {
			let timer: ReturnType<typeof setTimeout> | undefined;
			await Promise.race([this.#allRunsEnded(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
			clearTimeout(timer);
		}
		if (this.#runs > 0) {
			this.#o.logger.info(`${PREFIX} ${this.#runs} job(s) still running after the grace; releasing them`);
			await this.runner.releaseAll('the runner is stopping');
			await this.#allRunsEnded();
		}
	}

	async #loop(): Promise<void> {
		while (!this.#stopping) {
			this.#dispatch();
			const free = this.#o.concurrency - this.#busy;
			const ahead = this.#prefetch.target();
			const local = this.#local;
			// Claim when a slot waits with nothing in hand, or when the jobs in hand run low
			// while the table still had more (a short claim means it ran dry: wait for a wake).
			const low = local.length <= ahead / 2 && (this.#moreMayWait || local.length === 0);
			if (free > 0 && local.length === 0 && this.#dry && typeof this.#announced === 'string') {
				const step = await this.#claimAnnounced(this.#announced);
				if (step === 'stop') break;
				if (step === 'wait') {
					await this.#sleep();
					continue;
				}
			}
			if ((free > 0 && local.length === 0) || (ahead > 0 && low)) {
				const limit = Math.min(free + ahead - local.length, CLAIM_MAX);
				if (limit > 0) {
					const step = await this.#claimInOrder(limit);
					if (step === 'stop') break;
					if (step === 'again') continue;
				}
			}
			await this.#sleep();
		}
	}

	/** The fast path: claims the one announced job by id; 'again' when it was not there to claim. */
	async #claimAnnounced(id: string): Promise<Step> {
		this.#announced = undefined;
		this.#moreMayWait = false;
		const job = await this.#o.store.claim(id, { heartbeatMs: this.runner.heartbeatMs }).catch((e: unknown) => {
			this.#o.logger.warn(`${PREFIX} job ${id}: claiming the announced job failed; claiming in order instead`, e);
			return null;
		});
		if (job && this.#stopping) {
			await this.#giveBack([job]);
			return 'stop';
		}
		if (job) {
			this.#local.push(job);
			this.#dispatch();
			// Nothing else was announced: wait, as after a short claim.
			return 'wait';
		}
		// Taken by another runner, or not claimable: the usual claim decides.
		this.#moreMayWait = true;
		return 'again';
	}

	/** Claims up to `limit` jobs in the claim order; 'again' when the claim came back full. */
	async #claimInOrder(limit: number): Promise<Step> {
		const { store, kinds, logger, pollMs } = this.#o;
		this.#moreMayWait = false;
		this.#announced = undefined;
		this.#prefetch.mark();
		let jobs: Job[];
		try {
			jobs = await store.claimNext({ kinds, limit, heartbeatMs: this.runner.heartbeatMs });
			this.#dry = jobs.length < limit;
			this.#firstClaim();
		} catch (e) {
			this.#firstClaim(); // answered, with an error: it polls from here
			logger.error(`${PREFIX} claiming failed; trying again in ${pollMs} ms`, e);
			return 'wait';
		}
		if (this.#stopping) {
			// Claimed while stop() was called: give them straight back, unspent.
			await this.#giveBack(jobs);
			return 'stop';
		}
		this.#local.push(...jobs);
		this.#dispatch();
		if (jobs.length < limit) return 'wait';
		this.#moreMayWait = true;
		return 'again'; // more may be waiting: claim again as soon as a slot frees or the hand runs low
	}

	/** Sleeps until a wake-up; the poll backstop looks again whatever the last claim said. */
	#sleep(): Promise<void> {
		return this.#wake.wait(this.#o.pollMs, () => this.#mayHaveMore());
	}

	#mayHaveMore(): void {
		this.#moreMayWait = true;
		this.#announced = null;
	}

	/** Hands claimed jobs waiting in memory to the free slots, oldest first. */
	#dispatch(): void {
		while (this.#busy < this.#o.concurrency && this.#local.length > 0 && !this.#stopping)
			this.#start(this.#local.shift()!);
	}

	#start(job: Job): void {
		this.#o.stats.claimed++;
		this.#busy++;
		this.#prefetch.started++;
		this.#runs++;
		// One callback for every run, not a closure and a finally() each.
		this.runner.run(job, this.#o.store).then(this.#runEnded, this.#runEnded);
	}

	readonly #runEnded = (): void => {
		this.#runs--;
		if (this.#runs === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
		this.#wake.poke();
	};

	#allRunsEnded(): Promise<void> {
		return this.#runs === 0 ? Promise.resolve() : new Promise<void>((r) => this.#idleWaiters.push(r));
	}

	/** Gives claimed jobs that never started back to the queue, unspent. */
	async #giveBack(jobs: Job[]): Promise<void> {
		await Promise.all(
			jobs.map((j) =>
				this.#o.store
					.release(j.id, { attempt: j.attempts })
					.catch((e: unknown) => this.#o.logger.warn(`${PREFIX} job ${j.id}: release failed`, e)),
			),
		);
	}
}
