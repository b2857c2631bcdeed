#!/usr/bin/env node
// First step of `npm test`: what the tests need that npm cannot bring. The
// browser tests drive Debian's chromium; the pg_cron test runs Debian's
// PostgreSQL 15 with postgresql-15-cron. When one is missing, this installs it
// (as root, with apt-get), or stops at once naming the exact packages, so a
// fresh machine never gets as far as a skipped test. Plain Node: it runs
// before anything else is known to work.
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { provideNodes } from './nodes.mjs';

/** Each Debian package, with the files whose absence means it is missing. */
const NEEDS = [
	{ pkg: 'chromium', files: [process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'] },
	{ pkg: 'postgresql-15', files: ['/usr/lib/postgresql/15/bin/postgres', '/usr/lib/postgresql/15/bin/initdb'] },
	{
		pkg: 'postgresql-15-cron',
		files: ['/usr/lib/postgresql/15/lib/pg_cron.so', '/usr/share/postgresql/15/extension/pg_cron.control'],
	},
];

function present(file) {
	try {
		accessSync(file, constants.R_OK);
		return true;
	} catch {
		return false;
	}
}

const missing = () => NEEDS.filter((n) => !n.files.every(present)).map((n) => n.pkg);

function canApt() {
	if (process.getuid?.() !== 0) return false;
	try {
		execFileSync('apt-get', ['--version'], { stdio: 'ignore' });
		return true;
	} catch {
		return false;
	}
}

provideNodes();

const needed = missing();
if (needed.length === 0) process.exit(0);

const command = `apt-get install -y --no-install-recommends ${needed.join(' ')}`;
if (!canApt()) {
	console.error(
		`npm test needs Debian packages that npm cannot install: ${needed.join(', ')}.\n` +
			`Install them (as root) with:\n  apt-get update && ${command}\n` +
			`(postgresql-15 is Debian 12's PostgreSQL; elsewhere add the PGDG apt repository first.)`,
	);
	process.exit(1);
}
console.log(`provision: ${command}`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...needed], { stdio: 'inherit', env });
const still = missing();
if (still.length) {
	console.error(`provision: installed, yet still missing: ${still.join(', ')}`);
	process.exit(1);
}
