/**
 * JobStore: the whole job API over the job_* SQL functions, through any
 * {@link JobAdapter}. Every call is its own unit of work — a handler that
 * enqueues, a worker that grinds for minutes and a screen polling every couple
 * of seconds never share a connection or a transaction. The methods are
 * grouped by who calls them; each group lives in its own module (producer,
 * worker-writes, screen-reads, watch-jobs, operator), all checking input
 * through input-checks. The facade's methods, with the JSDoc users read, are
 * layered by audience: job-store-base (fields, constructor) <- job-store-producer
 * <- job-store-worker <- job-store-screen <- job-store-operator <- JobStore.
 */
import type { Job, JobParams } from './job.ts';
import { OperatorCalls } from './job-store-operator.ts';

export type * from './store-options.ts';
export type { AnswerOptions, AnswerSchema, AskInput, AskResult, AskedQuestion, ReplayFilter } from './questions.ts';
export type { JobStreamChunk, JobStreamRead, WatchStreamsOptions } from './job-streams.ts';

/**
 * Long work with a status: a row the interface reads, written only through
 * the job_* SQL functions. `P` is the params type of the jobs this store
 * handles; `R` the row type it hands back, `Job<P>` unless narrowed.
 *
 * @example
 * const store = new JobStore(postgresAdapter(sql), { staleAfterMs: 300_000 });
 * const job = await store.enqueue('extract', { params: { filename: file.name } }); // the route
 * const claimed = await store.claim(job.id); // the worker, then store.succeed(claimed.id)
 * for await (const j of store.watch(job.id, { emitOn: ['status', 'progress'] })) render(j); // the screen
 */
export class JobStore<P extends JobParams = JobParams, R extends Job<P> = Job<P>> extends OperatorCalls<P, R> {}
