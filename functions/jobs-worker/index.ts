/**
 * jobs-worker: the edge function that runs queued jobs. The kick (pg_net from
 * the insert trigger, or the cron backstop) POSTs `{ job_id, job_table, kind }`
 * with `Authorization: Bearer <JOBS_WORKER_SECRET>`; the worker answers 202 and
 * works in the background. Deploy with verify_jwt = false (it checks its own
 * secret). Runs unchanged under `deno run -A` for local use (PORT picks the port).
 */
import { handlers } from './handlers.ts';
import { serveWorker } from './serve.ts';

serveWorker(handlers);
