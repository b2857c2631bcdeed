/**
 * A parent job's children as a WatchedJob shows them: oldest first, each one
 * taking its snapshots by the same rule as the parent (mergeSnapshot).
 *
 * @internal
 */
import { isTerminalStatus } from '../../state.ts';
import { mergeSnapshot } from './merge-snapshot.ts';
import type { JobSnapshot, JobWatchSource } from '../types.ts';

/** @internal What the children loop reads of the parent it follows. */
export interface ParentWatch {
	/** The watch is still on this parent (not retargeted to another job). */
	current(): boolean;
	/** The parent ended: the loop stops once every child has too. */
	ended(): boolean;
}

/** @internal */
export class ChildSnapshots {
	#list = $state.raw<readonly JobSnapshot[]>([]);

	/** The children as last seen, oldest first. */
	get list(): readonly JobSnapshot[] {
		return this.#list;
	}

	reset(): void {
		this.#list = [];
	}

	/**
	 * Follows the children until `signal` aborts, the watch leaves this
	 * parent, or the parent and every child ended; rejects with what the
	 * source throws.
	 */
	async follow(source: JobWatchSource, id: string, signal: AbortSignal, parent: ParentWatch): Promise<void> {
		if (!source.watchChildren) return;
		const own = new AbortController();
		const stop = () => own.abort();
		signal.addEventListener('abort', stop, { once: true });
		try {
			for await (const list of source.watchChildren(id, { signal: own.signal })) {
				if (signal.aborted || !parent.current()) break;
				this.#list = list.map((child) => {
					const before = this.#list.find((c) => c.id === child.id);
					return mergeSnapshot(before ?? null, child) ?? before ?? child;
				});
				if (parent.ended() && list.every((c) => isTerminalStatus(c.status))) break;
			}
		} finally {
			signal.removeEventListener('abort', stop);
			own.abort();
		}
	}
}
