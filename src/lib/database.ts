/**
 * The package's schema as a type, for supabase-js. The fact itself lives in
 * supabase/schemas (and the migration generated from it); src/lib/database.types.ts is what Supabase's generator
 * (postgres-meta) writes from them (`npm run gen:types`).
 */
import type { Database } from './database.types.ts';

/**
 * The tables, views, functions and enums of the `public` and `supabase_jobs`
 * schemas as the migrations define them: give it to `createClient` and
 * `rpc('job_*')` checks its arguments and types its rows. A project that runs
 * `supabase gen types typescript` over its own database gets these same
 * entries in its own file; this one is for code that talks to the job API alone.
 */
export type JobsDatabase = Database;
