#!/usr/bin/env node
// The `supabase-jobs` command. Plain JavaScript on purpose: a published bin
// must run with nothing but Node (tsx is only a devDependency here).
import { runInit } from './init.mjs';

const [command, ...args] = process.argv.slice(2);

const usage = `Usage: npx supabase-jobs init [--cwd <project dir>]

  init   Adds supabase-jobs to an existing Supabase project: its migrations
         (fresh timestamps) in supabase/migrations, the jobs-worker function
         and a handlers.ts to fill in, and the [functions.jobs-worker] entry
         in supabase/config.toml. Never overwrites a file.`;

if (command === 'init') {
	const at = args.indexOf('--cwd');
	const cwd = at >= 0 && args[at + 1] ? args[at + 1] : process.cwd();
	process.exitCode = await runInit({ cwd });
} else {
	console.log(usage);
	process.exitCode = command === undefined || command === '--help' || command === '-h' ? 0 : 2;
}
