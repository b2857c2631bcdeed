/**
 * The signal a handler's `ctx.waitForChildren()` throws once the parent is
 * parked (`waiting`): the run ends there and the worker's slot is free. When
 * the last child ends the job is queued again and the handler runs anew,
 * where `ctx.waitForChildren()` then returns the children (the BullMQ
 * `WaitingChildrenError` idiom; a JavaScript run cannot be checkpointed).
 */

/**
 * Thrown by `ctx.waitForChildren()` when the job went to `waiting`. Let it
 * through: a `catch` in the handler must rethrow it (see {@link isWaitingForChildren}).
 *
 * @example
 * ```ts
 * try {
 *   await ctx.waitForChildren();
 * } catch (e) {
 *   if (isWaitingForChildren(e)) throw e;
 *   // ...
 * }
 * ```
 */
export class WaitingForChildren extends Error {
	constructor(jobId: string) {
		super(`job ${jobId} is waiting for its children; it runs again when the last one ends`);
		this.name = 'WaitingForChildren';
	}
}

/**
 * Whether `e` is the parking signal of `ctx.waitForChildren()`.
 *
 * @example
 * ```ts
 * if (isWaitingForChildren(e)) throw e;
 * ```
 */
export function isWaitingForChildren(e: unknown): e is WaitingForChildren {
	return e instanceof WaitingForChildren;
}
