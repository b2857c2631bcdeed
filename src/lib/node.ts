/**
 * `supabase-jobs/node`: what only runs on Node (it uses node: modules), kept out
 * of the main entry so Deno edge functions never load it.
 */
export { runWorkers } from './worker/node-runner.ts';
export type { RunWorkersOptions, StopOptions, WorkerRunner } from './worker/node-runner.ts';
