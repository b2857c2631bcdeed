/**
 * The handler's part of one run, as two objects: the run's state (its stops,
 * the last contact with the row, the heartbeat, streams, metadata, log lines)
 * and the context the handler is given. Everything a handler may never touch
 * (a tracker, a signal, a stream, a child, a question) is made on first use:
 * a run that reads only `ctx.params` costs these two objects and its heartbeat
 * timer, not a closure per feature (those were a good share of the Node
 * runner's CPU per job, much of it in the garbage collector).
 */
import { isJobError, StageInterruptedError } from '../errors.ts';
import { LazyAbort } from '../internal/lazy-abort.ts';
import { checkMetadata } from '../store/input-checks.ts';
import type { Job } from '../store/job.ts';
import type { JobStore, TickInput } from '../store/job-store.ts';
import type { LogLevel } from '../store/job-timeline.ts';
import type { JobStatusValue } from '../state.ts';
import type { PhasePlan, PhaseSizes } from '../toolkit/phase-plan.ts';
import { ProgressTracker } from '../toolkit/progress-tracker.ts';
import type { Ticker } from '../toolkit/ticker.ts';
import { askContext } from './asking.ts';
import { familyContext } from './family-context.ts';
import type { HandlerRegistry, JobHandler } from './job-handler.ts';
import { JobLogBuffer, type JobLogFields } from './job-log.ts';
import { JobOutput, STREAM_FLUSH_MS } from './job-output.ts';
import { PREFIX, type WorkerLogger } from './logger.ts';
import type { PlanSource } from './plan-source.ts';

/** What a run needs from its runner's settings. */
export interface HandlerRunSettings {
	handlers: HandlerRegistry;
	plans: PlanSource;
	tickIntervalMs: number;
	heartbeatMs: number;
	logger: WorkerLogger;
	/** The shortest gap between two progress messages of one job, from the runner's Realtime budget (absent: none). */
	tickFloorMs?: () => number;
}

/** Whether a refused write means the row stopped being this run's. */
const noLongerOurs = (e: unknown) =>
	isJobError(e, 'job_already_finished') || isJobError(e, 'job_not_found') || isJobError(e, 'job_not_running');

/**
 * One run's state while its handler works: what stops it, when it last
 * reached the row, its heartbeat and time limit, and what it made on demand.
 *
 * @internal
 * @example
 * ```ts
 * const run = new HandlerRun(settings, sizeOf, job, store, handler, plan, size, shutdown);
 * run.start();
 * try { await handler.run(run.context(params)); } finally { run.finish(); }
 * ```
 */
export class HandlerRun {
	readonly job: Job;
	readonly store: JobStore;
	readonly attempt: number;
	readonly settings: HandlerRunSettings;
	readonly handler: JobHandler;
	readonly #sizeOf: (handler: JobHandler, job: Job) => PhaseSizes | null;
	readonly #plan: PhasePlan;
	readonly #size: PhaseSizes | null;
	readonly #shutdown: LazyAbort;
	/** The row is no longer this run's (cancelled, reclaimed, gone), learned by a tick, a stream write or the heartbeat. */
	halted: StageInterruptedError | null = null;
	/** Halted or given back: stops the tracker's phases and the handler. */
	readonly outside = new LazyAbort();
	/** The handler's stop: outside, the kind's time limit, or the tracker learning the job stopped. */
	readonly stop = new LazyAbort();
	timedOut = false;
	readonly startedAt = performance.now();
	/** The last tick that wrote (a heartbeat). */
	lastTickAt = this.startedAt;
	/** The last round trip that learned the status, written or read. */
	lastContactAt = this.startedAt;
	/** Streamed output, made on the first ctx.stream(). */
	output: JobOutput | null = null;
	/** ctx.log's lines, batched; made by the first line. */
	logs: JobLogBuffer | null = null;
	tracker: ProgressTracker | null = null;
	#unlinkTracker: (() => void) | null = null;
	#metadata: Record<string, unknown> | null = null;
	#metadataWrites: Promise<unknown> | null = null;
	#heartbeatTimer: ReturnType<typeof setTimeout> | undefined = undefined;
	#timeLimitTimer: ReturnType<typeof setTimeout> | undefined = undefined;
	#family: ReturnType<typeof familyContext> | null = null;
	#ask: ReturnType<typeof askContext> | null = null;

	constructor(
		settings: HandlerRunSettings,
		sizeOf: (handler: JobHandler, job: Job) => PhaseSizes | null,
		job: Job,
		store: JobStore,
		handler: JobHandler,
		plan: PhasePlan,
		size: PhaseSizes | null,
		shutdown: LazyAbort,
	) {
		this.settings = settings;
		this.#sizeOf = sizeOf;
		this.job = job;
		this.store = store;
		this.attempt = job.attempts;
		this.handler = handler;
		this.#plan = plan;
		this.#size = size;
		this.#shutdown = shutdown;
	}

	/** Links the stops and arms the heartbeat and the time limit. */
	start(): void {
		this.#shutdown.link(this.outside);
		this.outside.link(this.stop);
		// The kind's time limit: past it the handler is aborted and the job fails, with a sentence.
		if (this.handler.timeoutMs !== undefined)
			this.#timeLimitTimer = setTimeout(timeLimitReached, this.handler.timeoutMs, this);
		this.#beat();
	}

	/** Disarms what {@link start} armed; drops the stream's unsent text when the run was stopped. */
	finish(): void {
		if (this.stop.aborted) this.output?.discard();
		clearTimeout(this.#heartbeatTimer);
		clearTimeout(this.#timeLimitTimer);
		this.#unlinkTracker?.();
		this.outside.unlink(this.stop);
		this.#shutdown.unlink(this.outside);
	}

	/** The context handed to the handler. */
	context(params: Record<string, unknown>): RunContext {
		return new RunContext(this, params);
	}

	haltOn(status: string, cause?: unknown): void {
		if (this.halted) return;
		this.halted = new StageInterruptedError(`job ${this.job.id} is ${status}`, { status, cause });
		this.outside.abort(this.halted);
	}

	async tick(update: TickInput): Promise<JobStatusValue> {
		try {
			const status = await this.store.tick(this.job.id, update);
			this.lastTickAt = this.lastContactAt = performance.now();
			if (status !== 'running') this.haltOn(status);
			return status;
		} catch (e) {
			if (noLongerOurs(e)) this.haltOn(isJobError(e, 'job_cancelled') ? 'cancelled' : 'no longer ours', e);
			throw e;
		}
	}

	/** A status read is not a heartbeat: lastTickAt only moves when a tick writes. */
	async readStatus(): Promise<JobStatusValue> {
		try {
			const status = await this.store.readStatus(this.job.id, { attempt: this.attempt });
			this.lastContactAt = performance.now();
			if (status !== 'running') this.haltOn(status);
			return status;
		} catch (e) {
			if (isJobError(e, 'job_already_finished') || isJobError(e, 'job_not_found')) this.haltOn('no longer ours', e);
			throw e;
		}
	}

	/** Every append is guarded by the attempt, and a refusal stops the run as a tick's would. */
	async #append(stream: string, text: string): Promise<void> {
		try {
			const status = await this.store.appendStream(this.job.id, stream, text, { attempt: this.attempt });
			this.lastContactAt = performance.now();
			if (status !== 'running') this.haltOn(status);
		} catch (e) {
			if (noLongerOurs(e)) this.haltOn(isJobError(e, 'job_cancelled') ? 'cancelled' : 'no longer ours', e);
			throw e;
		}
	}

	outputFor(): JobOutput {
		return (this.output ??= new JobOutput((stream, text) => this.#append(stream, text), {
			flushMs: STREAM_FLUSH_MS,
			signal: () => this.stop.signal,
		}));
	}

	log(level: LogLevel, message: string, fields?: JobLogFields | null): void {
		(this.logs ??= new JobLogBuffer(this.store, this.job.id, this.attempt, this.settings.logger)).log(
			level,
			message,
			fields,
		);
	}

	metadataNow(): Record<string, unknown> {
		return (this.#metadata ??= { ...(this.job.metadata ?? {}) });
	}

	/** Each update is checked against the kind's schema, then written by a tick of its own, in order. */
	setMetadata(partial: Record<string, unknown>): Promise<void> {
		const merged = this.handler.kind.parseMetadata({ ...this.metadataNow(), ...checkMetadata(partial) }) as Record<
			string,
			unknown
		>;
		const changed = Object.fromEntries(Object.keys(partial).map((key) => [key, merged[key] ?? null]));
		this.#metadata = merged;
		const write = (this.#metadataWrites ?? Promise.resolve()).then(() =>
			this.tick({ attempt: this.attempt, metadata: changed }),
		);
		this.#metadataWrites = write.catch(() => {});
		return write.then(() => undefined);
	}

	trackerFor(): ProgressTracker {
		if (this.tracker) return this.tracker;
		const ticker: Ticker = { tick: (_id, update) => this.tick(update), readStatus: () => this.readStatus() };
		const created = new ProgressTracker(ticker, this.job.id, {
			plan: this.#plan,
			attempt: this.attempt,
			intervalMs: this.settings.tickIntervalMs,
			heartbeatMs: this.settings.heartbeatMs,
			...(this.settings.tickFloorMs ? { minGapMs: this.settings.tickFloorMs } : {}),
			size: this.#size ?? undefined,
			signal: this.outside.signal,
			startedAt: this.startedAt,
		});
		const onTrackerAbort = () => this.stop.abort(created.signal.reason);
		created.signal.addEventListener('abort', onTrackerAbort, { once: true });
		this.#unlinkTracker = () => created.signal.removeEventListener('abort', onTrackerAbort);
		return (this.tracker = created);
	}

	family(): ReturnType<typeof familyContext> {
		return (this.#family ??= familyContext(this.settings, this.#sizeOf, this.job, this.store));
	}

	asking(): ReturnType<typeof askContext> {
		return (this.#ask ??= askContext(this.job, this.store));
	}

	/**
	 * The heartbeat: a handler that neither runs phases nor reports would
	 * otherwise look dead to reclaim_stale and never learn about a cancel.
	 * Between heartbeats, an interval with no tracker round trip reads the
	 * status, so such a handler learns of a cancel within one interval too.
	 */
	#beat(): void {
		const { heartbeatMs, tickIntervalMs } = this.settings;
		this.#heartbeatTimer = setTimeout(heartbeat, Math.min(heartbeatMs, tickIntervalMs), this);
	}

	async beatNow(): Promise<void> {
		if (this.stop.aborted) return;
		const { heartbeatMs, tickIntervalMs, logger } = this.settings;
		const now = performance.now();
		try {
			if (now - this.lastTickAt >= heartbeatMs * 0.9) await this.tick({ attempt: this.attempt });
			else if (now - this.lastContactAt >= tickIntervalMs * 0.9) await this.readStatus();
		} catch (e) {
			if (!this.halted) logger.warn(`${PREFIX} job ${this.job.id}: heartbeat failed`, e);
		}
		if (!this.stop.aborted) this.#beat();
	}
}

// Timer callbacks made once: each run's timers pass the run as their argument.
function heartbeat(run: HandlerRun): void {
	void run.beatNow();
}

function timeLimitReached(run: HandlerRun): void {
	run.timedOut = true;
	run.stop.abort(new StageInterruptedError(`job ${run.job.id} ran past its ${run.handler.timeoutMs} ms limit`));
}

/**
 * What a handler is given (see JobHandlerContext). Its functions are made on
 * first read and bound to the run, so `const { log } = ctx` works.
 *
 * @internal
 * @example
 * ```ts
 * const ctx = run.context(params);
 * ctx.log('info', 'started');
 * ```
 */
export class RunContext {
	readonly job: Job;
	readonly params: Record<string, unknown>;
	readonly payload: Uint8Array | null;
	readonly attempt: number;
	readonly #run: HandlerRun;
	#log: HandlerRun['log'] | null = null;
	#stream: ((name: string) => ReturnType<JobOutput['stream']>) | null = null;
	#setMetadata: HandlerRun['setMetadata'] | null = null;

	constructor(run: HandlerRun, params: Record<string, unknown>) {
		this.#run = run;
		this.job = run.job;
		this.params = params;
		this.payload = run.job.payload;
		this.attempt = run.attempt;
	}

	get signal(): AbortSignal {
		return this.#run.stop.signal;
	}

	get tracker(): ProgressTracker {
		return this.#run.trackerFor();
	}

	get metadata(): Record<string, unknown> {
		return this.#run.metadataNow();
	}

	get log(): HandlerRun['log'] {
		const run = this.#run;
		return (this.#log ??= (level, message, fields) => run.log(level, message, fields));
	}

	get stream(): (name: string) => ReturnType<JobOutput['stream']> {
		const run = this.#run;
		return (this.#stream ??= (name) => run.outputFor().stream(name));
	}

	get setMetadata(): HandlerRun['setMetadata'] {
		const run = this.#run;
		return (this.#setMetadata ??= (partial) => run.setMetadata(partial));
	}

	get enqueueChild(): ReturnType<typeof familyContext>['enqueueChild'] {
		return this.#run.family().enqueueChild;
	}

	get children(): ReturnType<typeof familyContext>['children'] {
		return this.#run.family().children;
	}

	get waitForChildren(): ReturnType<typeof familyContext>['waitForChildren'] {
		return this.#run.family().waitForChildren;
	}

	get ask(): ReturnType<typeof askContext>['ask'] {
		return this.#run.asking().ask;
	}
}
