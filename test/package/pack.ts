/**
 * `npm pack` of the repository into a folder, for the tests that install the
 * package as a user gets it. Packing builds dist/ in the repository
 * (prepack), so two test files packing at once would write it together: each
 * pack holds an exclusive lock (flock(1) on a file in the temp folder) for its
 * duration, and the next waits on the kernel, not on a timer.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const LOCK = join(tmpdir(), 'supabase-jobs-npm-pack.lock');

/**
 * Packs the repository into `destination`; the tarball's path.
 *
 * @example
 * const tarball = await packInto(work);
 */
export async function packInto(destination: string, repo = resolve('.')): Promise<string> {
	try {
		const { stdout } = await exec('flock', [LOCK, 'npm', 'pack', '--silent', '--pack-destination', destination], {
			cwd: repo,
			maxBuffer: 64 << 20,
		});
		return join(destination, stdout.trim().split('\n').at(-1)!);
	} catch (e) {
		const { stdout, stderr } = e as { stdout?: string; stderr?: string };
		throw new Error(`npm pack failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: e });
	}
}
