/**
 * Progress is written in steps of 0.1 percent: one pixel of a 1000-pixel bar.
 * A finer step is invisible and would only turn every tick into a write.
 * Floor, not round: rounding up could touch a ceiling the estimate must not reach.
 *
 * @example
 * quantize(12.345); // 12.3, a multiple of PROGRESS_STEP
 */
export const PROGRESS_STEP = 0.1;
const STEPS_PER_PERCENT = 10;

/**
 * Clamps to 0..100 and floors to the 0.1 step.
 *
 * @example
 * quantize(96.25); // 96.2: floored, never rounded up to a ceiling
 */
export function quantize(percent: number): number {
	const clamped = Math.min(100, Math.max(0, percent));
	// The epsilon keeps 0.3 (2.9999…96 steps in binary) from flooring to 0.2.
	return Math.floor(clamped * STEPS_PER_PERCENT + 1e-9) / STEPS_PER_PERCENT;
}

/**
 * Share of a phase's span an estimate may fill: only the work finishing may say it is done.
 *
 * @example
 * interpolate({ start: 0, end: 100 }, 60_000, 30_000); // 95, not 100
 */
export const ESTIMATE_CEILING = 0.95;

/**
 * Where an estimate puts a phase after `elapsedMs` of an expected `expectedMs`, capped at ESTIMATE_CEILING of its span.
 *
 * @example
 * interpolate({ start: 25, end: 100 }, 1000, 30_000); // 27.5
 */
export function interpolate(span: { start: number; end: number }, elapsedMs: number, expectedMs: number): number {
	const fraction = expectedMs > 0 ? Math.min(ESTIMATE_CEILING, Math.max(0, elapsedMs / expectedMs)) : ESTIMATE_CEILING;
	return span.start + (span.end - span.start) * fraction;
}
