/**
 * OpenTelemetry spans for enqueue, claim, run and close, through
 * `@opentelemetry/api` when the app has it (an optional peer dependency). It
 * is imported once, dynamically, and cached; absent, every helper here runs
 * the work as it is and nothing else: no import failure, no cost beyond one
 * resolved promise. The attributes follow OpenTelemetry's messaging semantic
 * conventions where they fit (docs/guide/en/operators.md, "Traces").
 */
import type * as OtelApi from '@opentelemetry/api';

type Api = typeof OtelApi;

/** The package, held in a variable so bundlers leave the optional import alone. */
const OTEL_API = '@opentelemetry/api';

let importer: () => Promise<unknown> = () => import(/* @vite-ignore */ OTEL_API);
let loaded: Promise<Api | null> | null = null;
/** Once the import settled: the package, or null when absent. */
let ready: Api | null | undefined;

/**
 * `@opentelemetry/api`, or null when the app does not have it. Imported once.
 *
 * @internal
 * @example
 * ```ts
 * const otel = await loadTracing(); // null without the package
 * ```
 */
export function loadTracing(): Promise<Api | null> {
	loaded ??= importer().then(
		(m) => {
			const mod = m as Partial<Api> & { default?: Api };
			const api = (mod.trace ? mod : mod.default) as Api | undefined;
			return (ready = api && typeof api.trace?.getTracer === 'function' ? api : null);
		},
		() => (ready = null),
	);
	return loaded;
}

/**
 * {@link loadTracing} until the import has settled, then null: a caller on a
 * hot path awaits nothing once it is known.
 *
 * @internal
 * @example
 * ```ts
 * await loadTracingOnce(); // resolves at once, or is null and costs nothing
 * ```
 */
export function loadTracingOnce(): Promise<Api | null> | null {
	return ready === undefined ? loadTracing() : null;
}

/**
 * For tests: replaces how the package is imported (a rejecting importer plays
 * an app without it) and forgets the cached result.
 *
 * @internal
 * @example
 * ```ts
 * setTracingImporter(() => Promise.reject(new Error('Cannot find package')));
 * ```
 */
export function setTracingImporter(next: (() => Promise<unknown>) | null): void {
	importer = next ?? (() => import(/* @vite-ignore */ OTEL_API));
	loaded = null;
	ready = undefined;
}

/** The tracer's name: spans show it as their instrumentation scope. */
export const TRACER_NAME = 'supabase-jobs';

/** What a span says about one job. */
export interface JobSpanInfo {
	id?: string;
	kind?: string;
	attempt?: number;
	table: string;
}

/** Attribute names (messaging semantic conventions, then this package's own). */
export const ATTR = {
	system: 'messaging.system',
	operationType: 'messaging.operation.type',
	operationName: 'messaging.operation.name',
	destination: 'messaging.destination.name',
	messageId: 'messaging.message.id',
	batchCount: 'messaging.batch.message_count',
	kind: 'supabase_jobs.job.kind',
	attempt: 'supabase_jobs.job.attempt',
	outcome: 'supabase_jobs.job.outcome',
} as const;

export type SpanOperation = 'enqueue' | 'claim' | 'run' | 'close';

const OPERATION_TYPE: Record<SpanOperation, string> = {
	enqueue: 'send',
	claim: 'receive',
	run: 'process',
	close: 'settle',
};

export function jobAttributes(info: JobSpanInfo): OtelApi.Attributes {
	const attributes: OtelApi.Attributes = { [ATTR.system]: 'supabase_jobs', [ATTR.destination]: info.table };
	if (info.id !== undefined) attributes[ATTR.messageId] = info.id;
	if (info.kind !== undefined) attributes[ATTR.kind] = info.kind;
	if (info.attempt !== undefined) attributes[ATTR.attempt] = info.attempt;
	return attributes;
}

function spanKind(api: Api, op: SpanOperation): OtelApi.SpanKind {
	return op === 'enqueue' ? api.SpanKind.PRODUCER : op === 'run' ? api.SpanKind.CONSUMER : api.SpanKind.CLIENT;
}

/**
 * This package's tracer, when the app registered a tracer provider. With the API alone, every
 * span is a non-recording no-op, yet making one (a proxy tracer, its
 * attributes, a context) was a good share of the Node runner's CPU per job.
 * The API's global provider is a proxy that answers `getDelegateTracer` with
 * undefined until a provider is registered; any other provider counts as one.
 */
function registeredTracer(api: Api): OtelApi.Tracer | undefined {
	const provider = api.trace.getTracerProvider() as OtelApi.TracerProvider & {
		getDelegateTracer?: (name: string) => OtelApi.Tracer | undefined;
	};
	return typeof provider.getDelegateTracer === 'function'
		? provider.getDelegateTracer(TRACER_NAME)
		: provider.getTracer(TRACER_NAME);
}

/** A started span and how to run work inside it (its context active, so spans made there nest). */
export interface JobSpan {
	readonly span: OtelApi.Span;
	set(info: Partial<JobSpanInfo> & { outcome?: string; count?: number }): void;
	/** Runs `fn` with this span as the active one. */
	within<T>(fn: () => T): T;
	fail(error: unknown): void;
	end(): void;
}

/**
 * Starts a span for one operation on jobs, the caller's active span as its
 * parent; null when `@opentelemetry/api` is absent (or still loading).
 *
 * @internal
 * @example
 * ```ts
 * const span = startJobSpan('run', { id, kind, attempt, table: 'jobs' });
 * try { await span?.within(() => handler.run(ctx)); } finally { span?.end(); }
 * ```
 */
export function startJobSpan(op: SpanOperation, info: JobSpanInfo, startTime?: number): JobSpan | null {
	const api = ready;
	const tracer = api && registeredTracer(api);
	if (!tracer) return null;
	const span = tracer.startSpan(
		`${op} ${info.table}`,
		{
			kind: spanKind(api, op),
			attributes: { ...jobAttributes(info), [ATTR.operationType]: OPERATION_TYPE[op], [ATTR.operationName]: op },
			...(startTime !== undefined ? { startTime } : {}),
		},
		api.context.active(),
	);
	const active = api.trace.setSpan(api.context.active(), span);
	return {
		span,
		set(more) {
			span.setAttributes(jobAttributes({ table: info.table, ...more }));
			if (more.outcome !== undefined) span.setAttribute(ATTR.outcome, more.outcome);
			if (more.count !== undefined) span.setAttribute(ATTR.batchCount, more.count);
		},
		within: (fn) => api.context.with(active, fn),
		fail(error) {
			if (error instanceof Error) span.recordException(error);
			span.setStatus({
				code: api.SpanStatusCode.ERROR,
				message: error instanceof Error ? error.message : String(error),
			});
		},
		end: () => span.end(),
	};
}

/**
 * Runs `work` inside a span for `op` (ended when it settles, marked as an
 * error when it throws); just runs it when tracing is absent.
 *
 * @internal
 * @example
 * ```ts
 * const job = await traced('enqueue', { kind, table }, () => calls.one('job_enqueue', args), (s, j) => s.set({ id: j.id }));
 * ```
 */
export async function traced<T>(
	op: SpanOperation,
	info: JobSpanInfo,
	work: () => Promise<T>,
	after?: (span: JobSpan, value: T) => void,
): Promise<T> {
	if (ready === undefined) await loadTracing();
	const span = startJobSpan(op, info);
	if (!span) return await work();
	try {
		const value = await span.within(work);
		after?.(span, value);
		return value;
	} catch (e) {
		span.fail(e);
		throw e;
	} finally {
		span.end();
	}
}
