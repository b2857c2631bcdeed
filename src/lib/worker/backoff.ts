/**
 * How long a job waits before its next attempt after an unexpected failure.
 */

/**
 * Retry delays: `baseSeconds * 2^(attempt - 1)`, capped at `maxSeconds`.
 */
export interface RetryBackoff {
	/** Delay after the first failed attempt. @default 2 */
	baseSeconds?: number;
	/** The longest delay. @default 300 */
	maxSeconds?: number;
}

/**
 * The delay before the attempt after `attempt` (1-based) failed unexpectedly.
 *
 * @example
 * ```ts
 * retryDelaySeconds(1); // 2
 * retryDelaySeconds(3, { baseSeconds: 1 }); // 4
 * retryDelaySeconds(20); // 300
 * ```
 */
export function retryDelaySeconds(attempt: number, backoff: RetryBackoff = {}): number {
	const base = backoff.baseSeconds ?? 2;
	const max = backoff.maxSeconds ?? 300;
	if (!(Number.isFinite(base) && base >= 0)) throw new RangeError(`baseSeconds must be >= 0; got ${String(base)}`);
	if (!(Number.isFinite(max) && max >= 0)) throw new RangeError(`maxSeconds must be >= 0; got ${String(max)}`);
	const exponent = Math.max(0, Math.min(attempt - 1, 30));
	return Math.min(max, base * 2 ** exponent);
}
