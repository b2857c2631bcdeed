/**
 * The one rule watchers use to drop a state that arrives late: a row whose
 * `updated_at` is earlier than the one already shown is an older state of
 * the job (the database stamps updated_at in commit order, see migration
 * 20261202090000_worker_eta). A terminal state is never dropped:
 * nothing can follow it, so whatever its clock says it is the last word, and
 * dropping it would leave a screen saying "running" for ever.
 */
import { isTerminalStatus, type JobStatusValue } from '../state.ts';

type Stamped = { status: JobStatusValue; updatedAt: Date };

/**
 * True when `next` is older than `shown` and must not replace it.
 *
 * @internal
 * @example
 * ```ts
 * if (isOlderState(summary, current)) continue;
 * ```
 */
export function isOlderState(next: Stamped, shown: Pick<Stamped, 'updatedAt'>): boolean {
	return next.updatedAt.getTime() < shown.updatedAt.getTime() && !isTerminalStatus(next.status);
}
