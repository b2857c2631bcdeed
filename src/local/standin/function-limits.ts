/**
 * The limits hosted Supabase Edge Functions run under, and how the local
 * gateway measures them.
 *
 * Hosted values (supabase.com/docs/guides/functions/limits): an isolate lives
 * at most its wall clock — 150 s on the Free plan, 400 s on paid plans —
 * counted from its start and covering every request and background task it
 * serves; a request may use 2 s of CPU time (async I/O not counted). At a
 * limit the edge runtime's supervisor terminates the isolate mid-await (no
 * `finally` runs): supabase/edge-runtime
 * crates/base/src/worker/supervisor/strategy_per_worker.rs ends it with
 * `ShutdownReason::WallClockTime` or `CPUTime`, after retiring it (no new
 * requests) at half its wall clock. A request still waiting for its answer
 * then gets 546 with `sb-error-code: WORKER_RESOURCE_LIMIT` (formerly
 * `WORKER_LIMIT`; supabase/supabase apps/docs/content/guides/functions/error-codes.mdx).
 */
import { readFile } from 'node:fs/promises';

/** What the gateway enforces per function. Infinity turns a limit off. */
export interface FunctionLimits {
	/** An isolate's life from its start, in ms: 150_000 on Free, 400_000 on paid plans. */
	wallClockMs: number;
	/** CPU time one request may use, in ms: 2_000 on every plan. */
	cpuMs: number;
}

/** Hosted Supabase, per plan. */
export const HOSTED_FUNCTION_LIMITS = {
	free: { wallClockMs: 150_000, cpuMs: 2_000 },
	paid: { wallClockMs: 400_000, cpuMs: 2_000 },
} as const satisfies Record<string, FunctionLimits>;

/** The status and body the hosted gateway answers a request whose isolate was killed at a limit. */
export const WORKER_RESOURCE_LIMIT = {
	status: 546,
	code: 'WORKER_RESOURCE_LIMIT',
	message: 'Function failed due to not having enough compute resources (please check logs)',
} as const;

/**
 * Checks limits given by a caller (a typed error naming the field).
 *
 * @example
 * checkLimits({ wallClockMs: 8000, cpuMs: 2000 });
 */
export function checkLimits(limits: FunctionLimits): FunctionLimits {
	for (const field of ['wallClockMs', 'cpuMs'] as const) {
		const value = limits[field];
		if (typeof value !== 'number' || !(value > 0))
			throw new RangeError(
				`function limits: ${field} must be a positive number of ms (Infinity: off); got ${String(value)}`,
			);
	}
	return limits;
}

/** Linux reports a process's CPU in clock ticks of 1/USER_HZ s; USER_HZ is 100 on every Linux ABI Node runs on. */
const TICK_MS = 10;

/**
 * CPU time (user + system, all threads) a live process has used so far, in
 * ms, from /proc/<pid>/stat; null once it is gone. Resolution: 10 ms.
 *
 * @example
 * const before = await processCpuMs(child.pid!);
 */
export async function processCpuMs(pid: number): Promise<number | null> {
	let stat: string;
	try {
		stat = await readFile(`/proc/${pid}/stat`, 'utf8');
	} catch {
		return null;
	}
	// Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	const utime = Number(fields[11]);
	const stime = Number(fields[12]);
	return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) * TICK_MS : null;
}
