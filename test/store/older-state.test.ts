/**
 * The rule every watcher applies to a state that arrives late (a watch
 * ends on the terminal state): older states are dropped, the
 * terminal state never is.
 */
import { describe, expect, it } from 'vitest';
import { isOlderState } from '../../src/lib/internal/older-state.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 11, 1, 5, 0, 0, ms));

describe('watch: states arriving out of order', () => {
	it('a running state stamped before the one shown is dropped; one stamped at or after it is kept', () => {
		expect(isOlderState({ status: 'running', updatedAt: at(10) }, { updatedAt: at(11) })).toBe(true);
		expect(isOlderState({ status: 'running', updatedAt: at(11) }, { updatedAt: at(11) })).toBe(false);
		expect(isOlderState({ status: 'queued', updatedAt: at(12) }, { updatedAt: at(11) })).toBe(false);
	});

	it('a terminal state is kept whatever its stamp says', () => {
		for (const status of ['done', 'failed', 'cancelled'] as const)
			expect(isOlderState({ status, updatedAt: at(1) }, { updatedAt: at(500) })).toBe(false);
	});
});
