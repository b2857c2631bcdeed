/**
 * Progress is written in steps of 0.1 percent: one pixel of a 1000-pixel bar.
 * A finer step is invisible and would only turn every tick into a write.
 * Floor, not round: rounding up could touch a ceiling the estimate must not reach.
 */
export const PROGRESS_STEP = 0.1;
const STEPS_PER_PERCENT = 10;

export function quantize(percent: number): number {
	const clamped = Math.min(100, Math.max(0, percent));
	// The epsilon keeps 0.3 (2.9999…96 steps in binary) from flooring to 0.2.
	return Math.floor(clamped * STEPS_PER_PERCENT + 1e-9) / STEPS_PER_PERCENT;
}

/** Share of a phase's span an estimate may fill: only the work finishing may say it is done. */
export const ESTIMATE_CEILING = 0.95;

export function interpolate(span: { start: number; end: number }, elapsedMs: number, expectedMs: number): number {
	const fraction = expectedMs > 0 ? Math.min(ESTIMATE_CEILING, Math.max(0, elapsedMs / expectedMs)) : ESTIMATE_CEILING;
	return span.start + (span.end - span.start) * fraction;
}
