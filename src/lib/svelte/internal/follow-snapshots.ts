/**
 * The loop behind WatchedJob's watch: takes each snapshot a source yields
 * until the job ends, the source ends or the signal aborts, and says which.
 *
 * @internal
 */
import type { JobSnapshot } from '../types.ts';

const ABORTED = Symbol('aborted');

/** @internal How the loop ended: the job ended (or the watch was stopped), or the source ended first. */
export type FollowEnd = 'ended' | 'source ended';

/**
 * Reads `snapshots` into `apply` until `ended()` after a snapshot (terminal is
 * the end, whether or not the source says so), the source ends, or `signal`
 * aborts. Raced against the signal so a stop closes the watch even when a
 * source ignores its signal while waiting; leaving early lets the source
 * release what it holds. A source's error is thrown.
 */
export async function followSnapshots(
	snapshots: AsyncIterable<JobSnapshot>,
	signal: AbortSignal,
	apply: (snapshot: JobSnapshot) => void,
	ended: () => boolean,
): Promise<FollowEnd> {
	const aborted = new Promise<typeof ABORTED>((resolve) => {
		signal.addEventListener('abort', () => resolve(ABORTED), { once: true });
	});
	let iterator: AsyncIterator<JobSnapshot> | null = null;
	try {
		iterator = snapshots[Symbol.asyncIterator]();
		for (;;) {
			const step = await Promise.race([iterator.next(), aborted]);
			if (step === ABORTED || signal.aborted) return 'ended';
			if (step.done) {
				iterator = null;
				return ended() ? 'ended' : 'source ended';
			}
			apply(step.value);
			if (ended()) return 'ended';
		}
	} catch (error) {
		iterator = null;
		throw error;
	} finally {
		if (iterator?.return) iterator.return().catch(() => {});
	}
}
