/**
 * When a watcher calls a running job's worker silent: 2.5 declared beats
 * after its last sign of life, timed by the database and placed on the
 * watcher's clock. A watcher's own clock is driven by hand here.
 */
import { describe, expect, it } from 'vitest';
import { Liveness, SILENT_AFTER_BEATS } from '../../src/lib/internal/liveness.ts';
import type { Job } from '../../src/lib/store/job.ts';

const BEAT = 5000;
/** The database's clock: an hour ahead of the watcher's, which must not matter. */
const DB_AHEAD = 3_600_000;

function watcher() {
	let now = 1_000_000;
	const liveness = new Liveness(() => now);
	return {
		liveness,
		/** Moves the watcher's clock to `t` ms after its start. */
		at(t: number) {
			now = 1_000_000 + t;
		},
		/** A running row as the database stamps it `t` ms after the watcher's start. */
		row(updated: number, heartbeat: number | null = updated, extra: Partial<Job> = {}): Job {
			return {
				status: 'running',
				attempts: 1,
				heartbeatMs: BEAT,
				updatedAt: new Date(1_000_000 + DB_AHEAD + updated),
				heartbeatAt: heartbeat === null ? null : new Date(1_000_000 + DB_AHEAD + heartbeat),
				workerSilent: false,
				...extra,
			} as Job;
		},
	};
}

describe('a watcher calls the worker silent 2.5 declared beats after its last sign of life', () => {
	it('a message at the kill, then a read at 2.5 beats bringing the same last beat: silent then, not 2.5 beats later', () => {
		const w = watcher();
		// The worker's last tick (progress and heartbeat) arrives as a message 30 ms after it was written.
		w.at(30);
		expect(w.liveness.judge(w.row(0, null)).workerSilent).toBe(false);
		const due = w.liveness.silentAt(w.row(0, null));
		expect(due - 1_000_000).toBe(30 + BEAT * SILENT_AFTER_BEATS);
		// The read made when the silence is due brings the heartbeat that tick wrote: no news.
		w.at(due - 1_000_000);
		expect(w.liveness.judge(w.row(0, 0)).workerSilent).toBe(true);
	});

	it('a heartbeat only a read shows counts from when it was written, not from the read', () => {
		const w = watcher();
		w.at(10);
		w.liveness.judge(w.row(0));
		// A heartbeat-only tick at 4 s sends no message; the read at 12.51 s finds it.
		w.at(12_510);
		const read = w.liveness.judge(w.row(4000, 4000));
		expect(read.workerSilent).toBe(false);
		expect(w.liveness.silentAt(read) - 1_000_000).toBe(4000 + 10 + BEAT * SILENT_AFTER_BEATS);
	});

	it('a worker that keeps beating is never called silent', () => {
		const w = watcher();
		for (let t = 0; t <= 60_000; t += BEAT) {
			w.at(t + 20);
			expect(w.liveness.judge(w.row(t)).workerSilent).toBe(false);
		}
	});

	it('the first row read sets the count from the moment it arrived, however old its beat', () => {
		const w = watcher();
		// Opened 10 s after the last beat: nothing tells the watcher how far apart the clocks are.
		w.at(10_000);
		const first = w.liveness.judge(w.row(0));
		expect(first.workerSilent).toBe(false);
		expect(w.liveness.silentAt(first) - 1_000_000).toBe(10_000 + BEAT * SILENT_AFTER_BEATS);
	});

	it('a job claimed without a declared beat, or not running, is never silent', () => {
		const w = watcher();
		w.at(0);
		w.liveness.judge(w.row(0, 0, { heartbeatMs: null }));
		w.at(3_600_000);
		expect(w.liveness.judge(w.row(0, 0, { heartbeatMs: null })).workerSilent).toBe(false);
		expect(w.liveness.judge(w.row(0, 0, { status: 'queued' })).workerSilent).toBe(false);
	});
});
