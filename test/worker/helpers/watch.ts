/**
 * Following a job's row from a test: every frame store.watch yields
 * (status, progress, stage changes), until a predicate holds or the job ends.
 */
import type { Job } from '../../../src/lib/store/job.ts';
import type { JobStore } from '../../../src/lib/store/job-store.ts';

export interface Follow {
	frames: Job[];
	/** Resolves with the first frame satisfying `predicate` (already seen or still to come). */
	until(predicate: (job: Job) => boolean): Promise<Job>;
	/** Resolves with the terminal frame. */
	finished: Promise<Job>;
}

export function follow(store: JobStore, id: string, intervalMs = 25, timeoutMs = 30_000): Follow {
	const frames: Job[] = [];
	const waiters: { predicate: (job: Job) => boolean; resolve: (job: Job) => void; reject: (e: unknown) => void }[] = [];
	const finished = (async () => {
		for await (const job of store.watch(id, { intervalMs, emitOn: ['status', 'progress', 'stage'], timeoutMs })) {
			frames.push(job);
			for (const w of [...waiters]) {
				if (w.predicate(job)) {
					waiters.splice(waiters.indexOf(w), 1);
					w.resolve(job);
				}
			}
		}
		const last = frames.at(-1)!;
		for (const w of waiters.splice(0)) w.reject(new Error(`job ${id} ended ${last.status} before the awaited frame`));
		return last;
	})();
	finished.catch((e: unknown) => waiters.splice(0).forEach((w) => w.reject(e)));
	return {
		frames,
		finished,
		until(predicate) {
			const seen = frames.find(predicate);
			if (seen) return Promise.resolve(seen);
			return new Promise((resolve, reject) => waiters.push({ predicate, resolve, reject }));
		},
	};
}
