import { untrack } from 'svelte';
import { CancelRequest } from './internal/cancel-request.svelte.ts';
import { ChildSnapshots } from './internal/child-snapshots.svelte.ts';
import { isTerminalStatus } from '../state.ts';
import { isSnapshotOf, mergeSnapshot } from './internal/merge-snapshot.ts';
import { read } from './internal/read.ts';
import { QueuePosition } from './internal/queue-position.svelte.ts';
import { failedForGood, failedForGoodError } from './internal/failed-for-good.ts';
import { StreamTexts } from './internal/stream-texts.svelte.ts';
import { SideRead } from './internal/side-read.svelte.ts';
import { followSnapshots } from './internal/follow-snapshots.ts';
import type { HoldReason } from '../store/job-store.ts';
import type { AskedQuestion } from '../store/questions.ts';
import type { JobSnapshot, JobSnapshotStatus, JobWatchSource, MaybeGetter, WatchedJobOptions } from './types.ts';
export type { WatchedJobOptions } from './types.ts';

/**
 * One job, followed live: the state behind a progress bar and a cancel button.
 *
 * It reads snapshots from a {@link JobWatchSource} (a `JobStore`, or anything that yields snapshots) and exposes them
 * as reactive fields. Components only read those fields; all the decisions live here:
 *
 * - **Progress never moves backwards within one attempt.** The displayed value is the highest seen since the attempt
 *   began; a new attempt (a different `attempts`, or the job back to `queued` for a retry/reclaim) may start lower,
 *   because that is what really happened. `done` shows 100.
 * - **Nothing leaves a terminal state**: late or out-of-order snapshots cannot turn a finished job back into a running one.
 * - **Cancel answers at once**: `cancelling` turns true on the click, before the request returns; a second click while
 *   it is in flight, or any click on a terminal job, sends nothing.
 * - **The watch ending is the end**: after a terminal snapshot the source ends and `watching` turns false. An error (or
 *   the source ending before a terminal state) lands in `connectionError`; `start()` tries again.
 *
 * Create it with {@link WatchedJob.create} inside a component (subscribes on mount, stops on destroy), or with
 * `new WatchedJob(...)` plus `start()`/`stop()` elsewhere. Given a getter for the id, `create()` follows a change of
 * id: the old watch stops and the state starts over for the new job.
 *
 * **Server rendering.** On the server the component renders `initial` (the row its `load` read) and the source is
 * never touched: `start()`, which `create()` calls on mount in the browser, reads it first. So the source can be a
 * getter that creates the browser's Supabase client on first use, and rendering needs no Realtime connection.
 *
 * @example
 * ```svelte
 * <script lang="ts">
 * 	import { WatchedJob, JobProgress, CancelButton } from 'supabase-jobs/svelte';
 * 	import { browserJobs } from '$lib/jobs'; // () => the browser's JobStore, created on first use
 * 	let { data } = $props(); // data.job: the row `load` read, rendered on the server, shown until the watch answers
 * 	const job = WatchedJob.create(browserJobs, () => data.job.id, () => data.job);
 * </script>
 *
 * <JobProgress {job} />
 * <CancelButton {job} />
 * {#if job.isDone}<a href="/drafts/{job.resultId}">Open the draft</a>{/if}
 * ```
 */
export class WatchedJob<M extends Record<string, unknown> = Record<string, unknown>> {
	#id = $state('');
	readonly #parseMetadata: ((value: unknown) => M) | undefined;
	readonly #permanentErrors: readonly string[] | undefined;
	readonly #source: MaybeGetter<JobWatchSource>;

	#snapshot = $state.raw<JobSnapshot | null>(null);
	readonly #children = new ChildSnapshots();
	readonly #heldBy = new SideRead<HoldReason>();
	readonly #question = new SideRead<AskedQuestion>();
	readonly #withChildren: boolean;
	#watching = $state(false);
	#connectionError = $state.raw<unknown>(null);
	readonly #cancel = new CancelRequest();
	#controller: AbortController | null = null;
	#running: Promise<void> | null = null;
	readonly #position = new QueuePosition();
	readonly #streams = new StreamTexts();
	/** Someone read `streams`: follow them (from `start()` on, in the browser). */
	#wantStreams = false;
	/** `start()` was called: the source may be read. */
	#started = false;
	#streamsController: AbortController | null = null;

	/**
	 * Prefer {@link WatchedJob.create} in components. `initial` (e.g. the row a `load` already read) is shown at once,
	 * before the watch answers; ignored when its id is not `id`. A terminal `initial` opens no watch at all.
	 *
	 * @example
	 * const job = new WatchedJob(store, jobId);
	 * job.start(); // ... later: job.stop();
	 */
	constructor(
		source: MaybeGetter<JobWatchSource>,
		id: string,
		initial?: JobSnapshot | null,
		options: WatchedJobOptions<M> = {},
	) {
		this.#parseMetadata = options.kind ? (value) => options.kind!.parseMetadata(value) : undefined;
		this.#permanentErrors = options.kind?.permanentErrors;
		this.#source = source;
		this.#id = id;
		this.#withChildren = options.children === true;
		if (initial && initial.id === id) this.#apply(initial);
	}

	/** The id of the job being watched. */
	get id(): string {
		return this.#id;
	}

	/**
	 * Creates a watched job tied to the calling component: the watch starts when
	 * the component mounts and stops (its signal aborts) when it is destroyed.
	 * Must be called while a component initialises (top level of `<script>`).
	 *
	 * @example
	 * ```svelte
	 * <script lang="ts">
	 * 	let { jobId, job: initial } = $props();
	 * 	const job = WatchedJob.create(store, () => jobId, () => initial);
	 * </script>
	 * <p>{job.status}: {job.progress}%</p>
	 * ```
	 */
	static create<M extends Record<string, unknown> = Record<string, unknown>>(
		source: MaybeGetter<JobWatchSource>,
		id: MaybeGetter<string>,
		initial?: MaybeGetter<JobSnapshot | null | undefined>,
		options: WatchedJobOptions<M> = {},
	): WatchedJob<M> {
		const job = new WatchedJob<M>(
			source,
			untrack(() => read(id)),
			untrack(() => read(initial)),
			options,
		);
		$effect(() => {
			const current = read(id); // tracked: a new id restarts the watch
			untrack(() => {
				if (current !== job.#id) job.#retarget(current, read(initial));
				void job.start();
			});
			return () => job.stop();
		});
		return job;
	}

	/** The latest snapshot as displayed (its `progress` is the displayed value); null before the first. */
	get snapshot(): JobSnapshot | null {
		return this.#snapshot;
	}

	/**
	 * What the handler said about the work so far (`ctx.setMetadata`), from the same message as the tick that wrote
	 * it; typed (and checked) by the `kind` option. Null until written, or when it does not fit the kind's schema.
	 */
	readonly metadata: Partial<M> | null = $derived.by(() => {
		const raw = this.#snapshot?.metadata ?? null;
		if (raw === null || !this.#parseMetadata) return raw as Partial<M> | null;
		try {
			return this.#parseMetadata(raw);
		} catch {
			return null;
		}
	});

	/** The job's status; null until the first snapshot arrives. */
	readonly status: JobSnapshotStatus | null = $derived(this.#snapshot?.status ?? null);
	/** The percentage to display, 0..100. Never lower than before within one attempt; 100 once done. */
	readonly progress: number = $derived(this.#snapshot?.progress ?? 0);
	/** The phase running now (e.g. 'table'), or null. */
	readonly stage: string | null = $derived(this.#snapshot?.stage ?? null);
	/** The sentence for the user when the job failed (or a reason it was cancelled). */
	readonly error: string | null = $derived(this.#snapshot?.error ?? null);
	/** The stable code of the failure, for branching; not for display. */
	readonly errorCode: string | null = $derived(this.#snapshot?.errorCode ?? null);
	/**
	 * Failed with an error code its kind declares permanent, or read from a row that says it failed for good:
	 * trying again would fail the same way (not offered).
	 */
	get failedForGood(): boolean {
		return failedForGood(this.#snapshot, this.#permanentErrors);
	}

	/** The id of what the job produced, once done. */
	readonly resultId: string | null = $derived(this.#snapshot?.resultId ?? null);
	/** Running, but its worker missed the heartbeats it declared: it may have died (then the job is retried). */
	readonly workerSilent: boolean = $derived(
		this.#snapshot?.status === 'running' && this.#snapshot.workerSilent === true,
	);
	/** When a queued job may start: in the future for a scheduled run. */
	readonly availableAt: Date | null = $derived(this.#snapshot?.availableAt ?? null);

	/**
	 * When the running attempt's worker expects it to end (the database's clock, from its phase plan); earlier than
	 * `updatedAt` when its current phase overran. Null: no estimate (JobProgress then reads the row's pace).
	 */
	readonly expectedEndAt: Date | null = $derived(
		this.#snapshot?.status === 'running' ? (this.#snapshot.expectedEndAt ?? null) : null,
	);
	/** When the current attempt started (the database's clock); null unless running or ended. */
	readonly startedAt: Date | null = $derived(this.#snapshot?.startedAt ?? null);
	/** When the row last changed (the database's clock). */
	readonly updatedAt: Date | null = $derived(this.#snapshot?.updatedAt ?? null);
	/** How many claims the job is allowed (0 before the first snapshot). */
	readonly maxAttempts: number = $derived(this.#snapshot?.maxAttempts ?? 0);
	/** How many times the job was claimed; a change means a new attempt. */
	readonly attempts: number = $derived(this.#snapshot?.attempts ?? 0);
	/** done, failed or cancelled: nothing more will happen. */
	readonly isTerminal: boolean = $derived(isTerminalStatus(this.#snapshot?.status));
	/** Finished successfully. */
	readonly isDone: boolean = $derived(this.#snapshot?.status === 'done');
	/** Stopped with an error (highlight it; `error` says why). */
	readonly isFailed: boolean = $derived(this.#snapshot?.status === 'failed');
	/** Stopped because someone asked: terminal, but not a failure — show it neutrally. */
	readonly isCancelled: boolean = $derived(this.#snapshot?.status === 'cancelled');
	/** Queued or running. */
	readonly isActive: boolean = $derived(
		this.#snapshot?.status === 'queued' || this.#snapshot?.status === 'running' || this.#snapshot?.status === 'waiting',
	);

	/**
	 * The text of each of the job's streams so far, by name (`job.streams.summary`), growing as the worker writes
	 * (`ctx.stream('summary')`). Followed from the first read of this field on, once the watch started (never on the
	 * server): what was written before first, then the rest, in order. A retry starts the text over. Empty when the
	 * source has no `watchStreams`.
	 */
	get streams(): Readonly<Record<string, string>> {
		if (!this.#wantStreams) {
			this.#wantStreams = true;
			// Not from inside a template or a derived: the follow writes state.
			queueMicrotask(() => this.#followStreams());
		}
		return this.#streams.texts;
	}

	/** True once the job ended and everything its streams hold has arrived: the text is final. */
	get streamsEnded(): boolean {
		return this.#streams.ended;
	}

	/**
	 * While queued: how many of the same owner's own queued jobs will start before this one (the source's
	 * `queuePosition`, asked when queued and every few seconds while it waits). Null when unknown or not queued.
	 */
	readonly queuedAhead: number | null = $derived(this.#snapshot?.status === 'queued' ? this.#position.ahead : null);

	/** The job's children (oldest first), live, when created with `{ children: true }` over a JobStore; else `[]`. */
	get children(): readonly JobSnapshot[] {
		return this.#children.list;
	}

	/**
	 * Why this queued job is not starting: a concurrency limit holds it ("waiting: 1 export already running"), its
	 * kind is paused or its rate limit is spent; null otherwise, or when the source has no `holdReasons`.
	 */
	get heldBy(): HoldReason | null {
		return this.#heldBy.value;
	}

	/**
	 * The question this waiting job asked its owner (`ctx.ask`), read from the
	 * source's `question` each time the job starts waiting (the job's one
	 * message per change says it; the question itself is read once); null
	 * otherwise. Answer it with {@link answer} (the JobQuestion component does).
	 */
	get question(): AskedQuestion | null {
		return this.#snapshot?.status === 'waiting' ? this.#question.value : null;
	}

	/**
	 * Sends the answer to the open question. Resolves once the database took
	 * it (the job is queued again and shown so at once); rejects with the
	 * refusal (`InvalidJobInputError` naming the field, `NoOpenQuestionError`)
	 * and the question stays.
	 *
	 * @example
	 * await job.answer('pt-BR');
	 */
	async answer(value: unknown): Promise<void> {
		const source = read(this.#source);
		if (!source.answer) throw new TypeError('this job source cannot answer questions (it has no answer())');
		const id = this.#id;
		const row = await source.answer(id, value);
		if (id !== this.#id) return;
		this.#question.reset();
		if (isSnapshotOf(row, id)) this.#apply(row);
	}

	/**
	 * Tries this failed or cancelled job again: resolves to the new job (the page goes there); rejects with the
	 * refusal (`NotRetryableError`, `PermissionDeniedError`).
	 *
	 * @example
	 * const again = await job.tryAgain();
	 * await goto(`/jobs/${again.id}`);
	 */
	async tryAgain(): Promise<JobSnapshot> {
		const source = read(this.#source);
		if (!source.tryAgain) throw new TypeError('this job source cannot try jobs again (it has no tryAgain())');
		if (this.failedForGood) throw failedForGoodError(this.#id, this.errorCode);
		return await source.tryAgain(this.#id);
	}

	/** True from the click on cancel until the job is terminal (or the request fails: `cancelError` says why). */
	readonly cancelling: boolean = $derived(this.#cancel.requested && !isTerminalStatus(this.#snapshot?.status));

	/** Why the last cancel request failed, or null. */
	get cancelError(): unknown {
		return this.#cancel.error;
	}

	/** True while the watch is open. */
	get watching(): boolean {
		return this.#watching;
	}

	/** The error that closed the watch (or the source ending before a terminal state), or null; `start()` clears it. */
	get connectionError(): unknown {
		return this.#connectionError;
	}

	/**
	 * Opens the watch. Resolves when the watch closes (the job reached a terminal state, `stop()` was called, or the
	 * connection failed — see `connectionError`); never rejects. While the watch is open it returns the same promise;
	 * on a terminal job it resolves at once. `create()` calls it on mount.
	 *
	 * @example
	 * const job = new WatchedJob(store, id);
	 * await job.start(); // follows the job to its end
	 * console.log(job.status, job.error);
	 */
	start(): Promise<void> {
		this.#started = true;
		this.#followStreams();
		if (this.#running) return this.#running;
		if (this.isTerminal) return Promise.resolve();
		const controller = new AbortController();
		this.#controller = controller;
		this.#connectionError = null;
		this.#watching = true;
		// The source is first read here, never during server rendering (see the class doc).
		if (this.#snapshot) this.#askHeld(this.#snapshot);
		if (this.#snapshot) this.#askQuestion(this.#snapshot);
		void this.#followPosition(controller);
		const running = this.#run(controller);
		// A source that fails synchronously has already closed the watch.
		if (this.#controller === controller) this.#running = running;
		return running;
	}

	/** Closes the watch: the source's signal aborts. Safe to call more than once. */
	stop(): void {
		this.#started = false;
		this.#streamsController?.abort();
		this.#streamsController = null;
		const controller = this.#controller;
		if (!controller) return;
		this.#controller = null;
		this.#running = null;
		this.#watching = false;
		controller.abort();
	}

	/**
	 * Asks the job to stop. Answers at once (`cancelling` turns true before the request returns) and never rejects: a
	 * failed request lands in `cancelError`. While a request is in flight, or once the job is terminal, it sends
	 * nothing and returns the same promise.
	 *
	 * @example
	 * <button onclick={() => job.cancel()} disabled={job.isTerminal}>Cancel</button>
	 */
	cancel(): Promise<void> {
		const id = this.#id;
		return this.#cancel.send(
			this.isTerminal || this.cancelling,
			() => read(this.#source).cancel(id),
			() => id === this.#id,
			// A source that answers with the updated row lets us show it now,
			// without waiting for the watch (which may be closed).
			(result) => {
				if (isSnapshotOf(result, id)) this.#apply(result);
			},
		);
	}

	async #run(controller: AbortController): Promise<void> {
		const { signal } = controller;
		const children = this.#withChildren ? this.#followChildren(signal) : null;
		try {
			const source = read(this.#source).watch(this.#id, { signal });
			const end = await followSnapshots(
				source,
				signal,
				(next) => this.#apply(next),
				() => this.isTerminal,
			);
			if (end === 'source ended' && !signal.aborted) {
				this.#connectionError = new Error(`The watch on job ${this.#id} ended before the job finished.`);
			}
			// The tree is over once its root and every child have ended.
			await children;
		} catch (error) {
			if (!signal.aborted) this.#connectionError = error;
		} finally {
			if (this.#controller === controller) {
				this.#controller = null;
				this.#running = null;
				this.#watching = false;
			}
		}
	}

	async #followPosition(controller: AbortController): Promise<void> {
		const id = this.#id;
		await this.#position.follow(read(this.#source), id, controller.signal, {
			open: () => this.#controller === controller && !controller.signal.aborted && id === this.#id,
			queued: () => this.#snapshot?.status === 'queued',
			ended: () => this.isTerminal,
			stillQueued: () => void (this.#snapshot && this.#askHeld(this.#snapshot)),
		});
	}

	/** Follows the children while this watch is open (see ChildSnapshots); a lost connection lands in `connectionError`. */
	async #followChildren(signal: AbortSignal): Promise<void> {
		const source = read(this.#source);
		const id = this.#id;
		try {
			await this.#children.follow(source, id, signal, {
				current: () => id === this.#id,
				ended: () => this.isTerminal,
			});
		} catch (error) {
			if (!signal.aborted) this.#connectionError = error;
		}
	}

	/** Follows the streams once they are wanted and the source may be read; once per start, until they end. */
	#followStreams(): void {
		if (!this.#wantStreams || !this.#started || this.#streamsController || this.#streams.ended) return;
		const source = read(this.#source);
		if (!source.watchStreams) return;
		const controller = new AbortController();
		this.#streamsController = controller;
		this.#streams.follow(source, this.#id, controller.signal).then(
			() => {},
			(error: unknown) => {
				// The output is extra: the watch, not this, reports a lost connection; start() tries again.
				if (this.#streamsController === controller) this.#streamsController = null;
				if (!controller.signal.aborted && this.#connectionError === null) this.#connectionError = error;
			},
		);
	}

	/** A queued job asks, once per queued snapshot, whether a concurrency limit holds it. */
	#askHeld(next: JobSnapshot): void {
		const source = read(this.#source);
		const id = this.#id;
		this.#heldBy.ask(
			next.status === 'queued' && source.holdReasons !== undefined,
			async () => (await source.holdReasons!([id])).get(id),
			() => id === this.#id && this.#snapshot?.status === 'queued',
		);
	}

	#askQuestion(next: JobSnapshot): void {
		const source = read(this.#source);
		const id = this.#id;
		this.#question.ask(
			next.status === 'waiting' && source.question !== undefined,
			() => source.question!(id),
			() => id === this.#id && this.#snapshot?.status === 'waiting',
		);
	}

	#retarget(id: string, initial: JobSnapshot | null | undefined): void {
		this.stop();
		this.#id = id;
		this.#snapshot = null;
		this.#children.reset();
		this.#heldBy.reset();
		this.#question.reset();
		this.#connectionError = null;
		this.#cancel.reset();
		this.#position.reset();
		this.#streams.reset();
		if (initial && initial.id === id) this.#apply(initial);
	}

	#apply(next: JobSnapshot): void {
		const before = this.#snapshot;
		const merged = mergeSnapshot(before, next);
		if (!merged) return;
		const becameQueued = merged.status === 'queued' && before?.status !== 'queued';
		this.#snapshot = merged;
		// Only while watching: the constructor applies `initial`, and it runs on the server too.
		const changed = merged.status !== before?.status || merged.updatedAt !== before?.updatedAt;
		if (changed && this.#controller) this.#askHeld(merged);
		if (merged.status !== before?.status && this.#controller) this.#askQuestion(merged);
		if (becameQueued) this.#position.nudge();
		if (isTerminalStatus(merged.status)) this.#position.nudge(); // let the loop end now
	}
}
