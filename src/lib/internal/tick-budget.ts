/**
 * What a runner's progress ticks cost in Realtime messages, and the pace that
 * keeps them within the project's plan. Hosted Realtime counts every message
 * a project sends and every delivery of it to every channel joined on its
 * topic; a Free project may send 100 a second (averaged over a minute), and
 * over that it drops database broadcasts and shuts the receiving channels
 * down. A tick with a visible change is one message on its job's topic, so:
 *
 *     messages/s = running jobs × (1 + viewers per topic) × 1000 / tick gap (ms)
 *
 * The runner holds its ticks to TICK_SHARE of the budget, leaving the rest to
 * the status changes (enqueue, claim, close), which are never held back: the
 * gap between two progress messages of one job is at least
 *
 *     floor (ms) = running × (1 + viewers) × 1000 / (TICK_SHARE × messagesPerSecond)
 *
 * e.g. 200 running jobs with 5 viewers each on the Free plan: 200 × 6 × 1000 / 50 = 24 s.
 */

/** The Free plan's Realtime message rate, per second. */
export const FREE_PLAN_MESSAGES_PER_SECOND = 100;

/** The share of the message budget progress ticks may use; status changes have the rest. */
export const TICK_SHARE = 0.5;

/** The project's Realtime plan as the runner paces its ticks by it. */
export interface RealtimeBudget {
	/** The plan's message rate (Free: 100, Pro: 500). */
	messagesPerSecond: number;
	/** Channels joined on a job's topic (a user's open tabs and dashboards); each delivery counts. */
	viewersPerTopic: number;
}

/** The Free plan, one viewer per topic (an owner's one open tab); TICK_SHARE leaves room for a second. */
export const DEFAULT_REALTIME_BUDGET: RealtimeBudget = {
	messagesPerSecond: FREE_PLAN_MESSAGES_PER_SECOND,
	viewersPerTopic: 1,
};

/**
 * The budget a runner was given, checked: `false` turns pacing off.
 *
 * @internal
 */
export function resolveRealtimeBudget(given: Partial<RealtimeBudget> | false | undefined): RealtimeBudget | null {
	if (given === false) return null;
	const budget = { ...DEFAULT_REALTIME_BUDGET, ...given };
	if (!(
		typeof budget.messagesPerSecond === 'number' &&
		Number.isFinite(budget.messagesPerSecond) &&
		budget.messagesPerSecond > 0
	))
		throw new RangeError(
			`realtimeBudget.messagesPerSecond must be a finite number above 0; got ${String(budget.messagesPerSecond)}`,
		);
	if (!(Number.isInteger(budget.viewersPerTopic) && budget.viewersPerTopic >= 0))
		throw new RangeError(
			`realtimeBudget.viewersPerTopic must be an integer of at least 0; got ${String(budget.viewersPerTopic)}`,
		);
	return budget;
}

/**
 * Messages per second that `running` jobs cost when each sends a progress
 * message every `tickMs` to `viewers` channels: the formula above.
 *
 * @example
 * ```ts
 * tickMessagesPerSecond(100, 1000, 1); // 200: twice the Free plan's rate
 * ```
 */
export function tickMessagesPerSecond(running: number, tickMs: number, viewers: number): number {
	return (running * (1 + viewers) * 1000) / tickMs;
}

/**
 * The shortest gap (ms) between two progress messages of one job that keeps
 * `running` jobs' ticks within TICK_SHARE of the budget.
 *
 * @example
 * ```ts
 * tickFloorMs(200, { messagesPerSecond: 100, viewersPerTopic: 5 }); // 24000
 * ```
 */
export function tickFloorMs(running: number, budget: RealtimeBudget): number {
	return (running * (1 + budget.viewersPerTopic) * 1000) / (TICK_SHARE * budget.messagesPerSecond);
}
