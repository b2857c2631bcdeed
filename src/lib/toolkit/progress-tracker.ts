/**
 * Turns measured phases into the percentage the job row carries, and learns
 * about cancellation from the same write.
 */
import { StageInterruptedError } from '../errors.ts';
import { linkSignals, rejectOnAbort } from '../internal/link-signals.ts';
import { TickWriter } from '../internal/tick-writer.ts';
import { interpolate, quantize } from '../internal/progress-math.ts';
import { realClock, realTimers, type Clock, type Timers } from '../internal/timers.ts';
import type { PhasePlan, PhaseSizes, PhaseSpan } from './phase-plan.ts';
import type { PhaseTimings } from './phase-timings.ts';
import type { JobStatusValue, Ticker } from './ticker.ts';

/**
 * Options of {@link ProgressTracker}.
 */
export interface ProgressTrackerOptions {
	plan: PhasePlan;
	/** The claimed attempt, sent with every tick. */
	attempt?: number;
	/**
	 * How often a running phase ticks. Each tick is one round trip that also
	 * answers "was it cancelled?".
	 * @default 1000
	 */
	intervalMs?: number;
	/**
	 * A tick with nothing new to show writes nothing unless this long has
	 * passed since the last write (the heartbeat). It still reads the status
	 * when the ticker can (`Ticker.readStatus`, as JobStore does), so a bar parked
	 * at a phase's 95% ceiling still learns of a cancel within one interval.
	 * Nothing is written between phases: ticks happen inside run() and on report().
	 * @default 5000
	 */
	heartbeatMs?: number;
	/** Input size for phases whose run() gives none: one number for all, or per phase. Known up front, it keeps spans from shifting. */
	size?: PhaseSizes;
	/** An outside reason to stop (worker shutdown): interrupts a running phase like a cancellation. */
	signal?: AbortSignal;
	/** @internal Milliseconds clock, injected in tests. */
	now?: Clock;
	/** @internal When the job started on the `now` clock, for a tracker made later than that (the runner makes it on first use). @default now() */
	startedAt?: number;
	/** @internal The shortest gap between two writes of a visible change (the runner's Realtime budget). */
	minGapMs?: () => number;
	/** @internal Timers, injected in tests. */
	timers?: Timers;
}

/**
 * Options of {@link ProgressTracker.run}.
 */
export interface RunPhaseOptions {
	/** This phase's input size, in the unit its slope was measured in. */
	size?: number | null;
	/** Stops this phase only. */
	signal?: AbortSignal;
	/** Told to stop when the phase is interrupted: a StopFlag that a worker_thread reads. */
	stop?: { stop(): void };
}

interface ActivePhase {
	phase: string;
	span: PhaseSpan;
	expectedMs: number;
	startedAt: number;
	reported: number | null;
	controller: AbortController;
	/** The work settled: no interval tick may start (or re-arm) after this. */
	settled: boolean;
}

/**
 * Runs a job's phases and writes an honest percentage: interpolated from the
 * measured plan while a phase runs (never past 95% of its span), moved to the
 * span's end when the phase's work resolves, and overridden by real counts
 * from {@link ProgressTracker.report}. Progress never goes down. A tick that
 * comes back with anything but 'running' aborts the work's signal and the
 * phase rejects with StageInterruptedError.
 *
 * @example
 * const tracker = new ProgressTracker(store, job.id, { plan: PLAN, attempt: job.attempts });
 * try {
 *   const table = await tracker.run('table', (signal) => readTable(text, signal), { size: text.length });
 *   await store.succeed(job.id, { timings: tracker.timings() });
 * } catch (e) {
 *   if (isJobError(e, 'stage_interrupted')) return;
 *   throw e;
 * }
 */
export class ProgressTracker {
	readonly #writer: TickWriter;
	readonly #plan: PhasePlan;
	readonly #intervalMs: number;
	readonly #defaultSize: PhaseSizes | undefined;
	readonly #outside: AbortSignal | undefined;
	readonly #now: Clock;
	readonly #timers: Timers;
	readonly #createdAt: number;
	readonly #controller = new AbortController();
	readonly #sizes: Record<string, number | null> = {};
	readonly #timings: PhaseTimings = {};
	#progress = 0;
	#stage: string | null = null;
	#active: ActivePhase | null = null;
	#timer: unknown;

	constructor(ticker: Ticker, jobId: string, options: ProgressTrackerOptions) {
		const { attempt, intervalMs = 1000, heartbeatMs = 5000 } = options;
		if (!(intervalMs > 0)) throw new RangeError(`intervalMs must be positive, got ${intervalMs}`);
		if (!(heartbeatMs >= 0)) throw new RangeError(`heartbeatMs must be >= 0, got ${heartbeatMs}`);
		this.#plan = options.plan;
		this.#intervalMs = intervalMs;
		this.#defaultSize = options.size;
		this.#outside = options.signal;
		this.#now = options.now ?? realClock;
		this.#writer = new TickWriter(ticker, jobId, {
			attempt,
			heartbeatMs,
			now: this.#now,
			...(options.minGapMs ? { minGapMs: options.minGapMs } : {}),
			// Inside the tick queue, so no later tick starts before the tracker knows it is interrupted.
			onStatus: (status, { stage }) => {
				if (status !== 'running') this.#controller.abort(this.#interruption(stage, status));
			},
		});
		this.#timers = options.timers ?? realTimers;
		this.#createdAt = options.startedAt ?? this.#now();
	}

	/**
	 * Aborts when a tick learns the job is no longer running; hand it to work
	 * done outside run().
	 *
	 * @example
	 * await uploadResult(file, { signal: tracker.signal });
	 */
	get signal(): AbortSignal {
		return this.#controller.signal;
	}

	/**
	 * The percentage last computed (what the next tick writes).
	 *
	 * @example
	 * console.log(`${tracker.progress}%`);
	 */
	get progress(): number {
		return quantize(this.#progress);
	}

	/**
	 * The phase last run or reported.
	 *
	 * @example
	 * log.info({ stage: tracker.stage });
	 */
	get stage(): string | null {
		return this.#stage;
	}

	/**
	 * Seconds and input size of every phase that completed, for job_succeed(timings)
	 * and, later, PhasePlan.fromHistory. Interrupted or failed phases are left out:
	 * their duration says nothing about how long the phase takes.
	 *
	 * @example
	 * await store.succeed(job.id, { resultId, timings: tracker.timings() });
	 */
	timings(): PhaseTimings {
		return structuredClone(this.#timings);
	}

	/**
	 * Runs one phase. `work` gets an AbortSignal that aborts when the job is
	 * cancelled (or `signal` fires); the call then rejects with
	 * StageInterruptedError at once, without waiting for the work. A promise
	 * is accepted too, but it cannot be stopped, only abandoned.
	 *
	 * @example
	 * const pages = await tracker.run('pdf', (signal) => extractPages(file, { signal }), { size: file.byteLength });
	 * @example
	 * // a worker_thread: the same decision reaches it through a StopFlag
	 * const flag = StopFlag.create();
	 * const reply = await tracker.run('reading', () => inThread(text, flag.buffer), { size: text.length, stop: flag });
	 */
	async run<T>(
		phase: string,
		work: ((signal: AbortSignal) => Promise<T> | T) | Promise<T>,
		options: RunPhaseOptions = {},
	): Promise<T> {
		if (this.#active) throw new Error(`phase "${this.#active.phase}" is still running; phases run one at a time`);
		this.#checkPhase(phase);
		this.#throwIfInterrupted(phase);
		if (options.size !== undefined) this.#sizes[phase] = options.size;
		const controller = new AbortController();
		const active: ActivePhase = {
			phase,
			span: this.#plan.span(phase, this.#currentSizes()),
			expectedMs: this.#plan.expectedSeconds(phase, this.#sizeOf(phase)) * 1000,
			startedAt: this.#now(),
			reported: null,
			controller,
			settled: false,
		};
		const runStart = active.startedAt;
		this.#active = active;
		this.#stage = phase;
		this.#raise(active.span.start);
		const aborted = rejectOnAbort(controller.signal);
		const fromJob = linkSignals(controller, [this.#controller.signal]);
		const fromOutside = linkSignals(controller, [this.#outside, options.signal], (cause) =>
			this.#interruption(phase, null, cause),
		);
		controller.signal.addEventListener('abort', () => options.stop?.stop(), { once: true });
		try {
			await Promise.race([this.#tick(), aborted]);
			active.startedAt = this.#now();
			const running =
				typeof work === 'function' ? Promise.resolve().then(() => work(controller.signal)) : Promise.resolve(work);
			running.catch(() => {}); // abandoned when interrupted
			this.#schedule();
			let value: T;
			try {
				value = await Promise.race([running, aborted]);
			} finally {
				// An interval tick already in flight must not re-arm the timer: a tick
				// after run() returns could land on top of succeed().
				active.settled = true;
				this.#timers.clearTimeout(this.#timer);
			}
			await Promise.race([this.#writer.idle, aborted]); // a tick in flight may still say "cancelled"
			this.#timings[phase] = {
				seconds: (this.#now() - active.startedAt) / 1000,
				size: this.#sizeOf(phase),
				start: (runStart - this.#createdAt) / 1000,
			};
			this.#raise(active.span.end);
			await Promise.race([this.#tick(), aborted]);
			if (controller.signal.aborted) throw controller.signal.reason;
			return value;
		} catch (e) {
			if (!controller.signal.aborted) controller.abort(e); // the work failed or a tick did: stop what is left
			delete this.#timings[phase];
			throw isInterruption(controller.signal.reason) ? controller.signal.reason : e;
		} finally {
			this.#timers.clearTimeout(this.#timer);
			this.#active = null;
			fromJob.unlink();
			fromOutside.unlink();
		}
	}

	/**
	 * Reports a real count for a phase (`done` is the fraction finished,
	 * 0..1). It overrides the estimate from then on and, unlike the estimate,
	 * may fill the phase. Inside that phase's run() the next interval tick
	 * carries it; outside a run it ticks now (skipped if nothing visible changed).
	 *
	 * @example
	 * for (const [i, page] of pages.entries()) {
	 *   await ocr(page);
	 *   await tracker.report('pdf', { done: (i + 1) / pages.length });
	 * }
	 */
	async report(phase: string, { done }: { done: number }): Promise<void> {
		this.#checkPhase(phase);
		if (typeof done !== 'number' || Number.isNaN(done))
			throw new RangeError(`done must be a fraction 0..1, got ${String(done)}`);
		const fraction = Math.min(1, Math.max(0, done));
		this.#throwIfInterrupted(phase);
		const active = this.#active;
		if (active && active.phase !== phase) throw new RangeError(`report("${phase}") while phase "${active.phase}" runs`);
		if (active) {
			active.reported = Math.max(active.reported ?? 0, fraction);
			return;
		}
		const span = this.#plan.span(phase, this.#currentSizes());
		this.#stage = phase;
		this.#raise(span.start + (span.end - span.start) * fraction);
		await this.#tick();
		this.#throwIfInterrupted(phase);
	}

	#checkPhase(phase: string): void {
		if (!this.#plan.has(phase))
			throw new RangeError(`unknown phase "${phase}"; the plan has ${this.#plan.phases.join(', ')}`);
	}

	#sizeOf(phase: string): number | null {
		if (phase in this.#sizes) return this.#sizes[phase] ?? null;
		const d = this.#defaultSize;
		return (typeof d === 'number' ? d : d?.[phase]) ?? null;
	}

	#currentSizes(): Record<string, number | null> {
		return Object.fromEntries(this.#plan.phases.map((p) => [p, this.#sizeOf(p)]));
	}

	#raise(percent: number): void {
		this.#progress = Math.max(this.#progress, percent);
	}

	#interruption(stage: string, status: JobStatusValue | null, cause?: unknown): StageInterruptedError {
		const why = status ? `the job is ${status}` : 'aborted';
		return new StageInterruptedError(`stage "${stage}" interrupted: ${why}`, { stage, status, cause });
	}

	#throwIfInterrupted(phase: string): void {
		const reason: unknown = this.#controller.signal.reason;
		if (this.#controller.signal.aborted)
			throw isInterruption(reason) ? reason : this.#interruption(phase, null, reason);
		if (this.#outside?.aborted) throw this.#interruption(phase, null, this.#outside.reason);
	}

	#schedule(): void {
		this.#timer = this.#timers.setTimeout(() => {
			const active = this.#active;
			if (!active || active.settled || active.controller.signal.aborted) return;
			const estimate =
				active.reported !== null
					? active.span.start + (active.span.end - active.span.start) * active.reported
					: interpolate(active.span, this.#now() - active.startedAt, active.expectedMs);
			this.#raise(estimate);
			this.#tick().then(
				() => {
					if (this.#active === active && !active.settled && !active.controller.signal.aborted) this.#schedule();
				},
				(e) => active.controller.abort(e),
			);
		}, this.#intervalMs);
	}

	/**
	 * Seconds until the run is expected to end: what is left of the current
	 * phase plus the expected seconds of every later phase. With a real count
	 * (report()), what is left of the phase comes from this run's own pace,
	 * blended with the plan (see {@link phaseSecondsFromPace}): a machine or a
	 * model slower than the one the plan was measured on is seen within a few
	 * percent of the phase, not at its end. Without one, from the plan's clock;
	 * once the phase has run past its expected time, the overrun alone,
	 * negated: the plan no longer knows when it ends, and the row says so
	 * rather than a number.
	 *
	 * @example
	 * tracker.etaSeconds(); // 42.5
	 */
	etaSeconds(): number | null {
		const stage = this.#stage;
		if (stage === null) return null;
		const phases = this.#plan.phases;
		const later = phases
			.slice(phases.indexOf(stage) + 1)
			.reduce((sum, p) => sum + this.#plan.expectedSeconds(p, this.#sizeOf(p)), 0);
		const active = this.#active;
		if (!active || active.phase !== stage || active.settled) return later;
		const expected = active.expectedMs / 1000;
		const elapsed = (this.#now() - active.startedAt) / 1000;
		if (active.reported !== null)
			return phaseSecondsFromPace(expected, elapsed, active.reported) * (1 - active.reported) + later;
		if (elapsed > expected) return -(elapsed - expected);
		return expected - elapsed + later;
	}

	/** Ticks at most one at a time; only reads the status when nothing visible changed and no heartbeat is due. */
	#tick(): Promise<void> {
		return this.#writer.write(() => {
			if (this.#stage === null || this.#controller.signal.aborted) return null;
			const eta = this.etaSeconds();
			return { progress: this.#progress, stage: this.#stage, ...(eta === null ? {} : { etaSeconds: eta }) };
		});
	}
}

/**
 * How much of a phase the plan weighs as, against the run's own pace: its
 * expected time counts as if this share of the phase had been seen at the
 * plan's pace. At 5% done the plan and the pace weigh alike; at 10%, the pace
 * twice the plan; at 40%, eight times.
 */
const PLAN_WEIGHT = 0.05;

/**
 * A phase's whole expected duration once `done` (0..1) of it took `elapsed`
 * seconds: the seconds per unit of work seen so far, with the plan's
 * `expected` counted as PLAN_WEIGHT of the phase. At 0 done, the plan; as the
 * count grows, the run's own pace.
 *
 * @internal
 * @example
 * phaseSecondsFromPace(80, 12, 0.1); // ≈106.7: the plan said 80 s, the pace says 120 s
 */
export function phaseSecondsFromPace(expected: number, elapsed: number, done: number): number {
	return (PLAN_WEIGHT * expected + elapsed) / (PLAN_WEIGHT + done);
}

function isInterruption(e: unknown): e is StageInterruptedError {
	return e instanceof StageInterruptedError;
}
