/**
 * One handler per kind of work: typed params from the kind's zod schema, the
 * payload, an AbortSignal and a ProgressTracker. It never touches status,
 * heartbeat or cancellation by hand: the worker does.
 */
import type { Job, JobParams } from '../store/job.ts';
import type { JobKind, JobKindInput, JobKindMetadata, JobKindParams } from '../store/job-kind.ts';
import type { JobStreamWriter } from './job-output.ts';
import type { ChildInput } from '../store/job-store.ts';
import type { PhaseSizes } from '../toolkit/phase-plan.ts';
import type { ProgressTracker } from '../toolkit/progress-tracker.ts';
import type { LogLevel } from '../store/job-timeline.ts';
import type { JobLogFields } from './job-log.ts';
import type { z } from 'zod';
import type { AskOptions } from './asking.ts';

/**
 * What a handler receives for one claimed job.
 */
export interface JobHandlerContext<P extends JobParams = JobParams, M extends JobParams = JobParams> {
	/** The claimed row (with its payload). */
	job: Job<P>;
	/** `job.params`, re-validated by the kind's schema at claim time. */
	params: P;
	/** The large input, as claimed; null when the job has none. */
	payload: Uint8Array | null;
	/**
	 * Aborts when the job is cancelled (learned from a tick or a heartbeat),
	 * when another attempt took the job over, or when the worker shuts down.
	 * Hand it to every fetch and long await.
	 */
	signal: AbortSignal;
	/** Runs phases and reports real counts; its ticks are the heartbeat and the cancellation check. */
	tracker: ProgressTracker;
	/** The attempt this run is (1 on the first claim). */
	attempt: number;
	/**
	 * Adds a line to the job's timeline (levels debug, info, warn, error):
	 * admins read every line; `userFacing: true` in `fields` shows it to the
	 * job's owner too (write it for them, in their language). Lines are sent in
	 * batches and land before the job's close; at most 500 are kept per job
	 * (past that they are dropped and counted). A bad line throws
	 * `InvalidJobInputError` naming the field: `level`, `message` (at most 2000
	 * characters), `fields` (a plain object, at most 4 KiB as JSON).
	 *
	 * @example
	 * ```ts
	 * log('info', 'Page 3 read', { userFacing: true });
	 * log('debug', 'cache miss', { key: 'p3' });
	 * ```
	 */
	log(level: LogLevel, message: string, fields?: JobLogFields | null): void;
	/**
	 * A named stream of this job's output (e.g. `'summary'`): its watchers see
	 * the text as it is written (`job.streams.summary`, `<JobStream>`), a few
	 * messages a second however fast it is written. Writes after a cancel are
	 * refused, and the job's streams hold at most 4 MiB.
	 *
	 * @example
	 * ```ts
	 * run: async ({ stream, signal }) => {
	 *   await stream('summary').pipe(model.streamText({ prompt, signal }));
	 * }
	 * ```
	 */
	stream(name: string): JobStreamWriter;
	/** The metadata set so far (the row's, then every `setMetadata`). */
	readonly metadata: Readonly<Partial<M>>;
	/**
	 * Sets keys of the job's metadata (merged into what it holds), checked
	 * against the kind's `metadata` schema first ({@link InvalidJobInputError}
	 * naming the field, e.g. `metadata.pages`); written by a tick of its own and
	 * sent to watchers in that tick's message. Resolves once written.
	 *
	 * @example
	 * ```ts
	 * await setMetadata({ pages: 12, language: 'pt' });
	 * ```
	 */
	setMetadata(partial: Partial<M>): Promise<void>;
	/**
	 * Enqueues a child of this job: same table and owner, cancelled with it,
	 * weighed in its progress by what the child kind's plan predicts (when this
	 * worker runs that kind; else `expectedSeconds`, else 1).
	 */
	enqueueChild<K extends JobKind>(kind: K, input?: ChildInput<JobKindInput<K>>): Promise<Job<JobKindParams<K>>>;
	enqueueChild(kind: string, input?: ChildInput): Promise<Job>;
	/** This job's children so far, oldest first (their status, result, error). */
	children(): Promise<Job[]>;
	/**
	 * When every child has ended, returns them (oldest first). Otherwise parks
	 * the job (`waiting`, the worker's slot free) and throws
	 * {@link WaitingForChildren}: the handler runs again once the last child
	 * ends, and this call then returns them. Enqueue the children only when
	 * `ctx.children()` is empty, so the rerun does not enqueue them twice.
	 *
	 * @example
	 * ```ts
	 * run: async ({ params, children, enqueueChild, waitForChildren }) => {
	 *   if ((await children()).length === 0) for (const page of params.pages) await enqueueChild(renderPage, { params: { page } });
	 *   const parts = await waitForChildren(); // parks here the first time; returns on the rerun
	 *   return await assemble(parts.map((p) => p.resultId));
	 * }
	 * ```
	 */
	waitForChildren(): Promise<Job[]>;
	/**
	 * Asks the job's owner a question and returns the answer, parsed by
	 * `schema` (an enum is offered as a choice, a boolean as yes/no, a string
	 * as a text). The first time, the question is stored (its JSON Schema
	 * derived from `schema`) and the job parks (`waiting`, the slot free) by
	 * throwing {@link WaitingForAnswer}; once the owner answers, the job is
	 * queued again and the handler runs again from the top, on any worker,
	 * where this call returns the stored answer. Ask in the same order on every
	 * run (or give each question a `key`). Unanswered after `timeoutMs`, the
	 * job fails (`error_code` `question_unanswered`).
	 *
	 * @example
	 * ```ts
	 * run: async ({ params, ask, job }) => {
	 *   const guess = detectLanguage(params.text);
	 *   const language = guess.sure ? guess.language
	 *     : await ask(z.enum(['en', 'pt-BR']), { prompt: { en: 'Which language is it?', 'pt-BR': 'Qual é o idioma?' } });
	 *   return await analyse(params.text, language);
	 * }
	 * ```
	 */
	ask<S extends z.ZodType>(schema: S, options: AskOptions): Promise<z.output<S>>;
}

/**
 * What a handler returns: the id of the record it produced (stored in
 * `result_id`, so the screen links straight to it), or nothing.
 */
export type JobHandlerResult = string | null | undefined | void;

/**
 * Options of {@link defineJobHandler}.
 */
export interface JobHandlerOptions<P extends JobParams = JobParams> {
	/**
	 * The job's input size in the unit the kind's plan slopes were measured in
	 * (characters, bytes, ...): one number for every phase or one per phase. It
	 * paces the progress bar and lets an edge worker refuse a job that cannot
	 * finish in its remaining wall clock. Called before the claim too, when the
	 * payload is not loaded yet (`job.payload` is then null).
	 */
	size?(input: { params: P; job: Job<P> }): PhaseSizes | null | undefined;
	/**
	 * The longest one run may take, in milliseconds. Past it the handler's
	 * signal aborts and the job fails with a sentence for the user
	 * (`error_code` `timed_out`), on the edge and in the Node runner alike: a
	 * run that hangs never holds a slot forever.
	 */
	timeoutMs?: number;
}

/**
 * A handler bound to its kind. Create it with {@link defineJobHandler}.
 */
export interface JobHandler<K extends JobKind = JobKind> {
	readonly kind: K;
	run(
		context: JobHandlerContext<JobKindParams<K>, JobKindMetadata<K> & JobParams>,
	): Promise<JobHandlerResult> | JobHandlerResult;
	size?(input: { params: JobKindParams<K>; job: Job<JobKindParams<K>> }): PhaseSizes | null | undefined;
	readonly timeoutMs?: number;
}

/**
 * Binds the work for one kind declared with `defineJobKind`: params arrive
 * typed and re-validated, the return value becomes `result_id`. Throw
 * `JobUserError` for an expected failure (failed at once, with its sentence);
 * anything else is retried with backoff and the user sees a generic sentence.
 *
 * @example
 * ```ts
 * import { defineJobHandler, JobUserError } from 'supabase-jobs';
 * import { extract } from '$lib/jobs'; // defineJobKind({ name: 'extract', params: z.object({ filename: z.string() }), plan })
 *
 * export const extractHandler = defineJobHandler(
 *   extract,
 *   async ({ params, payload, signal, tracker }) => {
 *     if (!payload) throw new JobUserError({ en: 'The file is empty.', 'pt-BR': 'O arquivo está vazio.' });
 *     const text = await tracker.run('pdf', (s) => pdfText(payload, s), { size: payload.byteLength });
 *     const table = await tracker.run('table', (s) => readTable(text, s), { size: text.length });
 *     return (await saveDraft(params.filename, table, { signal })).id;
 *   },
 *   { size: ({ job }) => job.payload?.byteLength ?? null },
 * );
 * ```
 */
export function defineJobHandler<K extends JobKind>(
	kind: K,
	run: (
		context: JobHandlerContext<JobKindParams<K>, JobKindMetadata<K> & JobParams>,
	) => Promise<JobHandlerResult> | JobHandlerResult,
	options: JobHandlerOptions<JobKindParams<K>> = {},
): JobHandler<K> {
	if (typeof kind?.parseParams !== 'function')
		throw new TypeError('defineJobHandler: the first argument must be a kind made by defineJobKind');
	if (typeof run !== 'function') throw new TypeError(`defineJobHandler(${kind.name}): run must be a function`);
	const { timeoutMs } = options;
	if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1))
		throw new RangeError(
			`defineJobHandler(${kind.name}): timeoutMs must be a positive number of milliseconds; got ${String(timeoutMs)}`,
		);
	const handler: JobHandler<K> = { kind, run, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
	if (options.size) handler.size = options.size;
	return Object.freeze(handler);
}

/**
 * Handlers by kind name; refuses two handlers for one kind (the second would
 * silently win otherwise).
 *
 * @internal
 * @example
 * ```ts
 * const registry = new HandlerRegistry([extractHandler]);
 * registry.get('extract');
 * ```
 */
export class HandlerRegistry {
	readonly #byName = new Map<string, JobHandler>();

	constructor(handlers: readonly JobHandler[]) {
		for (const handler of handlers) {
			const name = handler?.kind?.name;
			if (typeof name !== 'string') throw new TypeError('every handler must come from defineJobHandler');
			if (this.#byName.has(name)) throw new TypeError(`two handlers for the kind "${name}"`);
			this.#byName.set(name, handler);
		}
		if (this.#byName.size === 0) throw new TypeError('a worker needs at least one handler');
	}

	/** The kind names handled, for claimNext's `kinds` filter (a worker never claims what it cannot run). */
	get kinds(): string[] {
		return [...this.#byName.keys()];
	}

	get(kind: string): JobHandler | undefined {
		return this.#byName.get(kind);
	}
}
