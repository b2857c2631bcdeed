#!/usr/bin/env node
// The `supabase-jobs` command. Plain JavaScript on purpose: a published bin
// must run with nothing but Node (tsx is only a devDependency here).
import { parseArgs } from 'node:util';
import { runInit } from './init.mjs';

const [command, ...args] = process.argv.slice(2);

const usage = `Usage: npx supabase-jobs init|upgrade [--cwd <project dir>]
       npx supabase-jobs doctor [--db-url <connection string>] [--function-url <url>] [--cwd <project dir>] [--kinds <kinds.ts>]

  init      Adds supabase-jobs to an existing Supabase project: its migrations
            (fresh timestamps) in supabase/migrations, one that enables pg_net
            and pg_cron and installs the schedules, one that registers the
            kinds of the kinds.ts it writes, the jobs-worker function (kinds.ts
            and handlers.ts to fill in, deno.json pinning this version) and the
            [functions.jobs-worker] entry appended to supabase/config.toml.
            Writes only files that do not exist; the one edit of an existing
            file is that config.toml entry, appended when absent.
  upgrade   After installing a newer supabase-jobs: adds only the migrations the
            project lacks (fresh timestamps, after its latest; applied ones are
            never touched) and moves the supabase-jobs pin in the function's
            deno.json to this version (that value only; the rest of the file
            stays as it is). (init on an initialised project does the same.)
  doctor    Checks the project's database (--db-url or SUPABASE_DB_URL) and its
            worker function (the URL in Vault, or --function-url): migrations of
            this version, pg_net, pg_cron, the schedules, the two Vault secrets
            (names only), the function's 401 without the secret and 202 to a
            signed wake-up, the kinds of kinds.ts registered, the Realtime
            policies. One line per check, each failure with its fix; exits 1
            unless every check passed.`;

if (command === 'init' || command === 'upgrade' || command === 'doctor') {
	/** @type {{ cwd?: string; 'db-url'?: string; 'function-url'?: string; kinds?: string }} */
	let values = {};
	try {
		({ values } = parseArgs({
			args,
			options: {
				cwd: { type: 'string' },
				'db-url': { type: 'string' },
				'function-url': { type: 'string' },
				kinds: { type: 'string' },
			},
		}));
		const doctorOnly = ['db-url', 'function-url', 'kinds'].filter((o) => o in values);
		if (command !== 'doctor' && doctorOnly.length) throw new Error(`--${doctorOnly[0]} is an option of doctor`);
	} catch (e) {
		console.log(`supabase-jobs ${command}: ${e instanceof Error ? e.message : String(e)}\n\n${usage}`);
		process.exit(2);
	}
	const cwd = values.cwd ?? process.cwd();
	if (command === 'doctor') {
		const { runDoctor } = await import('./doctor.mjs');
		process.exitCode = await runDoctor({
			cwd,
			dbUrl: values['db-url'] ?? null,
			functionUrl: values['function-url'] ?? null,
			kinds: values.kinds ?? null,
		});
	} else {
		process.exitCode = await runInit({ cwd, command });
	}
} else {
	console.log(usage);
	process.exitCode = command === undefined || command === '--help' || command === '-h' ? 0 : 2;
}
