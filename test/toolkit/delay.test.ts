import { describe, expect, it } from 'vitest';
import { delay } from '../../src/lib/toolkit/delay.ts';

describe('delay: waiting that honours cancellation', () => {
	it('resolves after the time when nothing aborts', async () => {
		const started = performance.now();
		await delay(20);
		expect(performance.now() - started).toBeGreaterThanOrEqual(19);
	});

	it('rejects with the signal reason as soon as it aborts, long before the time', async () => {
		const controller = new AbortController();
		const waiting = delay(60_000, controller.signal);
		const reason = new Error('cancelled by the user');
		controller.abort(reason);
		await expect(waiting).rejects.toBe(reason);
	});

	it('rejects at once when the signal already aborted', async () => {
		await expect(delay(60_000, AbortSignal.abort('gone'))).rejects.toBe('gone');
	});
});
