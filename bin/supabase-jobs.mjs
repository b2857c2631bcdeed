#!/usr/bin/env node
// The `supabase-jobs` command. Plain JavaScript on purpose: a published bin
// must run with nothing but Node (tsx is only a devDependency here).
import { runInit } from './init.mjs';

const [command, ...args] = process.argv.slice(2);

const usage = `Usage: npx supabase-jobs init|upgrade [--cwd <project dir>]

  init      Adds supabase-jobs to an existing Supabase project: its migrations
            (fresh timestamps) in supabase/migrations, the jobs-worker function
            (kinds.ts and handlers.ts to fill in, deno.json pinning this
            version) and the [functions.jobs-worker] entry in
            supabase/config.toml. Never overwrites a file.
  upgrade   After installing a newer supabase-jobs: adds only the migrations the
            project lacks (fresh timestamps, after its latest; applied ones are
            never touched) and moves the function's pin to this version.
            (init on an initialised project does the same.)`;

if (command === 'init' || command === 'upgrade') {
	const at = args.indexOf('--cwd');
	const cwd = at >= 0 && args[at + 1] ? args[at + 1] : process.cwd();
	process.exitCode = await runInit({ cwd, command });
} else {
	console.log(usage);
	process.exitCode = command === undefined || command === '--help' || command === '-h' ? 0 : 2;
}
