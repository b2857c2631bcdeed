/**
 * The status a stage column holds. NULL (no value) means the stage never ran:
 * there is no "pending" because a stage exists only once something started it.
 *
 * @example
 * STAGES.mark(doc, 'summary', StageStatus.RUNNING);
 */
export const StageStatus = {
	RUNNING: 'running',
	DONE: 'done',
	FAILED: 'failed',
	CANCELLED: 'cancelled',
} as const;

/**
 * One of {@link StageStatus}'s values.
 */
export type StageStatusValue = (typeof StageStatus)[keyof typeof StageStatus];

/**
 * Statuses a stage does not leave by itself; cancelling one of these is ignored.
 *
 * @example
 * if (TERMINAL_STAGE_STATUSES.includes(STAGES.status(doc, 'summary'))) showResult();
 */
export const TERMINAL_STAGE_STATUSES: readonly (StageStatusValue | null)[] = Object.freeze([
	StageStatus.DONE,
	StageStatus.FAILED,
	StageStatus.CANCELLED,
]);
