/**
 * The "model call stand-in": a wait per chunk where a real app would call an
 * LLM (summarise this chunk, classify it...). The demo's analysis is fast
 * arithmetic; without this the bar would jump from 0 to 100 and show nothing.
 * It honours the AbortSignal exactly as a fetch to a model would, so a cancel
 * stops it mid-wait. Length: DEMO_MODEL_MS (default {@link DEFAULT_MODEL_MS}).
 */
import { delay } from 'supabase-jobs/worker';

/** Milliseconds per chunk when DEMO_MODEL_MS is not set. */
export const DEFAULT_MODEL_MS = 300;

/**
 * Parses DEMO_MODEL_MS: a non-negative number of milliseconds, else the default.
 *
 * @example
 * modelDelayMs('50'); // 50
 * modelDelayMs(undefined); // 300
 */
export function modelDelayMs(value: string | undefined): number {
	if (value === undefined || value.trim() === '') return DEFAULT_MODEL_MS;
	const n = Number(value);
	if (!Number.isFinite(n) || n < 0)
		throw new RangeError(`DEMO_MODEL_MS must be a number of milliseconds >= 0; got ${value}`);
	return n;
}

/**
 * Waits `ms`, rejecting with the signal's reason as soon as it aborts.
 *
 * @example
 * await modelCallStandIn(300, signal);
 */
export function modelCallStandIn(ms: number, signal: AbortSignal): Promise<void> {
	return delay(ms, signal);
}
